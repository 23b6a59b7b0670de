"""TVM's target strings in hetero (hetero.dialects.target.target_string): TVM's
option spellings, kinds and tags keep their meaning, and what hetero cannot
honour is refused with what to write instead."""

import re
import warnings

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

import hetero
from hetero.dialects.target import TargetAttr
from hetero.dialects.target.target_string import (
    TARGET_TAGS,
    parse_target_list,
    parse_target_string,
)
from hetero.utils.diagnostics import HeteroWarning

LIMITS = {"max_threads_per_block": 1024, "max_shared_memory_per_block": 49152}
"""The limits every NVIDIA tag of TVM's gives."""


def _parse_quietly(text: str) -> TargetAttr:
    """Parse `text`, failing on any warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return parse_target_string(text)


@pytest.mark.parametrize(
    "text, kind, options",
    [
        # TVM's names of hetero's options
        ("llvm -num-cores=4", "llvm", {"num_threads": 4}),
        ("llvm -opt-level=2", "llvm", {"opt_level": 2}),
        (
            "llvm -mcpu=skylake-avx512 -mattr=+avx512f,+fma -opt-level=3",
            "llvm",
            {"mcpu": "skylake-avx512", "mattr": ["+avx512f", "+fma"], "opt_level": 3},
        ),
        ("llvm -mtriple=aarch64-linux-gnu", "llvm", {"mtriple": "aarch64-linux-gnu"}),
        ("cuda -arch=sm_80 -max_num_threads=512", "cuda", {"arch": "sm_80", "max_threads_per_block": 512}),
        ("cuda -mcpu=sm_86", "cuda", {"arch": "sm_86"}),
        # two spellings of one option agree
        ("cuda -max_num_threads=1024 -max_threads_per_block=1024", "cuda", {"max_threads_per_block": 1024}),
        # TVM's LLVM-NVPTX kind is hetero's cuda
        ("nvptx", "cuda", {}),
        ("nvptx -mcpu=sm_80 -mtriple=nvptx64-nvidia-cuda", "cuda", {"arch": "sm_80"}),
        ("nvptx -mcpu=sm_90a -max_num_threads=1024 -thread_warp_size=32", "cuda", {"arch": "sm_90a", "max_threads_per_block": 1024}),
        # what hetero always does is dropped without a word
        ("cuda -keys=cuda,gpu -thread_warp_size=32", "cuda", {}),
        ("llvm -keys=cpu -fast-math=0 -fast-math-nnan=false -link-params=1", "llvm", {}),
        # tags, and flags after a tag override it
        ("nvidia/nvidia-a100", "cuda", {"arch": "sm_80", **LIMITS}),
        ("nvidia/nvidia-h100", "cuda", {"arch": "sm_90a", **LIMITS}),
        ("nvidia/nvidia-h200", "cuda", {"arch": "sm_90a", **LIMITS}),
        ("nvidia/geforce-rtx-3090", "cuda", {"arch": "sm_86", **LIMITS}),
        ("nvidia/geforce-rtx-4090", "cuda", {"arch": "sm_89", **LIMITS}),
        ("nvidia/nvidia-v100", "cuda", {"arch": "sm_70", **LIMITS}),
        ("nvidia/nvidia-t4", "cuda", {"arch": "sm_75", **LIMITS}),
        ("nvidia/nvidia-a100 -max_num_threads=512", "cuda", {"arch": "sm_80", **LIMITS, "max_threads_per_block": 512}),
    ],
)  # fmt: skip
def test_tvm_spellings_are_accepted(
    text: str, kind: str, options: dict[str, object]
) -> None:
    target = _parse_quietly(text)
    assert (target.kind_name.data, target.options) == (kind, options)


def test_the_string_tvm_prints_for_a_tag_parses_to_the_tag() -> None:
    """`str(tvm.target.Target("nvidia/nvidia-a100"))`: everything hetero has no
    option for is what hetero does anyway or a hint its schedules do not read."""
    text = (
        "cuda -keys=cuda,gpu -arch=sm_80 -max_num_threads=1024 "
        "-max_shared_memory_per_block=49152 -max_threads_per_block=1024 "
        "-registers_per_block=65536 -thread_warp_size=32"
    )
    with pytest.warns(HeteroWarning, match="-registers_per_block=65536: hetero's GPU"):
        target = parse_target_string(text)
    assert target == parse_target_string("nvidia/nvidia-a100")


@pytest.mark.parametrize("tag", sorted(TARGET_TAGS))
def test_every_tag_is_a_cuda_target_with_tvms_limits(tag: str) -> None:
    target = _parse_quietly(tag)
    assert target.kind_name.data == "cuda"
    assert re.fullmatch(r"sm_[0-9]+a?", target.options["arch"])  # type: ignore[arg-type]
    assert {k: target.options[k] for k in LIMITS} == LIMITS


@pytest.mark.parametrize(
    "text, warning",
    [
        ("llvm -fast-math=1", "ignores TVM's option -fast-math=1: hetero's CPU code keeps IEEE semantics"),
        ("llvm -fast-math-nnan=true", "-fast-math-nnan=true: hetero's CPU code keeps IEEE"),
        ("llvm -vector-width=256", "-vector-width=256: hetero's vector width follows -mattr"),
        ("llvm -cl-opt=-unroll-threshold:uint=100", "hetero passes LLVM no command-line options"),
        ("llvm -jit=orcjit", "-jit=orcjit: hetero's CPU code is loaded by its own runtime"),
        ("llvm -link-params=0", "-link-params=0: hetero always compiles a model's constants"),
        ("llvm -keys=arm_cpu,cpu", "-keys=arm_cpu,cpu: a kind's keys are its own (cpu)"),
        ("llvm -device=arm_cpu", "-device=arm_cpu: hetero picks schedules by kind and -mtriple"),
        ("cuda -model=a100", "-model=a100: hetero picks schedules"),
        ("cuda -tag=nvidia/nvidia-a100", "write the tag itself as the target"),
        ("cuda -l2_cache_size_bytes=41943040", "hetero's GPU schedules do not read it"),
    ],
)  # fmt: skip
def test_tvm_options_without_effect_are_dropped_with_a_warning(
    text: str, warning: str
) -> None:
    with pytest.warns(HeteroWarning, match=re.escape(warning)):
        target = parse_target_string(text)
    assert target == TargetAttr(text.split()[0])


@pytest.mark.parametrize(
    "text, message",
    [
        ("c", "TVM's target kind 'c': hetero has no C source backend: write 'llvm'"),
        ("c -mcpu=cortex-m4", "hetero has no C source backend"),
        ("ext_dev", "TVM's target kind 'ext_dev': hetero has no ext_dev kind: an accelerator or library is an external codegen kind, so write its name (external kinds: blas,"),  # kinds tests register may follow
        ("rocm", "TVM's target kind 'rocm': hetero has no code generator for it (its kinds: blas,"),
        ("vulkan -from_device=0", "hetero has no code generator for it"),
        ("npu", "unknown target kind 'npu' (registered kinds: blas,"),
        ("cuda -libs=cudnn,cublas", "target kind 'cuda' takes no option -libs=cudnn,cublas: hetero links no library into a target: a library is an external codegen kind, a target of its own listed after 'cuda', e.g. targets 'cuda,cudnn,cublas'"),
        ("llvm -libs=cblas", "listed after 'llvm', e.g. targets 'cuda,cudnn,cublas' or 'llvm,blas'"),
        ("llvm -system-lib=1", "takes no option -system-lib=1: hetero builds one kind of module"),
        ("llvm -runtime=c", "-runtime=c: hetero builds one kind of module"),
        ("llvm -executor=aot", "-executor=aot: hetero builds one kind of module"),
        ("llvm -mfloat-abi=hard", "-mfloat-abi=hard: the float ABI follows -mtriple"),
        ("llvm -mabi=lp64d", "-mabi=lp64d: the ABI follows -mtriple"),
        ("cuda -thread_warp_size=64", "-thread_warp_size=64: NVIDIA GPUs run warps of 32 threads"),
        ("nvptx -mtriple=nvptx-nvidia-cuda", "-mtriple=nvptx-nvidia-cuda: hetero's cuda kind emits PTX for nvptx64-nvidia-cuda only"),
        ("cuda -opt-level=3", "unknown option 'opt-level' for target kind 'cuda'"),
        ("nvptx -mcpu=gfx90a", "bad value 'gfx90a' for option 'arch' of target kind 'cuda'"),
        ("cuda -max_num_threads=512 -max_threads_per_block=1024", "'-max_num_threads' and '-max_threads_per_block' set option 'max_threads_per_block' of target kind 'cuda' to different values"),
        ("cuda -mcpu=sm_80 -arch=sm_90", "'-mcpu' and '-arch' set option 'arch'"),
        ("llvm -num-cores=2 -num-cores=2", "option '-num-cores' is given twice"),
        ("llvm -keys=cpu -keys=cpu", "option '-keys' is given twice"),
        # a non-CPU host: TVM replaces it with a CPU one silently, hetero names the fix
        ("cuda -host=cuda", "host target 'cuda' is not a CPU target: write -host=llvm, or drop -host"),
        ("nvptx -host=nvidia/nvidia-a100", "host target 'nvidia/nvidia-a100' is not a CPU target: write -host=llvm"),
        ("cuda -host=c", "TVM's target kind 'c': hetero has no C source backend"),
    ],
)  # fmt: skip
def test_what_hetero_cannot_honour_is_refused_with_the_fix(
    text: str, message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_target_string(text)


def test_a_cpu_host_is_kept() -> None:
    target = _parse_quietly("nvidia/nvidia-h100 -host=llvm")
    assert target.host == TargetAttr("llvm")


def test_a_non_cpu_host_attribute_names_the_fix() -> None:
    """The attribute syntax refuses the same host, with its own spelling of the fix."""
    with pytest.raises(VerifyException, match="write a CPU host such as"):
        TargetAttr("cuda", host=TargetAttr("cuda"))


def test_tvm_list_options_continue_in_a_target_list() -> None:
    """A comma after `-keys=`, TVM's list option, continues the list, as after
    hetero's own list options; TVM's spellings work in every target of a list."""
    targets = parse_target_list(
        "nvptx -mcpu=sm_80 -keys=cuda,gpu -max_num_threads=1024,llvm -num-cores=2"
    )
    assert targets == [
        TargetAttr("cuda", {"arch": "sm_80", "max_threads_per_block": 1024}),
        TargetAttr("llvm", {"num_threads": 2}),
    ]
    assert parse_target_list("nvidia/nvidia-a100 -host=llvm,llvm -opt-level=2") == [
        parse_target_string("nvidia/nvidia-a100 -host=llvm"),
        TargetAttr("llvm", {"opt_level": 2}),
    ]


def test_compile_takes_a_tvm_target_string() -> None:
    """`hetero.compile(targets=...)` reads TVM's spellings, and a refusal is a
    diagnostic, not a traceback."""
    from hetero.utils.diagnostics import HeteroError

    text = (
        "builtin.module {\n  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    %r = relay.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
        "    relay.return %r : tensor<4xf32>\n  }\n}\n"
    )
    compiled = hetero.compile(text, targets="llvm -num-cores=1 -opt-level=2")
    np.testing.assert_array_equal(
        compiled(np.ones(4, np.float32)), np.full(4, 2, np.float32)
    )
    with pytest.raises(HeteroError, match="hetero has no C source backend"):
        hetero.compile(text, targets="c")
