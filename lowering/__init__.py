"""Lowering below TIR: conversion passes to the `llvm` dialect (see docs/lowering.md)."""
