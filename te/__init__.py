"""Tensor expressions: the compute templates of relay ops and the schedules of the heavy ones, which `lower-te` instantiates as TIR (see docs/architecture.md)."""
