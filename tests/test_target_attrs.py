"""Targets, target kinds and virtual devices (docs/design.md §2): the Python model."""

import pytest
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.target import TargetAttr, VirtualDeviceAttr
from hetero.dialects.target.kind import (
    DeviceType,
    OptionSpec,
    TargetKind,
    register_target_kind,
)

LLVM = TargetAttr("llvm")
CUDA = TargetAttr("cuda")


# -- targets ----------------------------------------------------------------------


def test_options_are_checked_against_the_kind_schema():
    with pytest.raises(VerifyException, match="unknown option 'foo'"):
        TargetAttr("llvm", {"foo": 1})
    with pytest.raises(VerifyException, match="expected a value of type str"):
        TargetAttr("cuda", {"arch": 90})
    with pytest.raises(VerifyException, match="expected a list of strings"):
        TargetAttr("llvm", {"mattr": "+avx2"})
    with pytest.raises(VerifyException, match="expected a value of type int"):
        TargetAttr("llvm", {"opt_level": True})


def test_unknown_kind_is_rejected_with_the_known_ones():
    with pytest.raises(VerifyException, match="unknown target kind 'tpu'.*cuda"):
        TargetAttr("tpu")


def test_option_defaults_come_from_the_kind():
    assert CUDA.option("arch") == "sm_90"
    assert TargetAttr("cuda", {"arch": "sm_80"}).option("arch") == "sm_80"
    assert TargetAttr("llvm", {"mattr": ["+avx2"]}).options == {"mattr": ["+avx2"]}


def test_host_must_be_a_cpu_target():
    with pytest.raises(VerifyException, match="not a CPU target"):
        TargetAttr("llvm", host=CUDA)


def test_with_and_without_host():
    t = CUDA.with_host(LLVM)
    assert t.host == LLVM and t.without_host() == CUDA
    assert CUDA.without_host() is CUDA


def test_targets_compare_structurally():
    assert TargetAttr("cuda", {"arch": "sm_80"}) == TargetAttr(
        "cuda", {"arch": "sm_80"}
    )
    assert TargetAttr("cuda", {"arch": "sm_80"}) != CUDA


@pytest.mark.parametrize(
    "kind, external",
    [
        ("llvm", False),
        ("cuda", False),
        ("cublas", True),
        ("cudnn", True),
        ("cutlass", True),
        ("tensorrt", True),
        ("blas", True),
    ],
)
def test_builtin_external_codegen_kinds(kind, external):
    assert TargetAttr(kind).is_external_codegen() is external


def test_is_external_codegen_for_exactly_as_spec_5_2():
    # ext0/ext1 (CUDA, external) are external codegen for cuda; not the reverse
    assert TargetAttr("cublas").is_external_codegen_for(CUDA)
    assert TargetAttr("cudnn").is_external_codegen_for(CUDA)
    assert not CUDA.is_external_codegen_for(TargetAttr("cublas"))
    # device type differs
    assert not TargetAttr("blas").is_external_codegen_for(CUDA)
    assert not TargetAttr("cublas").is_external_codegen_for(LLVM)
    # two external kinds are not external codegen for each other
    assert not TargetAttr("cublas").is_external_codegen_for(TargetAttr("cudnn"))


def test_relay_to_tir_alone_counts_as_external_codegen():
    register_target_kind(TargetKind("test_ext3", DeviceType.cpu, relay_to_tir=True))
    assert TargetAttr("test_ext3").is_external_codegen()
    assert TargetAttr("test_ext3").is_external_codegen_for(LLVM)


def test_registering_a_clashing_kind_fails():
    with pytest.raises(ValueError, match="already registered"):
        register_target_kind(TargetKind("llvm", DeviceType.cuda))


def test_option_spec_choices():
    spec = OptionSpec(str, choices=("a", "b"))
    assert spec.check("a") is None
    assert "expected one of" in spec.check("c")


# -- virtual devices -------------------------------------------------------------


def test_constructor_invariant_target_matches_device_type():
    with pytest.raises(VerifyException, match="does not run on device type cpu"):
        VirtualDeviceAttr(DeviceType.cpu, -1, CUDA)


def test_fully_unconstrained_and_fully_constrained():
    assert VirtualDeviceAttr().is_fully_unconstrained()
    assert not VirtualDeviceAttr(DeviceType.cpu).is_fully_unconstrained()
    # target + id but no memory scope is NOT fully constrained
    assert not VirtualDeviceAttr(DeviceType.cuda, 0, CUDA).is_fully_constrained()
    assert VirtualDeviceAttr(DeviceType.cuda, 0, CUDA, "global").is_fully_constrained()


def test_for_target():
    assert VirtualDeviceAttr.for_target(CUDA) == VirtualDeviceAttr(
        DeviceType.cuda, 0, CUDA
    )


def test_join_takes_the_constrained_field_of_each():
    a = VirtualDeviceAttr(DeviceType.cuda, -1, None, "global")
    b = VirtualDeviceAttr(DeviceType.cuda, 3, CUDA)
    assert a.join(b) == VirtualDeviceAttr(DeviceType.cuda, 3, CUDA, "global")
    assert b.join(a) == a.join(b)
    assert VirtualDeviceAttr().join(b) == b


def test_join_of_conflicting_fields_is_none():
    cuda0 = VirtualDeviceAttr(DeviceType.cuda, 0)
    assert cuda0.join(VirtualDeviceAttr(DeviceType.cuda, 1)) is None
    assert cuda0.join(VirtualDeviceAttr(DeviceType.cpu, 0)) is None
    assert (
        VirtualDeviceAttr(memory_scope="a").join(VirtualDeviceAttr(memory_scope="b"))
        is None
    )
    # a CPU device and a CUDA target cannot be joined into a valid device
    assert (
        VirtualDeviceAttr(DeviceType.cpu).join(
            VirtualDeviceAttr(DeviceType.cuda, -1, CUDA)
        )
        is None
    )


def test_join_compares_targets_structurally():
    # TVM's Join_Undefined: two separately built equal targets do NOT join there;
    # in hetero they do (targets compare structurally, docs/design.md §2.2).
    a = VirtualDeviceAttr(DeviceType.cuda, 3, TargetAttr("cuda"))
    b = VirtualDeviceAttr(DeviceType.cuda, 3, TargetAttr("cuda"))
    assert a.join(b) == a


def test_default_fills_unconstrained_fields():
    # TVM's example: Default((CUDA,-1,null,"global"), (CUDA,3,cuda,"local"))
    lhs = VirtualDeviceAttr(DeviceType.cuda, -1, None, "global")
    rhs = VirtualDeviceAttr(DeviceType.cuda, 3, CUDA, "local")
    assert lhs.default(rhs) == VirtualDeviceAttr(DeviceType.cuda, 3, CUDA, "global")


def test_default_takes_the_target_only_for_the_same_device_type():
    lhs = VirtualDeviceAttr(DeviceType.cpu)
    rhs = VirtualDeviceAttr(DeviceType.cuda, 3, CUDA)
    assert lhs.default(rhs) == VirtualDeviceAttr(DeviceType.cpu, 3)
    assert VirtualDeviceAttr().default(rhs) == rhs
