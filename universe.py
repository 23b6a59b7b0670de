"""hetero's `xdsl.universe` entry point: its dialects and passes, for any xDSL tool.

Factories import lazily so that `xdsl-opt` start-up stays cheap.
"""

from collections.abc import Callable
from importlib import import_module

from xdsl.universe import Universe

DIALECTS = {
    "target": ("hetero.dialects.target", "Target"),
    "relay": ("hetero.dialects.relay", "Relay"),
    "tir": ("hetero.dialects.tir", "TIR"),
}
"""Dialect name → (module, attribute)."""

PASSES: dict[str, tuple[str, str]] = {
    "inline": ("hetero.transforms.inline", "InlinePass"),
    "plan-devices": ("hetero.transforms.plan_devices", "PlanDevicesPass"),
    "alter-data-layout": ("hetero.transforms.alter_data_layout", "AlterDataLayoutPass"),
    "alter-op-layout": ("hetero.transforms.alter_op_layout", "AlterOpLayoutPass"),
    "fuse-ops": ("hetero.transforms.fuse_ops", "FuseOpsPass"),
    "lower-te": ("hetero.transforms.lower_te", "LowerTEPass"),
    "lower-aot-main": ("hetero.transforms.lower_aot_main", "LowerAotMainPass"),
    "plan-memory": ("hetero.transforms.plan_memory", "PlanMemoryPass"),
    "inplace-concatenate": (
        "hetero.transforms.inplace_concatenate",
        "InplaceConcatenatePass",
    ),
    "merge-kernels": ("hetero.lowering.merge_kernels", "MergeKernelsPass"),
    "specialize-shapes": (
        "hetero.transforms.specialize_shapes",
        "SpecializeShapesPass",
    ),
    "fold-constant": ("hetero.transforms.fold_constant", "FoldConstantPass"),
    "simplify-inference": (
        "hetero.transforms.simplify_inference",
        "SimplifyInferencePass",
    ),
    "simplify-activations": (
        "hetero.transforms.simplify_activations",
        "SimplifyActivationsPass",
    ),
    "trim-conv-taps": ("hetero.transforms.trim_conv_taps", "TrimConvTapsPass"),
    "fold-scale-axis": ("hetero.transforms.fold_scale_axis", "FoldScaleAxisPass"),
    "matmul-to-dense": ("hetero.transforms.matmul_to_dense", "MatmulToDensePass"),
    "verify-devices": ("hetero.transforms.verify_devices", "VerifyDevicesPass"),
    "merge-composite": ("hetero.transforms.merge_composite", "MergeCompositePass"),
    "annotate-target": ("hetero.transforms.annotate_target", "AnnotateTargetPass"),
    "merge-compiler-regions": (
        "hetero.transforms.merge_compiler_regions",
        "MergeCompilerRegionsPass",
    ),
    "partition-graph": ("hetero.transforms.partition_graph", "PartitionGraphPass"),
    "collage-partition": (
        "hetero.transforms.collage_partition",
        "CollagePartitionPass",
    ),
    "outline-compiler-functions": (
        "hetero.transforms.outline_compiler_functions",
        "OutlineCompilerFunctionsPass",
    ),
    "mark-compiler-functions-as-extern": (
        "hetero.transforms.mark_compiler_functions_as_extern",
        "MarkCompilerFunctionsAsExternPass",
    ),
    "inline-compiler-functions-bound-to": (
        "hetero.transforms.inline_compiler_functions_bound_to",
        "InlineCompilerFunctionsBoundToPass",
    ),
    "external-codegen": ("hetero.transforms.external_codegen", "ExternalCodegenPass"),
    "convert-arith-to-llvm": (
        "hetero.lowering.convert_arith_to_llvm",
        "ConvertArithToLLVMPass",
    ),
    "convert-math-to-llvm": (
        "hetero.lowering.convert_math_to_llvm",
        "ConvertMathToLLVMPass",
    ),
    "approximate-math": ("hetero.lowering.approximate_math", "ApproximateMathPass"),
    "convert-cf-to-llvm": ("hetero.lowering.convert_cf_to_llvm", "ConvertCfToLLVMPass"),
    "convert-func-to-llvm": (
        "hetero.lowering.convert_func_to_llvm",
        "ConvertFuncToLLVMPass",
    ),
    "convert-index-to-llvm": (
        "hetero.lowering.convert_index_to_llvm",
        "ConvertIndexToLLVMPass",
    ),
    "convert-vector-to-llvm": (
        "hetero.lowering.convert_vector_to_llvm",
        "ConvertVectorToLLVMPass",
    ),
    "convert-memref-to-llvm": (
        "hetero.lowering.convert_memref_to_llvm",
        "ConvertMemRefToLLVMPass",
    ),
    "convert-to-llvm": ("hetero.lowering.convert_to_llvm", "ConvertToLLVMPass"),
    "lower-to-llvm": ("hetero.lowering.pipeline", "LowerToLLVMPass"),
    "convert-tir-to-scf": ("hetero.lowering.convert_tir_to_scf", "ConvertTirToScfPass"),
    "bind-target": ("hetero.transforms.bind_target", "BindTargetPass"),
    "annotate-device-regions": (
        "hetero.transforms.annotate_device_regions",
        "AnnotateDeviceRegionsPass",
    ),
    "split-host-device": ("hetero.transforms.split_host_device", "SplitHostDevicePass"),
    "lower-device-kernel-launch": (
        "hetero.transforms.lower_device_kernel_launch",
        "LowerDeviceKernelLaunchPass",
    ),
    "inline-private-functions": (
        "hetero.transforms.inline_private_functions",
        "InlinePrivateFunctionsPass",
    ),
    "fold-device-call-results": (
        "hetero.transforms.fold_device_call_results",
        "FoldDeviceCallResultsPass",
    ),
    "convert-tir-to-gpu": ("hetero.lowering.convert_tir_to_gpu", "ConvertTirToGpuPass"),
    "convert-gpu-to-nvvm": (
        "hetero.lowering.convert_gpu_to_nvvm",
        "ConvertGpuToNVVMPass",
    ),
    "lower-gpu-launch": ("hetero.lowering.lower_gpu_launch", "LowerGpuLaunchPass"),
}
"""Pass name → (module, class); one module per pass under `hetero.transforms`."""

REPLACED_PASSES: dict[str, tuple[str, str]] = {
    "convert-scf-to-cf": ("hetero.lowering.convert_scf_to_cf", "ConvertScfToCfPass"),
    "reconcile-unrealized-casts": (
        "hetero.lowering.reconcile_unrealized_casts",
        "ReconcileUnrealizedCastsPass",
    ),
}
"""xDSL passes that hetero's tools replace by hetero's own of the same name.
Not in the universe: `xdsl-opt` would meet two passes of one name."""


def lazy(module: str, attr: str) -> Callable[[], object]:
    """A factory importing `module.attr` when called."""
    return lambda: getattr(import_module(module), attr)


HETERO_UNIVERSE = Universe(
    all_dialects={n: lazy(*d) for n, d in DIALECTS.items()},  # type: ignore[misc]
    all_passes={n: lazy(*p) for n, p in PASSES.items()},  # type: ignore[misc]
)
