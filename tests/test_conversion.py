"""What the `convert-*-to-llvm` passes share (`hetero.lowering.conversion`)."""

from xdsl.dialects import func, llvm
from xdsl.pattern_rewriter import PatternRewriter

from hetero.context import parse_module
from hetero.lowering.conversion import declare_function, lookup_symbol

PROGRAM = """
func.func private @f()
func.func @g() {
  func.return
}
"""


def test_lookup_symbol_answers_for_the_module_as_it_is_now():
    """Symbols are remembered per module, but an erased one is not found
    again, and one declared in its place is."""
    module = parse_module(PROGRAM)
    f, g = module.ops
    assert lookup_symbol(module, "f") is f
    assert lookup_symbol(module, "g") is g
    assert lookup_symbol(module, "h") is None
    module.body.block.erase_op(f)
    assert lookup_symbol(module, "f") is None
    again = func.FuncOp.external("f", [], [])
    module.body.block.add_op(again)
    assert lookup_symbol(module, "f") is again
    assert lookup_symbol(parse_module(PROGRAM), "f") is not again


def test_declare_function_declares_once():
    module = parse_module(PROGRAM)
    returned = module.ops.last.body.block.last_op
    rewriter = PatternRewriter(returned)
    void = llvm.LLVMFunctionType([])
    for _ in range(3):
        declare_function(returned, "hetero_buffer_give", void, rewriter)
    declarations = [op for op in module.ops if isinstance(op, llvm.FuncOp)]
    assert [d.sym_name.data for d in declarations] == ["hetero_buffer_give"]
    assert lookup_symbol(module, "hetero_buffer_give") is declarations[0]
