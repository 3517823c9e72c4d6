"""The xhlo pass base class: a frozen dataclass whose fields are its options.

``name{opt=val,other=1,2}`` in a textual pipeline maps to the dataclass fields
(kebab-case on the command line, snake_case in Python), as in xDSL and mlir-opt.
"""

from __future__ import annotations

import dataclasses
import math
import traceback
import typing
from typing import ClassVar

from xhlo._mlir import ir

# Ops whose result views their first (memref) operand: the same memory, nothing copied.
MEMREF_VIEWS = frozenset({"memref.subview", "memref.view", "memref.cast", "memref.reinterpret_cast",
                          "memref.collapse_shape", "memref.expand_shape", "memref.transpose"})


class PassError(Exception):
    """Raised inside a pass to fail it with a diagnostic at ``op``'s location."""

    def __init__(self, op: ir.Operation | ir.OpView | None, message: str):
        self.op = op
        super().__init__(message)


@dataclasses.dataclass(frozen=True)
class ModulePass:
    """A pass over a ``builtin.module``. Subclasses set NAME and implement run()."""

    NAME: ClassVar[str] = ""

    def run(self, module: ir.Operation) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- options ---------------------------------------------------------
    @classmethod
    def description(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0]

    @classmethod
    def option_infos(cls) -> list[tuple[str, str, object]]:
        """(flag name, type name, default) for every option."""
        hints = typing.get_type_hints(cls)
        return [
            (f.name.replace("_", "-"), _type_name(hints[f.name]), f.default)
            for f in dataclasses.fields(cls)
        ]

    @classmethod
    def from_options(cls, options: dict[str, str]) -> "ModulePass":
        if not options:
            return cls()  # the common case: no type hints to resolve
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        kwargs = {}
        for key, text in options.items():
            field = key.replace("-", "_")
            if field not in fields:
                known = ", ".join(n.replace("_", "-") for n in fields) or "none"
                raise ValueError(f"pass '{cls.NAME}' has no option '{key}' (options: {known})")
            kwargs[field] = _parse_option(hints[field], text, cls.NAME, key)
        return cls(**kwargs)

    def pipeline_text(self) -> str:
        """This pass as a textual pipeline element, options that differ from defaults."""
        items = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value != f.default:
                items.append(f"{f.name.replace('_', '-')}={_format_option(value)}")
        return self.NAME + ("{" + " ".join(items) + "}" if items else "")

    # -- running inside an MLIR PassManager --------------------------------
    def __call__(self, op: ir.Operation, pass_) -> None:
        try:
            self.run(op)
        except PassError as err:
            where = err.op.location if err.op is not None else op.location
            where.emit_error(f"{self.NAME}: {err}")
            pass_.signal_pass_failure()
        except Exception as err:  # a bug in the pass: say where, without a traceback
            frame = traceback.extract_tb(err.__traceback__)[-1]
            where = f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"
            op.location.emit_error(f"{self.NAME}: internal error ({where}): {err!r}")
            pass_.signal_pass_failure()


def _type_name(hint) -> str:
    return getattr(hint, "__name__", str(hint))


def _parse_option(hint, text: str, pass_name: str, key: str):
    origin = typing.get_origin(hint)
    try:
        if hint is bool:
            if text in ("", "true", "1"):
                return True
            if text in ("false", "0"):
                return False
            raise ValueError(text)
        if hint is int:
            return int(text)
        if hint is str:
            return text.strip("'\"")
        if origin is tuple:
            (elem, *_) = typing.get_args(hint)
            parts = [p for p in text.strip("'\"").split(",") if p]
            return tuple(_parse_option(elem, p, pass_name, key) for p in parts)
    except ValueError:
        raise ValueError(f"pass '{pass_name}': bad value '{text}' for option '{key}'") from None
    raise TypeError(f"unsupported option type {hint}")


def _format_option(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(_format_option(v) for v in value)
    return str(value)


def op_name(op: ir.Operation | ir.OpView) -> str:
    """The op's name (``OpView.name`` of some ops, such as ``func.func``, is their symbol)."""
    return op.operation.name


def append_definitions(module: ir.Operation, text: str) -> None:
    """Parse ``text`` (MLIR: the functions and globals a pass's lowering calls) and move
    its top-level ops to the end of ``module``."""
    body = module.regions[0].blocks[0]
    parsed = ir.Module.parse(text, module.context)  # alive until its ops have moved: it owns them
    for op in list(parsed.body.operations):
        body.append(op.operation)


def symbol_names(module: ir.Operation) -> set[str]:
    """The names of ``module``'s top-level symbols."""
    return {ir.StringAttr(op.operation.attributes["sym_name"]).value
            for op in module.regions[0].blocks[0].operations if "sym_name" in op.operation.attributes}


def defining_op(value: ir.Value, name: str | None = None) -> ir.Operation | None:
    """The op whose result ``value`` is (None for a block argument, or when it is not
    named ``name``)."""
    if not isinstance(value, ir.OpResult):
        return None
    op = value.owner.operation
    return op if name is None or op.name == name else None


def walk_ops(root: ir.Operation, name: str | tuple[str, ...] | None) -> list[ir.Operation]:
    """All ops named ``name`` (None: every op) below and including ``root``, in
    pre-order (collected first, safe to mutate)."""
    names = (name,) if isinstance(name, str) else name
    found: list[ir.Operation] = []

    def visit(op):
        if names is None or op.name in names:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def functions(module: ir.Operation) -> list[ir.Operation]:
    """The module's ``func.func`` ops (top level only: no walk through their bodies)."""
    return [op.operation for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func"]


def retype(value: ir.Value, new_type: ir.Type, convert_back, where: ir.InsertionPoint, location: ir.Location) -> None:
    """``value`` takes ``new_type`` in place and its users read ``convert_back(value)``, made
    at ``where``: the definition changes without rebuilding its op or block."""
    value.set_type(new_type)
    with where, location:
        converted = convert_back(value)
    value.replace_all_uses_with(converted)
    converted.owner.operands[0] = value  # replace_all_uses_with rewired the conversion too


def indexing_maps(op: ir.Operation) -> list[ir.AffineMap]:
    """A linalg op's indexing maps, one per operand."""
    return [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]


def loop_ranges(op: ir.Operation) -> dict[int, int]:
    """A linalg op's loop sizes, from the tensors its maps index by a bare loop (dynamic: < 0)."""
    ranges: dict[int, int] = {}
    for amap, value in zip(indexing_maps(op), op.operands):
        if isinstance(value.type, ir.RankedTensorType):
            for expr, size in zip(amap.results, ir.RankedTensorType(value.type).shape):
                if isinstance(expr, ir.AffineDimExpr):
                    ranges[ir.AffineDimExpr(expr).position] = size
    return ranges


def iterator_types(kinds: list[str]) -> ir.ArrayAttr:
    """A linalg op's ``iterator_types`` attribute from kind names (``parallel``, ``reduction``)."""
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{kind}>") for kind in kinds])


def linalg_generic(inputs: list[ir.Value], init: ir.Value, maps: list[ir.AffineMap], iterators: ir.ArrayAttr,
                   body) -> ir.Value:
    """A ``linalg.generic`` on tensors whose body is ``body(*block arguments)`` (the value it yields)."""
    generic = ir.Operation.create(
        "linalg.generic", results=[init.type], operands=[*inputs, init],
        attributes={
            "indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
            "iterator_types": iterators,
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(inputs), 1]),
        },
        regions=1,
    )
    block = generic.regions[0].blocks.append(*(ir.ShapedType(v.type).element_type for v in [*inputs, init]))
    with ir.InsertionPoint(block):
        ir.Operation.create("linalg.yield", operands=[body(*block.arguments)])
    return generic.results[0]


def generic_iterations(op: ir.Operation) -> int | None:
    """How many times a linalg.generic of static shapes runs its body (None: dynamic)."""
    ranges = loop_ranges(op)
    if len(ranges) != len(op.attributes["iterator_types"]) or any(size < 0 for size in ranges.values()):
        return None
    return math.prod(ranges.values())
