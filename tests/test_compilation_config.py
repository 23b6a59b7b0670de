"""CompilationConfig (docs/design.md §2.5): every host, ordering and default-device rule, one by one."""

import pytest

from hetero.dialects.target import CompilationConfigAttr, TargetAttr, VirtualDeviceAttr
from hetero.dialects.target.config import CompilationConfig, ConfigError
from hetero.dialects.target.kind import DeviceType

LLVM = TargetAttr("llvm")
CUDA = TargetAttr("cuda")
CUBLAS = TargetAttr("cublas")
CUDNN = TargetAttr("cudnn")
BLAS = TargetAttr("blas")


def build(*targets: TargetAttr, fallback: int | None = None) -> CompilationConfig:
    return CompilationConfig.from_targets(targets, fallback)


# -- host target -----------------------------------------------------------------


def test_rule_a_host_of_first_target_with_a_host():
    host = TargetAttr("llvm", {"mcpu": "znver5"})
    other_host = TargetAttr("llvm", {"mcpu": "skylake"})
    cfg = build(
        CUDA, TargetAttr("cublas", host=host), TargetAttr("llvm", host=other_host)
    )
    assert cfg.host_target == host
    assert cfg.host_target.host is None


def test_rule_b_first_cpu_target_without_its_host():
    cpu = TargetAttr("llvm", {"mcpu": "znver5"})
    cfg = build(CUDA, cpu)
    assert cfg.host_target == cpu


def test_rule_c_fresh_llvm_when_no_cpu_target():
    cfg = build(CUDA, CUBLAS)
    assert cfg.host_target == TargetAttr("llvm")


def test_host_virtual_device_is_device_zero_of_the_host():
    cfg = build(CUDA)
    assert cfg.host_virtual_device.device_type == DeviceType.cpu
    assert cfg.host_virtual_device.device_id == 0
    assert cfg.host_virtual_device.target is not None
    assert cfg.host_virtual_device.target.without_host() == LLVM


def test_host_device_coincides_with_a_cpu_primitive_device():
    cfg = build(LLVM, CUDA)
    assert cfg.host_virtual_device == cfg.canonical_virtual_device(
        VirtualDeviceAttr(DeviceType.cpu, 0)
    )


def test_host_is_not_a_primitive_target_unless_listed():
    cfg = build(CUDA)
    assert [t.kind_name.data for t in cfg.primitive_targets] == ["cuda"]


# -- primitive targets -------------------------------------------------------------


def test_primitive_targets_get_the_host_and_keep_order():
    host = TargetAttr("llvm", {"mcpu": "znver5"})
    cfg = build(
        TargetAttr("cuda", host=TargetAttr("llvm")),
        TargetAttr("llvm", {"mcpu": "znver5"}),
    )
    # rule A picks the plain llvm host of cuda; every primitive gets that host
    assert [t.kind_name.data for t in cfg.primitive_targets] == ["cuda", "llvm"]
    assert all(t.host == LLVM for t in cfg.primitive_targets)
    assert cfg.primitive_targets[1].without_host() == host


def test_two_targets_of_one_kind_are_rejected():
    with pytest.raises(ConfigError, match="same device kind 'cuda'"):
        build(LLVM, CUDA, TargetAttr("cuda", {"arch": "sm_80"}))


def test_external_codegen_after_the_regular_target_is_allowed():
    cfg = build(LLVM, CUDA, CUBLAS, CUDNN, BLAS)
    assert [t.kind_name.data for t in cfg.primitive_targets] == [
        "llvm",
        "cuda",
        "cublas",
        "cudnn",
        "blas",
    ]


def test_external_codegen_before_the_regular_target_is_rejected():
    with pytest.raises(ConfigError, match="first must be for non external codegen"):
        build(CUBLAS, CUDA)


def test_two_regular_targets_of_one_device_type_are_rejected():
    from hetero.dialects.target.kind import TargetKind, register_target_kind

    register_target_kind(TargetKind("test_cpu2", DeviceType.cpu))
    with pytest.raises(
        ConfigError, match="'test_cpu2' is not external codegen for 'llvm'"
    ):
        build(LLVM, TargetAttr("test_cpu2"))


def test_a_lone_external_codegen_target_is_allowed():
    cfg = build(LLVM, CUBLAS)
    assert (
        cfg.find_primitive_target_for_device(DeviceType.cuda).kind_name.data == "cublas"
    )


def test_no_targets_is_an_error():
    with pytest.raises(ConfigError, match="at least one target"):
        build()


# -- default device ----------------------------------------------------------------


def test_rule_d_explicit_fallback_device_type():
    cfg = build(LLVM, CUDA, fallback=int(DeviceType.cuda))
    assert cfg.default_primitive_virtual_device.device_type == DeviceType.cuda


def test_rule_d_fallback_must_be_positive():
    with pytest.raises(ConfigError, match="must be positive"):
        build(LLVM, fallback=0)


def test_rule_d_fallback_needs_a_target_of_that_type():
    with pytest.raises(
        ConfigError, match="no target is given for the default device type 'cuda'"
    ):
        build(LLVM, fallback=int(DeviceType.cuda))


def test_rule_e_single_device_type():
    cfg = build(CUDA, CUBLAS)
    vd = cfg.default_primitive_virtual_device
    assert (vd.device_type, vd.device_id) == (DeviceType.cuda, 0)
    assert vd.target is not None and vd.target.kind_name.data == "cuda"


def test_rule_f_mixed_device_types_default_to_cpu():
    cfg = build(CUDA, LLVM)
    assert cfg.default_primitive_virtual_device.device_type == DeviceType.cpu


def test_rule_f_fails_without_a_cpu_primitive_target():
    from hetero.dialects.target.kind import TargetKind, register_target_kind

    register_target_kind(TargetKind("test_metal", DeviceType.metal))
    with pytest.raises(ConfigError, match="default device type 'cpu'"):
        build(CUDA, TargetAttr("test_metal"))


def test_homogeneous_target_only_for_a_single_target():
    assert build(CUDA).optional_homogeneous_target == CUDA.with_host(LLVM)
    assert build(LLVM, CUDA).optional_homogeneous_target is None


# -- lookups and canonicalisation -----------------------------------------------


def test_find_by_device_type_returns_the_regular_target():
    cfg = build(LLVM, CUDA, CUBLAS)
    assert (
        cfg.find_primitive_target_for_device(DeviceType.cuda).kind_name.data == "cuda"
    )
    assert cfg.find_primitive_target_for_device(DeviceType.metal) is None
    with pytest.raises(
        ConfigError, match="no target is specified for device type 'metal'"
    ):
        cfg.find_primitive_target_for_device_or_fail(DeviceType.metal)


def test_find_by_kind():
    cfg = build(LLVM, CUDA, CUBLAS)
    assert cfg.find_primitive_target_for_kind("cublas").kind_name.data == "cublas"
    assert cfg.find_primitive_target_for_kind("cudnn") is None
    assert cfg.find_primitive_target_for_kind("no-such-kind") is None


def test_canonical_virtual_device_fills_the_target_from_the_device_type():
    cfg = build(LLVM, CUDA)
    vd = cfg.canonical_virtual_device(
        VirtualDeviceAttr(DeviceType.cuda, 1, None, "global")
    )
    assert vd == VirtualDeviceAttr(DeviceType.cuda, 1, CUDA.with_host(LLVM), "global")


def test_canonical_virtual_device_maps_a_bare_target_to_the_configured_one():
    cfg = build(LLVM, CUDA)
    vd = cfg.canonical_virtual_device(VirtualDeviceAttr.for_target(CUDA))
    assert vd.target == cfg.primitive_targets[1]


def test_canonical_keeps_an_unknown_target_and_a_free_device():
    cfg = build(LLVM)
    other = TargetAttr("llvm", {"mcpu": "skylake"})
    assert cfg.canonical_target(other) == other
    assert cfg.canonical_virtual_device(VirtualDeviceAttr()) == VirtualDeviceAttr()


def test_canonical_fails_for_a_device_type_without_target():
    with pytest.raises(ConfigError):
        build(LLVM).canonical_virtual_device(VirtualDeviceAttr(DeviceType.cuda))


def test_config_is_idempotent():
    cfg = build(CUDA, LLVM, CUBLAS)
    again = CompilationConfig.from_targets(cfg.primitive_targets)
    assert again == cfg


def test_config_attribute_builds_the_same_config():
    attr = CompilationConfigAttr([LLVM, CUDA], DeviceType.cuda)
    assert attr.config == build(LLVM, CUDA, fallback=int(DeviceType.cuda))
