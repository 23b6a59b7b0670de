"""Cost estimators: what `collage-partition` asks how long a candidate takes.

The pass chooses among backends by cost, but measuring a cost means compiling
and running code, which is the driver's business, two layers above the
passes.  So the pass only names what it needs, a `CostEstimator`, and reads
the one registered here; `hetero.collage_measure` (compile, run, medians, the
cost database) registers itself as the default when `hetero` is imported.
A test or a user may register another, or hand one to the pass directly.

This module imports neither xDSL nor the compiler: `import hetero` imports it
(through `hetero.collage_measure`), and a deployed model loads with NumPy and
llvmlite only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp


WHOLE = "whole"
"""The backend of a whole program placed already (its library ops are
annotated `Composite` calls): `collage-partition` checks its result so."""


class CostEstimator(Protocol):
    """Seconds a candidate takes on a backend: what the search minimises."""

    def cost(self, module: ModuleOp, backend: str) -> float:
        """Seconds of a call of `module`'s `@main`, a module holding just the
        candidate's ops, on `backend` (the regular target `llvm` or an
        external kind, whose ops are one `Composite` call annotated for it);
        or, for `WHOLE`, a whole program placed already."""
        ...

    def finish(self) -> str:
        """Called once every cost of a run is known (keep what is worth
        keeping); a line for the plan, such as how many were measured."""
        ...


def costs(
    estimator: CostEstimator, candidates: Sequence[tuple[ModuleOp, str]]
) -> list[float]:
    """`estimator.cost` of each `(module, backend)`, asked all at once where
    the estimator has a `costs` method of that signature (the measuring one
    measures many candidates in parallel), else one by one."""
    many = getattr(estimator, "costs", None)
    if many is not None:
        return list(many(candidates))
    return [estimator.cost(module, backend) for module, backend in candidates]


EstimatorFactory = Callable[..., CostEstimator]
"""Makes an estimator from the pass's options (`database=`, `runs=`)."""

_DEFAULT: list[EstimatorFactory] = []


def register_estimator(factory: EstimatorFactory) -> EstimatorFactory:
    """Make `factory` the default estimator (the last registered wins)."""
    _DEFAULT[:] = [factory]
    return factory


def default_estimator(**options: object) -> CostEstimator:
    """The registered estimator, made with the pass's `options`."""
    if not _DEFAULT:
        raise LookupError(
            "collage-partition: no cost estimator is registered "
            "(hetero.collage_measure registers one when hetero is imported)"
        )
    return _DEFAULT[0](**options)
