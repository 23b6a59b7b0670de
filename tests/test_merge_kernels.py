"""`merge-kernels`: merged kernels compute what each kernel computed, compiled
and interpreted; `hetero.compile` merges a network's same-schedule layers.
(The pass's rules are in tests/filecheck/transforms/merge-kernels.mlir.)"""

import llvmlite.binding as llvm
import numpy as np
from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument
from xdsl.traits import SymbolTable

import hetero
from hetero.context import parse_module
from hetero.dialects import tir
from hetero.driver import lower_to_tir
from hetero.interpreter.relay import run
from hetero.interpreter.tir import run_prim_func
from hetero.lowering.cpu_codegen import compile_cpu
from hetero.lowering.merge_kernels import MergeKernelsPass


def _scale(name: str, rows: int, columns: int) -> str:
    """A kernel `b = 2 * a` over `rows x columns`, its loop bounds constants."""
    t = f"memref<{rows}x{columns}xf32>"
    return f"""
  tir.prim_func @{name}(%a: {t}, %b: {t}) target #target.target<"llvm"> {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant {rows} : index
    %columns = arith.constant {columns} : index
    %two = arith.constant 2.0 : f32
    tir.for %i = %c0 to %rows step %c1 {{
      tir.for %j = %c0 to %columns step %c1 {{
        %x = memref.load %a[%i, %j] : {t}
        %y = arith.mulf %x, %two : f32
        memref.store %y, %b[%i, %j] : {t}
      }}
    }}
  }}"""


SHAPES = {"scale_1": (3, 5), "scale_2": (4, 5), "scale_3": (2, 7)}


def _merged_scales():
    module = parse_module(
        "builtin.module {" + "".join(_scale(n, *s) for n, s in SHAPES.items()) + "\n}"
    )
    MergeKernelsPass().apply(Context(), module)
    module.verify()
    return module


def test_merged_kernels_share_one_body():
    module = _merged_scales()
    functions = {
        op.sym_name.data: op for op in module.ops if isinstance(op, tir.PrimFuncOp)
    }
    assert set(functions) == {*SHAPES, "scale_shared"}
    calls = [
        op for n in SHAPES for op in functions[n].walk() if isinstance(op, tir.CallOp)
    ]
    assert {c.callee.string_value() for c in calls} == {"scale_shared"}
    shared = functions["scale_shared"]
    assert [str(t) for t in shared.function_type.inputs] == [
        "memref<?x?xf32>",
        "memref<?x?xf32>",
        "index",
        "index",
    ]


def test_merged_kernels_run_natively_like_each_kernel():
    native = compile_cpu(_merged_scales(), jobs=1)
    rng = np.random.default_rng(0)
    for name, shape in SHAPES.items():
        a = rng.standard_normal(shape).astype(np.float32)
        b = np.zeros(shape, np.float32)
        native.function(name)(a, b)
        np.testing.assert_array_equal(b, 2 * a)


def test_merged_kernels_interpret_like_each_kernel():
    module = _merged_scales()
    for name, shape in SHAPES.items():
        a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        b = np.zeros(shape, np.float32)
        run_prim_func(module, name, a, b)
        np.testing.assert_array_equal(b, 2 * a)


NETWORK = """builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%x: tensor<1x16x8x8xf32>, %w1: tensor<16x16x1x1xf32>, %w2: tensor<32x16x1x1xf32>) -> tensor<1x32x8x8xf32> {
    %0 = relay.nn.conv2d %x, %w1 : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32>
    %1 = relay.relu %0 : tensor<1x16x8x8xf32>
    %2 = relay.nn.conv2d %1, %w2 : (tensor<1x16x8x8xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x8x8xf32>
    %r = relay.relu %2 : tensor<1x32x8x8xf32>
    relay.return %r : tensor<1x32x8x8xf32>
  }
}"""


def _every_other(name: str, columns: int, target: str) -> str:
    """`b[i, j] = a[i, 2j + 1]` over 3 rows of `columns`, the columns a
    `vectorized` loop (lanes two apart, as a pooling's taps)."""
    a, b = f"memref<3x{2 * columns + 2}xf32>", f"memref<3x{columns}xf32>"
    return f"""
  tir.prim_func @{name}(%a: {a}, %b: {b}) target #target.target<"llvm"{target}> {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %n = arith.constant {columns} : index
    tir.for %i = %c0 to %c3 step %c1 {{
      tir.for %j = %c0 to %n step %c1 vectorized {{
        %t = arith.muli %j, %c2 : index
        %k = arith.addi %t, %c1 : index
        %x = memref.load %a[%i, %k] : {a}
        memref.store %x, %b[%i, %j] : {b}
      }}
    }}
  }}"""


ROWS = {"rows_1": 21, "rows_2": 7, "rows_3": 40}


def _merged_rows(target: str) -> ModuleOp:
    module = parse_module(
        "builtin.module {"
        + "".join(_every_other(n, c, target) for n, c in ROWS.items())
        + "\n}"
    )
    MergeKernelsPass().apply(Context(), module)
    module.verify()
    return module


def test_vectorized_loops_of_other_extents_share_a_kernel_with_avx512():
    """With AVX-512 a vectorized loop of run-time extent is masked vectors,
    so rows of 21, 7 and 40 columns share a kernel that takes the extent;
    the shared kernel computes each kernel's rows, compiled (on an AVX-512
    host) and interpreted.  With AVX2 the loops would lose their narrower
    remainder vectors: no merge."""
    assert not any(
        op.sym_name.data == "rows_shared"
        for op in _merged_rows(
            ', {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}'
        ).ops
    )
    module = _merged_rows(", " + AVX512)
    shared = SymbolTable.lookup_symbol(module, "rows_shared")
    assert isinstance(shared, tir.PrimFuncOp)
    loop = next(
        op
        for op in shared.walk()
        if isinstance(op, tir.ForOp) and op.kind.data == tir.ForKind.VECTORIZED
    )
    assert isinstance(loop.ub, BlockArgument)
    native = (
        compile_cpu(module.clone(), jobs=1)
        if llvm.get_host_cpu_features().get("avx512f")
        else None
    )
    rng = np.random.default_rng(1)
    for name, columns in ROWS.items():
        a = rng.standard_normal((3, 2 * columns + 2)).astype(np.float32)
        expected = a[:, 1 : 2 * columns : 2]
        b = np.full((3, columns), 7.0, np.float32)
        run_prim_func(module, name, a, b)
        np.testing.assert_array_equal(b, expected)
        if native is not None:
            b = np.full((3, columns), 7.0, np.float32)
            native.function(name)(a, b)
            np.testing.assert_array_equal(b, expected)


def _concatenations(size: int, target: str = "") -> str:
    """Two concatenations along the channels at `size` x `size` (8 + 16 and
    24 + 24 channels), a 1x1 convolution between them."""
    t = [f"tensor<1x{c}x{size}x{size}xf32>" for c in (8, 16, 24, 48)]
    w = "tensor<24x24x1x1xf32>"
    return (
        "builtin.module attributes {target.config = "
        f'#target.config<[#target.target<"llvm"{target}>]>}} {{\n'
        f"  relay.func @main(%x: {t[0]}, %y: {t[1]}, %z: {t[2]}, %w: {w}) -> {t[3]} {{\n"
        f"    %0 = relay.concatenate %x, %y {{axis = 1 : i64}} : ({t[0]}, {t[1]}) -> {t[2]}\n"
        f"    %1 = relay.nn.conv2d %0, %w : ({t[2]}, {w}) -> {t[2]}\n"
        f"    %2 = relay.concatenate %1, %z {{axis = 1 : i64}} : ({t[2]}, {t[2]}) -> {t[3]}\n"
        f"    relay.return %2 : {t[3]}\n  }}\n}}"
    )


def test_concatenations_of_other_depths_share_a_kernel():
    """The channel offset where a concatenation's second input goes is a
    uniform value in its vectorized copy: a parameter, so concatenations of
    other depths share a kernel (Inception v1: 9 of its kernels)."""
    (shared,) = _shared_kernels(_concatenations(13))
    assert [str(t) for t in shared.function_type.inputs.data] == [
        "memref<1x?x13x13xf32>",
        "memref<1x?x13x13xf32>",
        "memref<1x?x13x13xf32>",
        "index",
        "index",
    ]
    _check_against_reference(_concatenations(13))


def test_compile_merges_layers_of_one_schedule():
    """Two 1x1 convolutions of 16 and 32 output channels: one kernel."""
    module = parse_module(NETWORK)
    lower_to_tir(module)
    names = [op.sym_name.data for op in module.ops if isinstance(op, tir.PrimFuncOp)]
    assert sum(n.endswith("_shared") for n in names) == 1, names


def test_compiled_network_with_merged_layers_matches_the_reference():
    rng = np.random.default_rng(1)
    x, w1, w2 = (
        rng.standard_normal(s).astype(np.float32)
        for s in ((1, 16, 8, 8), (16, 16, 1, 1), (32, 16, 1, 1))
    )
    compiled = hetero.compile(NETWORK)
    np.testing.assert_allclose(
        compiled(x, w1, w2), run(parse_module(NETWORK), x, w1, w2), rtol=1e-5, atol=1e-5
    )


def _conv_pool_conv(channels: int, size: int, addend: str = "") -> str:
    """conv 1x1 + relu at `size`, a 2x2 max pool, conv 1x1 + relu at half
    the size; `addend` (a shape) adds a parameter after each conv."""
    half = size // 2

    def layer(i: int, x: str, s: int) -> str:
        t = f"tensor<1x{channels}x{s}x{s}xf32>"
        w = f"tensor<{channels}x{channels}x1x1xf32>"
        out = f"%c{i}"
        text = f"    {out} = relay.nn.conv2d {x}, %w{i} : ({t}, {w}) -> {t}\n"
        if addend:
            b = f"tensor<{addend.format(s=s)}xf32>"
            text += f"    %a{i} = relay.add {out}, %b{i} : ({t}, {b}) -> {t}\n"
            out = f"%a{i}"
        return text + f"    %r{i} = relay.relu {out} : {t}\n"

    params = [f"%x: tensor<1x{channels}x{size}x{size}xf32>"]
    for i in (1, 2):
        params.append(f"%w{i}: tensor<{channels}x{channels}x1x1xf32>")
        if addend:
            params.append(
                f"%b{i}: tensor<{addend.format(s=size if i == 1 else half)}xf32>"
            )
    big, small = (f"tensor<1x{channels}x{s}x{s}xf32>" for s in (size, half))
    return (
        'builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {\n'
        f"  relay.func @main({', '.join(params)}) -> {small} {{\n"
        + layer(1, "%x", size)
        + f"    %p = relay.nn.max_pool2d %r1 {{pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : ({big}) -> {small}\n"
        + layer(2, "%p", half)
        + f"    relay.return %r2 : {small}\n  }}\n}}"
    )


def _shared_kernels(text: str) -> list[tir.PrimFuncOp]:
    module = parse_module(text)
    lower_to_tir(module)
    return [
        op
        for op in module.ops
        if isinstance(op, tir.PrimFuncOp) and op.sym_name.data.endswith("_shared")
    ]


def _check_against_reference(text: str) -> None:
    """`hetero.compile(text)` against the reference interpreter, on random
    inputs; errors up to 1e-5 of the largest result (at least 1e-5): a
    float sum's rounding grows with its terms, and Winograd's with the
    largest output (tests/test_winograd.py)."""
    module = parse_module(text)
    main = next(op for op in module.ops if op.sym_name.data == "main")  # type: ignore[attr-defined]
    rng = np.random.default_rng(2)
    inputs = [
        rng.standard_normal(t.get_shape()).astype(np.float32)
        for t in main.function_type.inputs.data  # type: ignore[attr-defined]
    ]
    expected = run(module, *inputs)
    atol = 1e-5 * max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(
        hetero.compile(text)(*inputs), expected, rtol=1e-5, atol=atol
    )


def test_layers_of_other_image_sizes_share_a_kernel():
    """The schedules store a run of pixels across rows at `[n, o, 0, p]`, so
    the image's size is a parameter: 1x1 convolutions at 16x16 and 8x8."""
    text = _conv_pool_conv(64, 16)
    (shared,) = _shared_kernels(text)
    assert str(shared.function_type.inputs.data[0]) == "memref<1x64x?x?xf32>"
    _check_against_reference(text)


def test_an_epilogue_broadcast_along_rows_keeps_rows_and_columns():
    """An addend of one value per column (`[W]`) reads other elements at a
    flattened pixel index than at its row and column: such a conv stores at
    row and column, the image width stays a constant, the layers do not
    merge, and the results are right."""
    text = _conv_pool_conv(64, 16, addend="{s}")
    assert not _shared_kernels(text)
    _check_against_reference(text)


def test_an_epilogue_of_whole_images_or_channels_stores_flattened():
    """An addend as large as the result, or one value per channel, reads the
    same elements either way: the layers merge."""
    for addend in ("1x64x{s}x{s}", "64x1x1"):
        text = _conv_pool_conv(64, 16, addend=addend)
        assert len(_shared_kernels(text)) == 1, addend
        _check_against_reference(text)


def test_a_uniform_emitter_keeps_identities():
    """`Emitter.uniform` (the conv schedules): `x * 1`, `x + 0`, `x % 1`,
    `x // 1` stay ops, so that kernels for other shapes have the same ops."""
    from xdsl.dialects.builtin import IndexType
    from xdsl.ir import Block

    from hetero.te.emit import Emitter

    block = Block(arg_types=[IndexType()])
    x = block.args[0]
    plain = Emitter(block, block, {})
    assert [plain.mul(x, 1), plain.add(x, 0), plain.div(x, 1), plain.rem(x, 1)] == [
        x,
        x,
        x,
        0,
    ]
    uniform = plain.uniformly()
    results = [
        uniform.mul(x, 1),
        uniform.add(x, 0),
        uniform.div(x, 1),
        uniform.rem(x, 1),
    ]
    assert all(r is not x and not isinstance(r, int) for r in results)
    assert uniform.at(block).uniform and uniform.mul(3, 1) == 3


AVX512 = '{mcpu = "x86-64", mattr = ["+avx512f"]}'
"""A target whose kernels are the same on any host (for structure only:
the host may lack AVX-512)."""


def _conv_pair(
    window: int, size: int, channels: tuple[int, int, int], target: str = ""
) -> str:
    """Two `window` x `window` convolutions (padded to keep the size) +
    relu at `size` x `size`, from `channels[0]` to `channels[1]` and then
    to `channels[2]` channels, of constant weights (which `alter-op-layout`
    packs as the schedule asks)."""
    rng = np.random.default_rng(3)
    a, b, c = channels
    x, y, z = (f"tensor<1x{n}x{size}x{size}xf32>" for n in channels)
    shapes = ((b, a, window, window), (c, b, window, window))
    weights = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    w1, w2 = (f"tensor<{'x'.join(map(str, w.shape))}xf32>" for w in weights)
    hex1, hex2 = ("0x" + w.astype("<f4").tobytes().hex().upper() for w in weights)
    pad = window // 2
    attrs = f" {{padding = array<i64: {pad}, {pad}, {pad}, {pad}>}}" if pad else ""
    return (
        "builtin.module attributes {target.config = "
        f'#target.config<[#target.target<"llvm"{target}>]>}} {{\n'
        f"  relay.func @main(%x: {x}) -> {z} {{\n"
        f'    %w1 = relay.constant dense<"{hex1}"> : {w1}\n'
        f'    %w2 = relay.constant dense<"{hex2}"> : {w2}\n'
        f"    %0 = relay.nn.conv2d %x, %w1{attrs} : ({x}, {w1}) -> {y}\n"
        f"    %1 = relay.relu %0 : {y}\n"
        f"    %2 = relay.nn.conv2d %1, %w2{attrs} : ({y}, {w2}) -> {z}\n"
        f"    %3 = relay.relu %2 : {z}\n"
        f"    relay.return %3 : {z}\n  }}\n}}"
    )


def test_kernels_with_workspaces_of_other_sizes_share_a_kernel():
    """Winograd convolutions of 32 and 64 input channels: their workspaces
    (a heap arena and views of it) differ in size only, so the shared
    kernel allocates and views them at sizes it is passed.  The results
    are right on this host, whether its kernels merge or not."""
    (shared,) = _shared_kernels(_conv_pair(3, 13, (32, 64, 64), ", " + AVX512))
    ops = list(shared.walk())
    (arena,) = (op for op in ops if isinstance(op, tir.AllocOp) and op.dynamic_sizes)
    assert str(arena.buffer.type) == "memref<?xi8>"
    assert any(isinstance(op, memref.ViewOp) and op.sizes for op in ops)
    _check_against_reference(_conv_pair(3, 13, (32, 64, 64)))


def test_pointwise_layers_of_other_depths_share_a_kernel():
    """1x1 convolutions of 32 and 64 input channels in pixel lanes: their
    weights packed by tile rows (`OIHW8o`), a tile's rows of weights are
    consecutive for any depth, so the depth is a parameter.  The results
    are right on this host, whether its kernels merge or not."""
    (shared,) = _shared_kernels(_conv_pair(1, 8, (32, 64, 64), ", " + AVX512))
    assert str(shared.function_type.inputs.data[1]) == "memref<8x?x1x1x8xf32>"
    _check_against_reference(_conv_pair(1, 8, (32, 64, 64)))
