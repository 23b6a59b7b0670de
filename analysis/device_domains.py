"""Device domains: the union-find that `plan-devices` solves (docs/design.md §3.4).

A domain is either *first-order* — one (possibly partially constrained)
virtual device, shared by every value unified with it — or *higher-order*,
`fn(D1, ..., Dn): Dr`, for function-typed values, so that constraints flow
through closures and calls of function values.

Each first-order root keeps the device known so far and, for diagnostics, the
*origin* of that knowledge (which annotation or parameter imposed it), so a
conflict can name both sides.  `find` is iterative with path compression, so
10^5-op graphs and deep chains neither recurse nor slow down.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hetero.dialects.target import VirtualDeviceAttr

FREE = VirtualDeviceAttr()


@dataclass(frozen=True)
class Origin:
    """Where a device constraint came from, in words: `annotated at line 12`."""

    text: str


@dataclass(eq=False)
class Domain:
    """A node of the union-find; only roots' fields are meaningful."""

    device: VirtualDeviceAttr = FREE
    origin: Origin | None = None
    params: tuple[Domain, ...] | None = None  # None: first-order
    result: Domain | None = None
    parent: Domain | None = field(default=None, repr=False)

    @property
    def is_higher_order(self) -> bool:
        return self.params is not None


class DeviceConflict(Exception):
    """Two constraints that cannot both hold."""

    def __init__(
        self,
        first: tuple[VirtualDeviceAttr, Origin | None],
        second: tuple[VirtualDeviceAttr, Origin | None],
    ):
        super().__init__()
        self.first = first
        self.second = second

    def describe(self) -> str:
        (a, a_origin), (b, b_origin) = self.first, self.second
        detailed = _short(a) == _short(b)  # they differ only in their targets
        return f"must be on {_side(a, a_origin, detailed)} and on {_side(b, b_origin, detailed)}"


def _short(device: VirtualDeviceAttr) -> str:
    """`cuda:0`, `cpu scope 'global'`: the device without its (implied) target."""
    dt = device.device_type
    text = "?" if dt is None else dt.name
    text += f":{device.device_id}" if device.device_id >= 0 else ""
    return text + (f" scope '{device.memory_scope}'" if device.memory_scope else "")


def _side(device: VirtualDeviceAttr, origin: Origin | None, detailed: bool) -> str:
    text = str(device) if detailed else _short(device)
    return text + (f" ({origin.text})" if origin is not None else "")


class DomainSolver:
    """Union-find over domains, with join-on-union of first-order devices.

    `canonical` fills a device's target from its device type (the compilation
    configuration's job), so that `cuda` and `cuda + its target` join.
    """

    def __init__(self, canonical: Callable[[VirtualDeviceAttr], VirtualDeviceAttr]):
        self.canonical = canonical

    # -- construction ----------------------------------------------------------

    def free(self) -> Domain:
        return Domain()

    def bound(self, device: VirtualDeviceAttr, origin: Origin | None = None) -> Domain:
        return Domain(self.canonical(device), origin)

    def function(self, params: Sequence[Domain], result: Domain) -> Domain:
        return Domain(params=tuple(params), result=result)

    # -- union-find ------------------------------------------------------------

    def find(self, d: Domain) -> Domain:
        root = d
        while root.parent is not None:
            root = root.parent
        while d.parent is not None:  # path compression
            d.parent, d = root, d.parent
        return root

    def device(self, d: Domain) -> VirtualDeviceAttr:
        """The device of a first-order domain, or the result device of a function."""
        return self.find(self.result_domain(d)).device

    def origin(self, d: Domain) -> Origin | None:
        return self.find(self.result_domain(d)).origin

    def result_domain(self, d: Domain) -> Domain:
        """`result_domain(fn(...):Dr) = result_domain(Dr)`; first-order: itself."""
        d = self.find(d)
        while d.is_higher_order:
            assert d.result is not None
            d = self.find(d.result)
        return d

    def unify(self, a: Domain, b: Domain) -> Domain:
        """Make `a` and `b` one domain, or raise `DeviceConflict` (changing nothing
        when the conflict is found before any union)."""
        a, b = self.find(a), self.find(b)
        if a is b:
            return a
        if a.is_higher_order and b.is_higher_order:
            assert a.params is not None and b.params is not None
            if len(a.params) != len(b.params):
                raise ValueError("function domains of different arity")  # a type error
            for pa, pb in zip(a.params, b.params):
                self.unify(pa, pb)
            assert a.result is not None and b.result is not None
            self.unify(a.result, b.result)
            b.parent = a
            return a
        if a.is_higher_order or b.is_higher_order:
            # A first-order domain meeting a function: collapse (docs/design.md §3.4).
            fo, ho = (b, a) if a.is_higher_order else (a, b)
            self.collapse(fo, ho)
            return self.find(ho)
        joined = a.device.join(b.device)
        if joined is None:
            raise DeviceConflict((a.device, a.origin), (b.device, b.origin))
        a.origin = a.origin if a.device != FREE else b.origin
        a.device = joined
        b.parent = a
        return a

    def can_unify(self, a: Domain, b: Domain) -> bool:
        """Whether `unify(a, b)` would succeed, without changing anything."""
        return self._compatible(self.find(a), self.find(b), set())

    def _compatible(self, a: Domain, b: Domain, seen: set[tuple[int, int]]) -> bool:
        if a is b or (id(a), id(b)) in seen:
            return True
        seen.add((id(a), id(b)))
        if a.is_higher_order and b.is_higher_order:
            assert a.params is not None and b.params is not None
            assert a.result is not None and b.result is not None
            return len(a.params) == len(b.params) and all(
                self._compatible(self.find(x), self.find(y), seen)
                for x, y in zip((*a.params, a.result), (*b.params, b.result))
            )
        if a.is_higher_order or b.is_higher_order:
            fo, ho = (b, a) if a.is_higher_order else (a, b)
            return all(
                self._compatible(fo, self.find(leaf), seen) for leaf in self._leaves(ho)
            )
        return a.device.join(b.device) is not None

    def collapse(self, first_order: Domain, d: Domain) -> None:
        """Unify `first_order` with every parameter and the result of `d`, deeply."""
        for leaf in self._leaves(self.find(d)):
            self.unify(first_order, leaf)

    def _leaves(self, d: Domain) -> list[Domain]:
        """The first-order domains inside a (possibly higher-order) domain."""
        leaves: list[Domain] = []
        stack = [d]
        while stack:
            node = self.find(stack.pop())
            if node.is_higher_order:
                assert node.params is not None and node.result is not None
                stack.extend((*node.params, node.result))
            else:
                leaves.append(node)
        return leaves

    # -- defaulting (docs/design.md §3.6) ---------------------------------------

    def set_default(
        self, d: Domain, default: VirtualDeviceAttr, origin: Origin | None
    ) -> None:
        """Fill the unconstrained fields of a first-order domain from `default`."""
        root = self.find(d)
        assert not root.is_higher_order
        filled = self.canonical(root.device.default(default))
        if filled != root.device:
            root.origin = root.origin or origin
            root.device = filled

    def set_result_default_then_params(
        self, d: Domain, default: VirtualDeviceAttr, origin: Origin | None
    ) -> None:
        """First the result to `default`, then every free part to the result's device."""
        result = self.result_domain(d)
        self.set_default(result, default, origin)
        result_device = self.find(result).device
        for leaf in self._leaves(self.find(d)):
            self.set_default(leaf, result_device, origin)
