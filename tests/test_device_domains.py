"""The union-find under plan-devices: joins, conflicts with origins, collapse, defaults."""

import itertools

import pytest

from hetero.analysis.device_domains import DeviceConflict, DomainSolver, Origin
from hetero.dialects.target import TargetAttr, VirtualDeviceAttr
from hetero.dialects.target.config import CompilationConfig
from hetero.dialects.target.kind import DeviceType

CONFIG = CompilationConfig.from_targets([TargetAttr("llvm"), TargetAttr("cuda")])
CPU = VirtualDeviceAttr(DeviceType.cpu, 0)
GPU = VirtualDeviceAttr(DeviceType.cuda, 0)


@pytest.fixture
def solver() -> DomainSolver:
    return DomainSolver(CONFIG.canonical_virtual_device)


def test_unify_joins_devices_and_canonicalises(solver):
    a, b = (
        solver.bound(VirtualDeviceAttr(DeviceType.cuda)),
        solver.bound(VirtualDeviceAttr(-1, 0)),
    )
    solver.unify(a, b)
    assert solver.device(a) == CONFIG.canonical_virtual_device(GPU)
    assert solver.find(a) is solver.find(b)


def test_conflict_names_both_origins(solver):
    a = solver.bound(CPU, Origin("parameter %x, line 3"))
    b = solver.bound(GPU, Origin("annotated at line 12"))
    with pytest.raises(DeviceConflict) as info:
        solver.unify(a, b)
    text = info.value.describe()
    assert "cpu:0" in text and "parameter %x, line 3" in text
    assert "cuda:0" in text and "annotated at line 12" in text


def test_free_domain_takes_the_origin_of_the_bound_one(solver):
    a, b = solver.free(), solver.bound(GPU, Origin("here"))
    solver.unify(a, b)
    assert solver.origin(a) == Origin("here")


def test_higher_order_unification_is_pointwise(solver):
    p1, r1, p2, r2 = solver.free(), solver.free(), solver.bound(CPU), solver.bound(GPU)
    solver.unify(solver.function([p1], r1), solver.function([p2], r2))
    assert solver.device(p1).device_type == DeviceType.cpu
    assert solver.device(r1).device_type == DeviceType.cuda


def test_collapse_puts_every_part_of_a_function_on_one_device(solver):
    f = solver.function([solver.free(), solver.free()], solver.free())
    container = solver.bound(GPU)
    solver.unify(container, f)
    assert all(
        solver.device(leaf).device_type == DeviceType.cuda for leaf in solver._leaves(f)
    )


def test_can_unify_changes_nothing(solver):
    a, b = solver.bound(CPU), solver.bound(GPU)
    assert not solver.can_unify(a, b)
    assert solver.find(a) is not solver.find(b)
    assert solver.can_unify(a, solver.free())


def test_result_default_then_params(solver):
    f = solver.function([solver.free(), solver.bound(GPU)], solver.free())
    solver.set_result_default_then_params(
        f, CONFIG.default_primitive_virtual_device, None
    )
    params = solver.find(f).params
    assert solver.device(solver.find(f).result).device_type == DeviceType.cpu
    assert solver.device(params[0]).device_type == DeviceType.cpu
    assert solver.device(params[1]).device_type == DeviceType.cuda


def test_default_fills_only_unconstrained_fields(solver):
    d = solver.bound(VirtualDeviceAttr(memory_scope="global"))
    solver.set_default(d, CONFIG.default_primitive_virtual_device, None)
    assert solver.device(d).memory_scope == "global"
    assert solver.device(d).device_type == DeviceType.cpu


def test_deep_chains_do_not_recurse(solver):
    nodes = [solver.free() for _ in range(100_000)]
    for a, b in itertools.pairwise(nodes):
        solver.unify(b, a)  # worst case for a naive union: a long parent chain
    solver.unify(nodes[-1], solver.bound(GPU))
    assert solver.device(nodes[0]).device_type == DeviceType.cuda
