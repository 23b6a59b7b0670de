"""Entry point for xDSL tools (hetero-opt, xdsl-opt): the dialect and the pass."""

from xdsl.universe import Universe


def _dialect():
    from hetero_npu.dialect import NPU_DIALECT

    return NPU_DIALECT


def _offload():
    from hetero_npu.offload import NpuOffloadPass

    return NpuOffloadPass


NPU_UNIVERSE = Universe(
    all_dialects={"npu": _dialect}, all_passes={"npu-offload": _offload}
)
