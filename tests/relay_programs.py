"""A hypothesis strategy for random well-typed relay programs (as text).

The generator writes relay text directly — an independent spelling of the
syntax in docs/dialects/relay.md — keeping its own table of value shapes.
Programs use every structural op (calls, closures, tuples, `if`), the device
operators with random devices, and elementwise/shape operators, under a
two-target configuration; they take float32 tensor parameters.
"""

from dataclasses import dataclass, field

from hypothesis import strategies as st

DEVICES = [
    "#target.vdevice<cpu>",
    "#target.vdevice<cuda:0>",
    '#target.vdevice<cpu:1, scope = "global">',
    '#target.vdevice<?, target = #target.target<"cuda">>',
]
CONFIG = '#target.config<[#target.target<"llvm">, #target.target<"cuda">]>'
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum"]
UNARY = ["negative", "exp", "tanh", "sigmoid", "relu"]


def tensor(shape: tuple[int, ...]) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


@dataclass
class Builder:
    """Emits SSA lines while tracking the tensor shape of every value."""

    draw: st.DrawFn
    lines: list[str] = field(default_factory=list)
    values: dict[str, tuple[int, ...]] = field(default_factory=dict)
    counter: int = 0

    def fresh(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    def pick(self, shape: tuple[int, ...] | None = None) -> str:
        names = [n for n, s in self.values.items() if shape is None or s == shape]
        return self.draw(st.sampled_from(sorted(names)))

    def emit(self, text: str, shape: tuple[int, ...]) -> str:
        name = self.fresh()
        self.lines.append(f"    {name} = {text}")
        self.values[name] = shape
        return name

    def step(self) -> None:
        kind = self.draw(
            st.sampled_from(
                [
                    "binary",
                    "unary",
                    "constant",
                    "on_device",
                    "copy",
                    "transpose",
                    "reshape",
                    "concat",
                    "tuple",
                    "if",
                    "closure",
                    "closure",
                    "clip",
                ]
            )
        )
        getattr(self, f"_{kind}")()

    def _binary(self) -> None:
        a = self.pick()
        shape = self.values[a]
        b = self.pick(shape)
        op = self.draw(st.sampled_from(BINARY))
        self.emit(f"relay.{op} {a}, {b} : {tensor(shape)}", shape)

    def _unary(self) -> None:
        a = self.pick()
        op = self.draw(st.sampled_from(UNARY))
        self.emit(f"relay.{op} {a} : {tensor(self.values[a])}", self.values[a])

    def _clip(self) -> None:
        a = self.pick()
        t = tensor(self.values[a])
        self.emit(
            f"relay.clip {a} {{a_max = 6.0 : f64, a_min = 0.0 : f64}} : {t}",
            self.values[a],
        )

    def _constant(self) -> None:
        shape = self.values[self.pick()]
        value = self.draw(st.sampled_from(["0.5", "-2.0", "1.0e+10"]))
        self.emit(f"relay.constant dense<{value}> : {tensor(shape)}", shape)

    def _on_device(self) -> None:
        a = self.pick()
        t = tensor(self.values[a])
        form = self.draw(st.sampled_from(["", " fixed", " result_only", "free"]))
        dev = self.draw(st.sampled_from(DEVICES))
        text = (
            f"relay.on_device {a} free : {t}"
            if form == "free"
            else (f"relay.on_device {a} to {dev}{form} : {t}")
        )
        self.emit(text, self.values[a])

    def _copy(self) -> None:
        a = self.pick()
        src, dst = (
            self.draw(st.sampled_from(DEVICES)),
            self.draw(st.sampled_from(DEVICES)),
        )
        self.emit(
            f"relay.device_copy {a} from {src} to {dst} : {tensor(self.values[a])}",
            self.values[a],
        )

    def _transpose(self) -> None:
        a = self.pick()
        shape = self.values[a]
        out = tuple(reversed(shape))
        self.emit(f"relay.transpose {a} : ({tensor(shape)}) -> {tensor(out)}", out)

    def _reshape(self) -> None:
        a = self.pick()
        shape = self.values[a]
        size = 1
        for d in shape:
            size *= d
        out = (size,)
        self.emit(
            f"relay.reshape {a} {{newshape = array<i64: -1>}} : "
            f"({tensor(shape)}) -> {tensor(out)}",
            out,
        )

    def _concat(self) -> None:
        a = self.pick()
        shape = self.values[a]
        b = self.pick(shape)
        out = (shape[0] * 2, *shape[1:])
        self.emit(
            f"relay.concatenate {a}, {b} {{axis = 0 : i64}} : "
            f"({tensor(shape)}, {tensor(shape)}) -> {tensor(out)}",
            out,
        )

    def _tuple(self) -> None:
        a, b = self.pick(), self.pick()
        ta, tb = tensor(self.values[a]), tensor(self.values[b])
        t = self.fresh()
        self.lines.append(f"    {t} = relay.tuple({a}, {b}) : tuple<{ta}, {tb}>")
        index = self.draw(st.sampled_from([0, 1]))
        shape = self.values[[a, b][index]]
        self.emit(
            f"relay.get_item {t}[{index}] : tuple<{ta}, {tb}> -> {tensor(shape)}", shape
        )

    def _if(self) -> None:
        a = self.pick()
        shape = self.values[a]
        b = self.pick(shape)
        t = tensor(shape)
        c = self.fresh()
        self.lines.append(f"    {c} = relay.constant dense<true> : tensor<i1>")
        self.emit(
            f"relay.if {c} : tensor<i1> -> {t} {{\n      relay.yield {a} : {t}\n"
            f"    }} else {{\n      relay.yield {b} : {t}\n    }}",
            shape,
        )

    def _closure(self) -> None:
        """A closure applied once, with annotations inside it: its parameter and
        its result may end up on different devices (the closure then lives
        where its result does)."""
        a = self.pick()
        shape = self.values[a]
        t = tensor(shape)
        captured = self.pick(shape)
        f, p = self.fresh(), self.fresh()
        body = [f"    {f} = relay.fn ({p}: {t}) -> {t} {{"]
        operand = p
        annotated = self.draw(
            st.sampled_from(["both", "both", "parameter", "result", "none"])
        )
        if annotated in ("both", "parameter"):
            operand = self.fresh()
            form = self.draw(st.sampled_from(["", " fixed"]))
            body.append(
                f"      {operand} = relay.on_device {p} to "
                f"{self.draw(st.sampled_from(DEVICES))}{form} : {t}"
            )
        result = self.fresh()
        body.append(f"      {result} = relay.add {operand}, {captured} : {t}")
        if annotated in ("both", "result"):
            on_device = self.fresh()
            body.append(
                f"      {on_device} = relay.on_device {result} to "
                f"{self.draw(st.sampled_from(DEVICES))} : {t}"
            )
            result = on_device
        body.append(f"      relay.return {result} : {t}\n    }}")
        self.lines.append("\n".join(body))
        self.emit(f"relay.call_indirect {f}({a}) : ({t}) -> {t}", shape)


@st.composite
def programs(draw: st.DrawFn) -> str:
    builder = Builder(draw)
    shapes = draw(
        st.lists(
            st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
            min_size=1,
            max_size=3,
        )
    )
    params = []
    for i, shape in enumerate(shapes):
        builder.values[f"%p{i}"] = shape
        params.append(f"%p{i}: {tensor(shape)}")
    for _ in range(draw(st.integers(1, 12))):
        builder.step()
    result = builder.pick()
    rt = tensor(builder.values[result])
    body = "\n".join(builder.lines)
    helper = (
        f"  relay.func private @helper(%x: {rt}) -> {rt} attributes {{Inline}} {{\n"
        f"    relay.return %x : {rt}\n  }}\n"
    )
    return (
        f"builtin.module attributes {{target.config = {CONFIG}}} {{\n{helper}"
        f"  relay.func @main({', '.join(params)}) -> {rt} {{\n{body}\n"
        f"    %out = relay.call @helper({result}) : ({rt}) -> {rt}\n"
        f"    relay.return %out : {rt}\n  }}\n}}\n"
    )
