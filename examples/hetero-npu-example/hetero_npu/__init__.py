"""An example hetero extension: a made-up NPU that scales tensors.

Everything here reaches hetero through entry points only (see pyproject.toml):
the `npu` dialect and the `npu-offload` pass through `xdsl.universe`, the
`npu` target kind through `hetero.target_kinds`.
"""
