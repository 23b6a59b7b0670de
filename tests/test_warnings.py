"""hetero's warnings are one clean line (`hetero.utils.diagnostics.warn`)."""

import warnings

import pytest
from cuda import pathfinder
from test_cublas import MLP

import hetero
from hetero.runtime import cublas as cublas_runtime
from hetero.utils.diagnostics import HeteroWarning, warn


def shown(caught: list[warnings.WarningMessage]) -> str:
    """The warnings as Python prints them (pytest records them instead)."""
    return "".join(
        warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
        for w in caught
    )


def test_a_warning_is_one_line_without_python_source():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn(
            "cuBLAS not found (Failure finding libcublas.so:\n  searched here\n): pip install"
        )
    assert shown(caught) == (
        f"{__file__}:{caught[0].lineno}: warning: "
        "cuBLAS not found (Failure finding libcublas.so: searched here ): pip install\n"
    )


def test_python_warnings_of_others_keep_their_format():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("plain", UserWarning, stacklevel=1)
    assert "UserWarning: plain\n" in shown(caught)


def test_cuda_configuration_without_cublas_warns_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
):
    """pathfinder's reason spans lines: the warning does not."""

    def not_found(name: str) -> None:
        raise pathfinder.DynamicLibNotFoundError(
            f'Failure finding "lib{name}.so": no such file\nattachments: none'
        )

    monkeypatch.setattr(pathfinder, "load_nvidia_dynamic_lib", not_found)
    monkeypatch.setattr(
        cublas_runtime, "load_cublas", cublas_runtime.load_cublas.__wrapped__
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hetero.compile(MLP)
    lines = shown(caught).splitlines()
    assert (
        len(lines) == 1
        and ": warning: hetero.compile: 'cublas' is not offered: cuBLAS not found"
        in lines[0]
    )
    assert "no such file attachments: none" in lines[0]


def test_hetero_warnings_can_be_filtered():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn("two\nlines")
    assert [(w.category, str(w.message)) for w in caught] == [
        (HeteroWarning, "two lines")
    ]
