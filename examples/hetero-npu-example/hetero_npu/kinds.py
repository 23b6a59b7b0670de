"""The `npu` target kind: an accelerator reached as DLPack's `ext_dev`."""

from hetero.dialects.target.kind import DeviceType, OptionSpec, TargetKind

NPU = TargetKind(
    "npu",
    DeviceType.ext_dev,
    {"cores": OptionSpec(int, default=1, choices=(1, 2, 4, 8), doc="NPU cores to use")},
    keys=("npu",),
    supports_calls=False,
    doc="the example NPU",
)
