"""Frontends: models from other frameworks as relay modules (`onnx`)."""
