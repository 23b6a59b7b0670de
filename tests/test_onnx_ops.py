"""The ONNX operators that transformer and mobile-CNN exports use (issue 34's
import gaps), each on small models built with `onnx.helper`: imported,
interpreted by the relay reference interpreter and compiled by
`hetero.compile` for the CPU, both against onnxruntime; several attribute
forms each (negative axes, broadcasting, opset variants).  Then folding at
import (the importer's own NumPy and relay folds, never the `onnx` reference
evaluator for ops it converts) and the diagnostics of what stays out.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper

import hetero
from hetero.frontends.onnx import from_onnx
from hetero.interpreter.relay import run
from hetero.utils.diagnostics import HeteroError

RTOL, ATOL = 1e-4, 1e-5

_TYPES = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.bool_): TensorProto.BOOL,
}

Case = tuple[onnx.ModelProto, dict[str, np.ndarray]]


def _case(
    nodes: list[onnx.NodeProto],
    feeds: dict[str, np.ndarray],
    opset: int = 17,
    initializers: dict[str, np.ndarray] | None = None,
    output: str = "y",
    output_type: int = TensorProto.FLOAT,
    output_shape: tuple[int, ...] | None = None,
) -> Case:
    """A one-output model of `nodes` whose graph inputs are `feeds`' names,
    typed as the arrays are."""
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info(name, _TYPES[value.dtype], value.shape)
            for name, value in feeds.items()
        ],
        [helper.make_tensor_value_info(output, output_type, output_shape)],
        [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9
    )
    return model, feeds


def _node(op_type: str, inputs: list[str], output: str = "y", **attrs: object):
    return helper.make_node(op_type, inputs, [output], **attrs)


def _i64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


_RNG = np.random.default_rng(34)


def _normal(*shape: int, scale: float = 1.0, shift: float = 0.0) -> np.ndarray:
    return (_RNG.standard_normal(shape) * scale + shift).astype(np.float32)


_X = _normal(2, 5, 8)
_Q, _K = _normal(1, 2, 5, 4), _normal(1, 2, 6, 4)
_WITH_ZEROS = np.array([[-2.0, -0.0, 0.0, 0.3], [1.5, -0.5, 0.5, np.nan]], np.float32)

CASES: dict[str, Case] = {
    # -- LayerNormalization (relay.nn.layer_norm) ----------------------------
    "layer_norm_last_axis": _case(
        [_node("LayerNormalization", ["x", "g", "b"], epsilon=1e-3)],
        {"x": _X},
        initializers={"g": _normal(8), "b": _normal(8)},
    ),
    "layer_norm_two_axes_no_bias": _case(
        [_node("LayerNormalization", ["x", "g"], axis=1)],
        {"x": _X},
        initializers={"g": _normal(5, 8)},
    ),
    "layer_norm_negative_axis_run_time_scale": _case(
        [_node("LayerNormalization", ["x", "g", "b"], axis=-2)],
        {"x": _X, "g": _normal(5, 8), "b": _normal(5, 8)},
    ),
    "layer_norm_shifted_wide_rows": _case(
        [_node("LayerNormalization", ["x", "g", "b"])],
        {"x": _normal(3, 197, scale=2.0, shift=20.0)},
        initializers={"g": _normal(197), "b": _normal(197)},
    ),
    # -- activations ----------------------------------------------------------
    "gelu_exact_opset20": _case([_node("Gelu", ["x"])], {"x": _X * 3}, opset=20),
    "gelu_tanh_opset20": _case(
        [_node("Gelu", ["x"], approximate="tanh")], {"x": _X * 3}, opset=20
    ),
    "hard_swish": _case([_node("HardSwish", ["x"])], {"x": _X * 4}, opset=14),
    "hard_sigmoid_alpha_beta": _case(
        [_node("HardSigmoid", ["x"], alpha=0.3, beta=0.4)], {"x": _X * 4}
    ),
    "erf": _case([_node("Erf", ["x"])], {"x": _X * 2}),
    # -- reductions: max, min, prod, log-sum-exp; argmax, argmin -------------
    "reduce_max_axes_attribute": _case(
        [_node("ReduceMax", ["x"], axes=[1], keepdims=0)], {"x": _X}
    ),
    "reduce_max_axes_input_opset18": _case(
        [_node("ReduceMax", ["x", "a"])],
        {"x": _X},
        opset=18,
        initializers={"a": _i64(0, 2)},
    ),
    "reduce_min_all": _case([_node("ReduceMin", ["x"], keepdims=0)], {"x": _X}),
    "reduce_max_int64": _case(
        [_node("ReduceMax", ["x"], axes=[1], keepdims=0)],
        {"x": _RNG.integers(-9, 9, (3, 4)).astype(np.int64)},
        output_type=TensorProto.INT64,
    ),
    "argmax_int32": _case(
        [_node("ArgMax", ["x"], axis=0)],
        {"x": _RNG.integers(-2, 2, (5, 3)).astype(np.int32)},
        output_type=TensorProto.INT64,
    ),
    "reduce_prod_last": _case(
        [_node("ReduceProd", ["x"], axes=[-1])], {"x": _X * 0.5 + 1.0}
    ),
    "reduce_log_sum_exp_large": _case(
        [_node("ReduceLogSumExp", ["x"], axes=[2], keepdims=0)], {"x": _X * 60}
    ),
    "reduce_log_sum_exp_kept": _case(
        [_node("ReduceLogSumExp", ["x"], axes=[0, 1])], {"x": _X}
    ),
    "argmax_middle_axis": _case(
        [_node("ArgMax", ["x"], axis=1)],
        {"x": _X},
        output_type=TensorProto.INT64,
    ),
    "argmin_last_dropped": _case(
        [_node("ArgMin", ["x"], axis=-1, keepdims=0)],
        {"x": _X},
        output_type=TensorProto.INT64,
    ),
    "argmax_ties_last_index": _case(
        [_node("ArgMax", ["x"], axis=1, select_last_index=1)],
        {"x": np.array([[1, 3, 3, 0], [2, 2, 2, 2]], np.float32)},
        opset=12,
        output_type=TensorProto.INT64,
    ),
    "argmin_ties_first_index": _case(
        [_node("ArgMin", ["x"], axis=1)],
        {"x": np.array([[1, 0, 3, 0], [2, 2, 2, 2]], np.float32)},
        opset=12,
        output_type=TensorProto.INT64,
    ),
    # -- vision: groups, pixels and channels ----------------------------------
    "group_norm_opset18_per_group": _case(
        [_node("GroupNormalization", ["x", "s", "b"], num_groups=3, epsilon=1e-3)],
        {"x": _normal(2, 6, 5, 4, scale=2.0, shift=1.0)},
        opset=18,
        initializers={"s": _normal(3), "b": _normal(3)},
    ),
    "group_norm_opset21_per_channel": _case(
        [_node("GroupNormalization", ["x", "s", "b"], num_groups=2)],
        {"x": _normal(1, 6, 3, 3)},
        opset=21,
        initializers={"s": _normal(6), "b": _normal(6)},
    ),
    "depth_to_space_dcr": _case(
        [_node("DepthToSpace", ["x"], blocksize=2)], {"x": _normal(2, 12, 3, 4)}
    ),
    "depth_to_space_crd": _case(
        [_node("DepthToSpace", ["x"], blocksize=2, mode="CRD")],
        {"x": _normal(1, 8, 3, 2)},
    ),
    "space_to_depth": _case(
        [_node("SpaceToDepth", ["x"], blocksize=2)], {"x": _normal(2, 3, 4, 6)}
    ),
    # -- Resize, Upsample: positions and weights computed at import ------------
    **{
        f"resize_{mode}_{ctm}_{name}": _case(
            [
                _node(
                    "Resize",
                    ["x", "", *inputs],
                    mode=mode,
                    coordinate_transformation_mode=ctm,
                    nearest_mode=rounding,
                )
            ],
            {"x": _normal(1, 2, 5, 7)},
            opset=13,
            initializers=values,
        )
        for mode, ctm, rounding in (
            ("nearest", "asymmetric", "floor"),
            ("nearest", "half_pixel", "round_prefer_floor"),
            ("nearest", "asymmetric", "round_prefer_ceil"),
            ("nearest", "align_corners", "ceil"),
            ("linear", "half_pixel", "round_prefer_floor"),
            ("linear", "pytorch_half_pixel", "round_prefer_floor"),
            ("linear", "align_corners", "round_prefer_floor"),
            ("linear", "asymmetric", "round_prefer_floor"),
        )
        for name, inputs, values in (
            ("up", ["s"], {"s": np.array([1, 1, 2, 1.5], np.float32)}),
            ("sizes", ["", "z"], {"z": _i64(1, 2, 9, 4)}),
        )
    },
    "resize_linear_axes_opset18": _case(
        [_node("Resize", ["x", "", "", "z"], mode="linear", axes=[2, 3])],
        {"x": _normal(2, 3, 4, 6)},
        opset=18,
        initializers={"z": _i64(7, 3)},
    ),
    "resize_opset10_nearest": _case(
        [_node("Resize", ["x", "s"])],
        {"x": _normal(1, 1, 3, 3)},
        opset=10,
        initializers={"s": np.array([1, 1, 2, 2], np.float32)},
    ),
    "upsample_opset9_linear": _case(
        [_node("Upsample", ["x", "s"], mode="linear")],
        {"x": _normal(1, 2, 3, 4)},
        opset=9,
        initializers={"s": np.array([1, 1, 2, 3], np.float32)},
    ),
    "reduce_log_sum_exp_infinite_rows": _case(
        [_node("ReduceLogSumExp", ["x"], axes=[1], keepdims=0)],
        {
            "x": np.array(
                [[-np.inf] * 3, [np.inf, 1, 2], [np.inf, -np.inf, 0], [1, 2, 3]],
                np.float32,
            )
        },
    ),
    "swish_alpha_one": _case([_node("Swish", ["x"])], {"x": _X * 4}, opset=24),
    "swish_alpha_half": _case(
        [_node("Swish", ["x"], alpha=0.5)], {"x": _X * 4}, opset=24
    ),
    "is_inf_positive_only": _case(
        [_node("IsInf", ["x"], detect_negative=0)],
        {"x": np.array([[np.inf, -np.inf, np.nan, 1.0]], np.float32)},
        opset=10,
        output_type=TensorProto.BOOL,
    ),
    "sin": _case([_node("Sin", ["x"])], {"x": _X * 20}),
    "cos": _case([_node("Cos", ["x"])], {"x": _X * 20}),
    "reciprocal": _case([_node("Reciprocal", ["x"])], {"x": _WITH_ZEROS}),
    "mish": _case([_node("Mish", ["x"])], {"x": _X * 8}, opset=18),
    "celu_alpha": _case([_node("Celu", ["x"], alpha=0.7)], {"x": _X * 3}, opset=12),
    "thresholded_relu": _case(
        [_node("ThresholdedRelu", ["x"], alpha=0.4)], {"x": _X}, opset=10
    ),
    "is_inf_both": _case(
        [_node("IsInf", ["x"])],
        {"x": np.array([[np.inf, -np.inf, np.nan, 1.0, -0.0]], np.float32)},
        opset=10,
        output_type=TensorProto.BOOL,
    ),
    "is_inf_negative_only": _case(
        [_node("IsInf", ["x"], detect_positive=0)],
        {"x": np.array([[np.inf, -np.inf, np.nan, 1.0]], np.float32)},
        opset=10,
        output_type=TensorProto.BOOL,
    ),
    "is_inf_neither": _case(
        [_node("IsInf", ["x"], detect_positive=0, detect_negative=0)],
        {"x": np.array([[np.inf, -np.inf, np.nan, 1.0]], np.float32)},
        opset=10,
        output_type=TensorProto.BOOL,
    ),
    "sign_zeros_and_nan": _case([_node("Sign", ["x"])], {"x": _WITH_ZEROS}),
    "sign_int64": _case(
        [_node("Sign", ["x"])],
        {"x": _i64(-3, 0, 7)},
        output_type=TensorProto.INT64,
    ),
    "shrink_default": _case([_node("Shrink", ["x"])], {"x": _X}),
    "shrink_lambd_bias": _case(
        [_node("Shrink", ["x"], lambd=0.8, bias=0.25)], {"x": _X * 2}
    ),
    "pow_cube_constant": _case(
        [_node("Pow", ["x", "e"])], {"x": _X}, initializers={"e": np.float32(3.0)}
    ),
    "pow_square_int_exponent": _case(
        [_node("Pow", ["x", "e"])], {"x": _X}, opset=15, initializers={"e": _i64(2)}
    ),
    "pow_broadcast_tensor": _case(
        [_node("Pow", ["x", "e"])],
        {"x": np.abs(_X) + 0.5, "e": _normal(8)},
    ),
    # -- softmax on any axis, matmul broadcasting -------------------------------
    "softmax_axis_0": _case([_node("Softmax", ["x"], axis=0)], {"x": _X}, opset=13),
    "log_softmax_axis_1": _case(
        [_node("LogSoftmax", ["x"], axis=1)], {"x": _X}, opset=13
    ),
    "log_softmax_coerced_opset11": _case(
        [_node("LogSoftmax", ["x"], axis=1)], {"x": _X}, opset=11
    ),
    "matmul_broadcast_batch": _case(
        [_node("MatMul", ["a", "b"])], {"a": _normal(2, 1, 3, 4), "b": _normal(5, 4, 6)}
    ),
    "matmul_2d_by_batched": _case(
        [_node("MatMul", ["a", "b"])], {"a": _normal(3, 4), "b": _normal(2, 4, 5)}
    ),
    "matmul_4d_by_constant_weight": _case(
        [_node("MatMul", ["a", "w"])],
        {"a": _normal(2, 3, 4, 5)},
        initializers={"w": _normal(5, 6)},
    ),
    # -- mask logic -----------------------------------------------------------
    "equal_int_where_broadcast": _case(
        [
            _node("Equal", ["i", "k"], "m"),
            _node("Not", ["m"], "n"),
            _node("Where", ["n", "x", "z"]),
        ],
        {"i": _i64(0, 1, 2, 3, 4, 5, 6, 7), "x": _X},
        initializers={"k": _i64(3), "z": np.float32(-1e4)},
    ),
    "less_greater_and_or": _case(
        [
            _node("Less", ["x", "lo"], "a"),
            _node("Greater", ["x", "hi"], "b"),
            _node("Or", ["a", "b"], "c"),
            _node("GreaterOrEqual", ["x", "lo"], "d"),
            _node("And", ["c", "d"], "e"),
            _node("Cast", ["e"], to=TensorProto.FLOAT),
        ],
        {"x": _X},
        initializers={"lo": np.float32(-0.5), "hi": np.float32(0.5)},
    ),
    "is_nan_where": _case(
        [_node("IsNaN", ["x"], "m"), _node("Where", ["m", "z", "x"])],
        {"x": _WITH_ZEROS},
        initializers={"z": np.float32(0.0)},
    ),
    # -- gathers, ranges, expansions --------------------------------------------
    "gather_elements_axis_1_negative_indices": _case(
        [_node("GatherElements", ["x", "i"], axis=1)],
        {"x": _X},
        initializers={"i": _RNG.integers(-5, 5, (2, 3, 8)).astype(np.int64)},
    ),
    "gather_elements_last_axis_run_time_indices": _case(
        [_node("GatherElements", ["x", "i"], axis=-1)],
        {"x": _X, "i": _RNG.integers(-8, 8, (2, 5, 4)).astype(np.int64)},
    ),
    "gather_elements_int32_indices_axis_0": _case(
        [_node("GatherElements", ["x", "i"])],
        {"x": _normal(4, 3), "i": np.array([[3, -1, 0], [1, 2, -4]], np.int32)},
    ),
    "gather_nd_constant_indices_of_a_bool_mask": _case(
        [
            _node("GatherND", ["m", "i"], "g"),
            _node("Where", ["g", "x", "z"]),
        ],
        {"m": np.array([[True, False, True, True, False, True, False, True]])},
        initializers={
            "i": np.stack(np.broadcast_arrays(0, np.arange(8)[::-1]), -1)
            .reshape(1, 1, 1, 8, 2)
            .astype(np.int64),
            "x": _normal(1, 1, 1, 8),
            "z": np.float32(-1e4),
        },
    ),
    "gather_nd_run_time_negative_indices": _case(
        [_node("GatherND", ["x", "i"])],
        {"x": _X, "i": np.array([[1, -1], [0, 2], [-2, -5], [1, 0]], np.int64)},
    ),
    "gather_nd_batch_dims_1_run_time_indices": _case(
        [_node("GatherND", ["x", "i"], batch_dims=1)],
        {"x": _X, "i": _RNG.integers(-5, 5, (2, 3, 1)).astype(np.int64)},
    ),
    "gather_nd_scalars_constant_indices": _case(
        [_node("GatherND", ["x", "i"])],
        {"x": _X},
        initializers={"i": np.array([[1, 4, 7], [0, -1, 0], [1, 2, -3]], np.int64)},
    ),
    "expand_constant_shape": _case(
        [_node("Expand", ["x", "s"])],
        {"x": _normal(3, 1)},
        initializers={"s": _i64(2, 1, 4)},
    ),
    "expand_shape_of_another_input": _case(
        [_node("Shape", ["z"], "s"), _node("Expand", ["x", "s"])],
        {"x": _normal(1, 5, 1), "z": _normal(2, 5, 3)},
    ),
    "expand_bool_mask": _case(
        [
            _node("Expand", ["m", "s"], "e"),
            _node("Where", ["e", "x", "z"]),
        ],
        {"m": np.array([[True, False, True, True, False, True, False, True]]), "x": _X},
        initializers={"s": _i64(2, 5, 8), "z": np.float32(0.0)},
    ),
    "range_from_shape_arithmetic": _case(
        [
            _node("Shape", ["x"], "s"),
            _node("Gather", ["s", "two"], "n"),
            _node("Range", ["zero", "n", "one"], "r"),
            _node("Cast", ["r"], "f", to=TensorProto.FLOAT),
            _node("Add", ["x", "f"]),
        ],
        {"x": _X},
        initializers={
            "two": np.array(2, np.int64),
            "zero": np.array(0, np.int64),
            "one": np.array(1, np.int64),
        },
    ),
    "range_float_negative_delta": _case(
        [_node("Range", ["a", "b", "d"], "r"), _node("Mul", ["x", "r"])],
        {"x": _normal(4, 5)},
        initializers={
            "a": np.float32(2.0),
            "b": np.float32(-0.4),
            "d": np.float32(-0.5),
        },
    ),
    # -- einsum -----------------------------------------------------------------
    "einsum_attention_scores": _case(
        [_node("Einsum", ["q", "k"], equation="bhid,bhjd->bhij")], {"q": _Q, "k": _K}
    ),
    "einsum_attention_values": _case(
        [_node("Einsum", ["p", "v"], equation="bhij,bhjd->bhid")],
        {"p": _normal(1, 2, 5, 6), "v": _K},
    ),
    "einsum_linear_constant_weight": _case(
        [_node("Einsum", ["x", "w"], equation="bid,jd->bij")],
        {"x": _X},
        initializers={"w": _normal(3, 8)},
    ),
    "einsum_relative_positions": _case(
        [_node("Einsum", ["q", "r"], equation="bhld,lrd->bhlr")],
        {"q": _Q, "r": _normal(5, 6, 4)},
    ),
    "einsum_outer_product": _case(
        [_node("Einsum", ["a", "b"], equation="i,j->ij")],
        {"a": _normal(4), "b": _normal(6)},
    ),
    "einsum_ellipsis_broadcast": _case(
        [_node("Einsum", ["a", "b"], equation="...ij,...jk->...ik")],
        {"a": _normal(2, 3, 4), "b": _normal(1, 4, 5)},
    ),
    "einsum_implicit_output": _case(
        [_node("Einsum", ["a", "b"], equation="ij,jk")],
        {"a": _normal(3, 4), "b": _normal(4, 5)},
    ),
    "einsum_transpose_and_sum": _case(
        [_node("Einsum", ["a"], equation="bij->jb")], {"a": _normal(2, 3, 4)}
    ),
    "einsum_three_operands": _case(
        [_node("Einsum", ["a", "b", "c"], equation="ij,jk,kl->li")],
        {"a": _normal(2, 3), "b": _normal(3, 4), "c": _normal(4, 5)},
    ),
    # -- triangles, running sums, splits ------------------------------------------
    "trilu_upper": _case([_node("Trilu", ["x"])], {"x": _X}, opset=14),
    "trilu_lower_k_minus_one": _case(
        [_node("Trilu", ["x", "k"], upper=0)],
        {"x": _X},
        opset=14,
        initializers={"k": np.array(-1, np.int64)},
    ),
    "trilu_upper_k_two_wide": _case(
        [_node("Trilu", ["x", "k"])],
        {"x": _normal(3, 9)},
        opset=14,
        initializers={"k": np.array(2, np.int64)},
    ),
    "cumsum_axis_1": _case(
        [_node("CumSum", ["x", "a"])],
        {"x": _X},
        initializers={"a": np.array(1, np.int64)},
    ),
    "cumsum_exclusive_reverse_negative_axis": _case(
        [_node("CumSum", ["x", "a"], exclusive=1, reverse=1)],
        {"x": _X},
        initializers={"a": np.array(-1, np.int64)},
    ),
    "cumsum_exclusive": _case(
        [_node("CumSum", ["x", "a"], exclusive=1)],
        {"x": _normal(3, 7)},
        initializers={"a": np.array(0, np.int32)},
    ),
    "cumsum_int64_position_ids": _case(
        [_node("CumSum", ["m", "a"], "c"), _node("Mul", ["c", "m"])],
        {"m": np.array([[1, 1, 1, 0, 0], [0, 1, 1, 1, 1]], np.int64)},
        initializers={"a": np.array(1, np.int64)},
        output_type=TensorProto.INT64,
    ),
    # -- norms (ReduceL2: Swin-v2's normalised attention) -----------------------
    "reduce_l2_last_axis": _case(
        [_node("ReduceL2", ["x"], axes=[-1])], {"x": _X}, opset=17
    ),
    "reduce_l2_axes_input_opset18": _case(
        [_node("ReduceL2", ["x", "a"], keepdims=0)],
        {"x": _X},
        opset=18,
        initializers={"a": _i64(0, 2)},
    ),
    "reduce_l2_noop_empty_axes_opset18": _case(
        [_node("ReduceL2", ["x"], noop_with_empty_axes=1)], {"x": _X}, opset=18
    ),
    "reduce_l1_all_axes": _case([_node("ReduceL1", ["x"])], {"x": _X}),
    "reduce_sum_square": _case(
        [_node("ReduceSumSquare", ["x"], axes=[1], keepdims=0)], {"x": _X}
    ),
    "reduce_log_sum": _case(
        [_node("ReduceLogSum", ["x"], axes=[2])], {"x": np.abs(_X) + 0.1}
    ),
    # -- Slice with negative steps (x[::-1], as Swin's exports slice) ---------
    "slice_reversed_whole_axis": _case(
        [_node("Slice", ["x", "s", "e", "a", "t"])],
        {"x": _X},
        initializers={
            "s": _i64(-1),
            "e": _i64(-(2**63)),
            "a": _i64(2),
            "t": _i64(-1),
        },
    ),
    "slice_negative_steps_clamped_and_mixed": _case(
        [_node("Slice", ["x", "s", "e", "a", "t"])],
        {"x": _X},
        initializers={
            "s": _i64(100, 1, 6),
            "e": _i64(0, 5, -9),
            "a": _i64(1, 0, -1),
            "t": _i64(-2, 1, -3),
        },
    ),
    "slice_negative_step_empty": _case(
        [
            _node("Slice", ["x", "s", "e", "a", "t"], "z"),
            _node("Concat", ["z", "x"], axis=2),
        ],
        {"x": _X},
        initializers={"s": _i64(2), "e": _i64(5), "a": _i64(2), "t": _i64(-1)},
    ),
    "split_input_sizes_opset13": _case(
        [
            helper.make_node("Split", ["x", "s"], ["a", "b"], axis=-1),
            _node("Concat", ["b", "a"], axis=-1),
        ],
        {"x": _X},
        opset=13,
        initializers={"s": _i64(3, 5)},
    ),
    "split_num_outputs_opset18": _case(
        [
            helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3),
            _node("Concat", ["c", "b", "a"], axis=1),
        ],
        {"x": _normal(2, 7)},
        opset=18,
    ),
}
"""Operator → a small model and its inputs."""


def _reference(case: Case) -> np.ndarray:
    model, feeds = case
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(None, feeds)[0]


@pytest.mark.parametrize("name", CASES)
def test_operator_against_onnxruntime(name: str) -> None:
    """Interpreted and compiled for the CPU, against onnxruntime."""
    model, feeds = CASES[name]
    expected = _reference(CASES[name])
    module = from_onnx(model)
    inputs = list(feeds.values())
    np.testing.assert_allclose(run(module, *inputs), expected, rtol=RTOL, atol=ATOL)
    compiled = hetero.compile(module)(*inputs)
    np.testing.assert_allclose(compiled, expected, rtol=RTOL, atol=ATOL)


# ----------------------------------------------------------------------------
# Folding at import
# ----------------------------------------------------------------------------


def _op_names(model: onnx.ModelProto) -> list[str]:
    return [op.name for op in from_onnx(model).walk()]


def _check(case: Case) -> None:
    model, feeds = case
    compiled = hetero.compile(from_onnx(model))(*feeds.values())
    np.testing.assert_allclose(compiled, _reference(case), rtol=RTOL, atol=ATOL)


@pytest.fixture
def no_reference_evaluator(monkeypatch: pytest.MonkeyPatch) -> None:
    """The `onnx` package's reference evaluator fails when asked."""
    import onnx.reference

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("folded by the onnx reference evaluator")

    monkeypatch.setattr(onnx.reference, "ReferenceEvaluator", refuse)


def test_gather_elements_of_constants_folds_through_the_importer(
    no_reference_evaluator: None,
) -> None:
    """A BERT-style constant GatherElements (and the Transpose, Trilu and
    CumSum of constants around it) folds through the converters and the
    relay interpreter: nothing of it is left in the module."""
    case = _case(
        [
            _node("Transpose", ["table"], "t", perm=[1, 0]),
            _node("GatherElements", ["t", "i"], "g", axis=1),
            _node("Trilu", ["g"], "u"),
            _node("CumSum", ["u", "a"], "c"),
            _node("Add", ["x", "c"]),
        ],
        {"x": _normal(4, 4)},
        opset=14,
        initializers={
            "table": _normal(6, 4),
            "i": np.array([[0, 5, 2, 1]] * 4, np.int64),
            "a": np.array(0, np.int64),
        },
    )
    names = _op_names(case[0])
    assert "relay.take" not in names and "relay.where" not in names, names
    _check(case)


def test_shape_arithmetic_folds_natively(no_reference_evaluator: None) -> None:
    """Shape, Size, ReduceProd/Max/Min, Mod and Range of shapes, and the
    `Where(Equal(shape, -1), 1, shape)` that torch's `expand(-1, ...)`
    exports, fold to constants: one reshape, one add are left."""
    case = _case(
        [
            _node("Shape", ["x"], "s"),
            _node("Size", ["x"], "n"),
            _node("ReduceProd", ["s"], "p", keepdims=1),
            _node("Mod", ["p", "n"], "zero"),
            _node("ReduceMax", ["s"], "high", keepdims=0),
            _node("ReduceMin", ["s"], "low", keepdims=0),
            _node("Sub", ["low", "two"], "start"),
            _node("Range", ["start", "high", "one"], "r"),
            _node("Equal", ["want", "minus"], "free"),
            _node("Where", ["free", "one", "want"], "shape"),
            _node("Add", ["shape", "zero"], "target"),
            _node("Reshape", ["x", "target"], "flat"),
            _node("Cast", ["r"], "f", to=TensorProto.FLOAT),
            _node("Expand", ["f", "s2"], "e"),
            _node("Add", ["flat", "e"]),
        ],
        {"x": _normal(2, 3, 4)},
        opset=13,
        initializers={
            "two": np.array(2, np.int64),
            "one": np.array(1, np.int64),
            "want": _i64(6, 4),
            "minus": _i64(-1),
            "s2": _i64(6, 1),
        },
    )
    names = _op_names(case[0])
    assert names.count("relay.reshape") == 1 and names.count("relay.add") == 1, names
    _check(case)


def test_expand_to_a_run_time_shape_takes_the_declared_shape() -> None:
    """A shape that is a graph input (the onnx node tests' form) is read
    from the result type the model declares."""
    _check(
        _case(
            [_node("Expand", ["x", "s"])],
            {"x": _normal(3, 1), "s": _i64(2, 1, 6)},
            output_shape=(2, 3, 6),
        )
    )


# ----------------------------------------------------------------------------
# Diagnostics
# ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "case, message",
    [
        (
            _case(
                [_node("Einsum", ["x"], name="e", equation="ii->i")],
                {"x": _normal(3, 3)},
            ),
            (
                r"ONNX node 'e' \(Einsum\): subscripts 'ii' do not name the 2 axes "
                r"of an operand once each \(diagonals are not supported\)"
            ),
        ),
        (
            _case(
                [_node("Range", ["a", "n", "d"], name="r")],
                {"n": np.array(5, np.int64)},
                initializers={"a": np.array(0, np.int64), "d": np.array(1, np.int64)},
                output_type=TensorProto.INT64,
            ),
            r"ONNX node 'r' \(Range\): start, limit and delta must be constants",
        ),
        (
            _case(
                [
                    helper.make_node(
                        "LayerNormalization", ["x", "g"], ["y", "m"], name="ln"
                    )
                ],
                {"x": _X},
                initializers={"g": _normal(8)},
            ),
            r"ONNX node 'ln' \(LayerNormalization\): the Mean and InvStdDev",
        ),
        (
            _case(
                [_node("Expand", ["x", "s"], name="ex")],
                {"x": _normal(3, 1), "s": _i64(2, 1, 6)},
            ),
            r"ONNX node 'ex' \(Expand\): the target shape must be known at import",
        ),
        (
            _case(
                [_node("Gelu", ["x"], name="g", approximate="erf")],
                {"x": _X},
                opset=20,
            ),
            r"ONNX node 'g' \(Gelu\): approximate 'erf' is not supported",
        ),
        (
            _case(
                [_node("CumSum", ["x", "a"], name="c")],
                {"x": _X, "a": np.array(1, np.int64)},
            ),
            r"ONNX node 'c' \(CumSum\): input 1 \('a'\) must be a constant",
        ),
        (
            _case(
                [_node("Slice", ["x", "s", "e", "a", "t"], name="sl")],
                {"x": _X},
                initializers={"s": _i64(0), "e": _i64(4), "a": _i64(1), "t": _i64(0)},
            ),
            r"ONNX node 'sl' \(Slice\): a slice step of 0",
        ),
        (
            _case(
                [_node("Resize", ["x", "", "s"], name="rs", mode="cubic")],
                {"x": _normal(1, 1, 3, 3)},
                opset=13,
                initializers={"s": np.array([1, 1, 2, 2], np.float32)},
            ),
            r"ONNX node 'rs' \(Resize\): mode 'cubic' .* is not supported",
        ),
        (
            _case(
                [_node("Resize", ["x", "", "s"], name="rs")],
                {"x": _normal(1, 1, 3, 3), "s": np.array([1, 1, 2, 2], np.float32)},
                opset=13,
            ),
            r"ONNX node 'rs' \(Resize\): the scales must be constants",
        ),
        (
            _case(
                [_node("GroupNormalization", ["x", "s", "b"], name="gn", num_groups=0)],
                {"x": _normal(1, 4, 2, 2)},
                opset=18,
                initializers={"s": _normal(2), "b": _normal(2)},
            ),
            r"ONNX node 'gn' \(GroupNormalization\): num_groups must be positive, got 0",
        ),
        (
            _case(
                [_node("DepthToSpace", ["x"], name="d2s", blocksize=0)],
                {"x": _normal(1, 4, 2, 2)},
            ),
            r"ONNX node 'd2s' \(DepthToSpace\): blocksize must be positive, got 0",
        ),
    ],
    ids=[
        "einsum-diagonal",
        "range-run-time",
        "layer-norm-mean",
        "expand-unknown",
        "gelu-approximate",
        "cumsum-run-time-axis",
        "slice-step-zero",
        "resize-cubic",
        "resize-run-time-scales",
        "group-norm-no-groups",
        "depth-to-space-block-0",
    ],
)
def test_what_stays_out_is_a_located_diagnostic(case: Case, message: str) -> None:
    with pytest.raises(HeteroError, match=message):
        from_onnx(case[0])


def test_the_shape_of_a_dynamic_value_folds_to_its_sizes() -> None:
    """A static `Shape` folds to a constant; a dynamic one to sizes, which a
    reshape writes as `0` (the input's own dimension; the cases:
    tests/test_onnx_dynamic.py)."""
    model, _ = _case(
        [
            _node("Shape", ["x"], "s", name="sh"),
            _node("Reshape", ["x", "s"], name="r"),
        ],
        {"x": _X},
    )
    (reshape,) = [
        op
        for op in from_onnx(model, batch="dynamic").walk()
        if op.name == "relay.reshape"
    ]
    assert reshape.newshape == (0, 5, 8)  # type: ignore[attr-defined]


def test_a_backward_slice_of_a_dynamic_dimension_is_a_located_diagnostic() -> None:
    """Its positions depend on the size, which is known only at run time."""
    model, _ = _case(
        [_node("Slice", ["x", "s", "e", "a", "t"], name="sl")],
        {"x": _X},
        initializers={"s": _i64(-1), "e": _i64(-9), "a": _i64(0), "t": _i64(-1)},
    )
    message = r"ONNX node 'sl' \(Slice\): negative slice steps on a dynamic dimension"
    with pytest.raises(HeteroError, match=message):
        from_onnx(model, batch="dynamic")


# ----------------------------------------------------------------------------
# Transformer blocks as the exporters write them
# ----------------------------------------------------------------------------

_D, _HEADS, _SEQ = 16, 2, 5


def _linear(x: str, name: str, out: int, inits: dict[str, np.ndarray]) -> list:
    """`nn.Linear` of a 3-D input: MatMul by a constant [in, out], Add bias."""
    inits[f"{name}_w"] = _normal(_D, out, scale=0.3)
    inits[f"{name}_b"] = _normal(out, scale=0.1)
    return [
        _node("MatMul", [x, f"{name}_w"], f"{name}_m"),
        _node("Add", [f"{name}_m", f"{name}_b"], name),
    ]


def _heads(x: str, name: str) -> list:
    """[1, S, D] -> [1, H, S, D/H]."""
    return [
        _node("Reshape", [x, "head_shape"], f"{name}_r"),
        _node("Transpose", [f"{name}_r"], name, perm=[0, 2, 1, 3]),
    ]


def _block(causal: bool) -> Case:
    """A BERT encoder layer (padding mask from an int64 input, erf GELU,
    post-norm) or a GPT-2 block (causal mask folded from Trilu of
    constants, tanh GELU with Pow, pre-norm), token and position
    embeddings first."""
    inits = {
        "embedding": _normal(11, _D),
        "positions": _normal(_SEQ, _D),
        "head_shape": _i64(1, _SEQ, _HEADS, _D // _HEADS),
        "merged": _i64(1, _SEQ, _D),
        "scale": np.float32(1 / np.sqrt(_D // _HEADS)),
        "g1": _normal(_D, shift=1.0),
        "b1": _normal(_D, scale=0.1),
        "g2": _normal(_D, shift=1.0),
        "b2": _normal(_D, scale=0.1),
        "one": np.float32(1.0),
        "minus": np.float32(-1e9),
        "three": np.float32(3.0),
        "axes": _i64(1, 2),
    }
    nodes = [
        _node("Gather", ["embedding", "ids"], "tokens"),
        _node("Add", ["tokens", "positions"], "h"),
        _node("LayerNormalization", ["h", "g1", "b1"], "n1"),
    ]
    attention_input = "n1" if causal else "h"
    for name in ("q", "k", "v"):
        nodes += _linear(attention_input, name, _D, inits)
        nodes += _heads(name, f"{name}h")
    nodes += [
        _node("Transpose", ["kh"], "kt", perm=[0, 1, 3, 2]),
        _node("MatMul", ["qh", "kt"], "scores"),
        _node("Mul", ["scores", "scale"], "scaled"),
    ]
    if causal:
        inits["ones"] = np.ones((_SEQ, _SEQ), np.float32)
        nodes += [
            _node("Trilu", ["ones"], "lower", upper=0),
            _node("Cast", ["lower"], "keep", to=TensorProto.BOOL),
            _node("Where", ["keep", "scaled", "minus"], "masked"),
        ]
    else:
        nodes += [
            _node("Unsqueeze", ["mask", "axes"], "mask4"),
            _node("Cast", ["mask4"], "maskf", to=TensorProto.FLOAT),
            _node("Sub", ["one", "maskf"], "hidden"),
            _node("Mul", ["hidden", "minus"], "bias"),
            _node("Add", ["scaled", "bias"], "masked"),
        ]
    nodes += [
        _node("Softmax", ["masked"], "p", axis=-1),
        _node("MatMul", ["p", "vh"], "context"),
        _node("Transpose", ["context"], "ct", perm=[0, 2, 1, 3]),
        _node("Reshape", ["ct", "merged"], "cm"),
        *_linear("cm", "o", _D, inits),
        _node("Add", ["o", "h"], "r1"),
    ]
    if causal:
        nodes += [
            _node("LayerNormalization", ["r1", "g2", "b2"], "n2"),
            *_linear("n2", "up", _D, inits),
            _node("Pow", ["up", "three"], "cube"),
            _node("Gelu", ["up"], "act", approximate="tanh"),
            _node("Add", ["act", "cube"], "mixed"),
            *_linear("mixed", "down", _D, inits),
            _node("Add", ["down", "r1"], "y"),
        ]
    else:
        nodes += [
            _node("LayerNormalization", ["r1", "g2", "b2"], "n2"),
            *_linear("n2", "up", _D, inits),
            _node("Gelu", ["up"], "act"),
            *_linear("act", "down", _D, inits),
            _node("Add", ["down", "n2"], "r2"),
            _node("LayerNormalization", ["r2", "g1", "b1"], "y"),
        ]
    feeds = {"ids": np.array([[3, 1, 4, 1, 5]], np.int64)}
    if not causal:
        feeds["mask"] = np.array([[1, 1, 1, 0, 0]], np.int64)
    return _case(nodes, feeds, opset=20, initializers=inits)


@pytest.mark.parametrize("causal", [False, True], ids=["bert-layer", "gpt2-block"])
def test_transformer_block(causal: bool) -> None:
    model, feeds = case = _block(causal)
    expected = _reference(case)
    module = from_onnx(model)
    np.testing.assert_allclose(
        run(module, *feeds.values()), expected, rtol=RTOL, atol=1e-4
    )
    compiled = hetero.compile(module)(*feeds.values())
    np.testing.assert_allclose(compiled, expected, rtol=RTOL, atol=1e-4)
