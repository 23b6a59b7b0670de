"""Property: random well-typed relay programs print → parse → print stably.

The custom form reaches a fixed point after one round and the generic form
parses back to the same module (programs from `relay_programs.py`).
"""

from io import StringIO

from hypothesis import HealthCheck, given, settings
from relay_programs import programs
from xdsl.printer import Printer

from hetero.context import parse_module


def _print(module, generic: bool = False) -> str:
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_print_parse_print_is_stable(text: str):
    first = _print(parse_module(text))
    assert _print(parse_module(first)) == first
    assert _print(parse_module(_print(parse_module(first), generic=True))) == first
