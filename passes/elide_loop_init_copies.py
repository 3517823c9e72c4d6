"""xhlo-elide-loop-init-copies: a loop that only reads a copied argument reads the argument.

One-shot bufferization treats every tensor ``iter_arg`` of ``scf.for`` as
written, so a loop that starts from a read-only function argument gets a fresh
buffer and a full copy of the argument, even when the body only reads that
value and yields buffers it allocates (a ``fori_loop`` whose step is a
collective: 64 MiB copied on every call). After deallocations are lowered,
this pass finds

    %buf = memref.alloc()
    memref.copy %arg, %buf                     %arg: a function argument that is only read
    %r = scf.for ... iter_args(%x = %buf)      a static trip count of at least one
                                               (%buf may reach it through a memref.cast)
    memref.dealloc %buf

When nothing writes ``%arg`` and the body only reads ``%x``, the pass starts the
loop from ``%arg`` instead; the alloc, the copy and the dealloc go.
A yield is not a read, so no iteration passes on ``%x``, ``%arg`` or a view of
them: with at least one trip, the loop's results never alias ``%arg``. The body
may free ``%x`` only under an ownership flag that is false on entry.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import MEMREF_VIEWS, ModulePass, op_name, walk_ops
from .lower_runtime_calls import read_arguments

# ops that read their memref operands and write none of them
_READS = frozenset(
    {"memref.load", "memref.dim", "vector.transfer_read", "vector.load", "vector.maskedload", "vector.gather"}
)


def _constant_int(value: ir.Value) -> int | None:
    owner = value.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or op_name(owner) != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if isinstance(attr, ir.BoolAttr):
        return int(attr.value)
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def _only_read(value: ir.Value, guards: list[ir.Value], reads: dict[str, frozenset[int]]) -> bool:
    """Every use of ``value`` (and of views of it) reads it; it is freed only under one of
    the ``guards`` (ownership flags that are false when the loop starts). ``reads``: the
    arguments each external function only reads (``read_arguments``)."""
    for use in value.uses:
        user, index = use.owner, use.operand_number
        name = op_name(user)
        if name in _READS or (name == "memref.copy" and index == 0):
            continue
        if name in MEMREF_VIEWS and index == 0 and _only_read(user.results[0], guards, reads):
            continue
        if name == "memref.extract_strided_metadata" and _only_read(user.results[0], guards, reads):
            continue
        if name == "memref.dealloc" and op_name(user.parent) == "scf.if" and user.parent.operands[0] in guards:
            continue
        if (
            name.startswith("linalg.")
            and "operandSegmentSizes" in user.attributes
            and index < ir.DenseI32ArrayAttr(user.attributes["operandSegmentSizes"])[0]
        ):
            continue
        callee = ir.FlatSymbolRefAttr(user.attributes["callee"]).value if name == "func.call" else None
        if index in reads.get(callee, ()):
            continue
        return False
    return True


def _starts_at_least_once(loop: ir.Operation) -> bool:
    lower, upper, step = (_constant_int(v) for v in list(loop.operands)[:3])
    return None not in (lower, upper, step) and step > 0 and lower < upper


def _unowned_flags(loop: ir.Operation) -> list[ir.Value]:
    """The loop's i1 iter_args that start false (bufferization's ownership flags)."""
    body = loop.regions[0].blocks[0]
    inits = list(loop.operands)[3:]
    return [
        body.arguments[1 + i]
        for i, init in enumerate(inits)
        if init.type == ir.IntegerType.get_signless(1) and _constant_int(init) == 0
    ]


def _loop_entry(buffer: ir.Value):
    """The one ``scf.for`` init operand that ``buffer`` feeds, directly or through one
    ``memref.cast`` (to the dynamic layout bufferization gives iter_args); None if it has
    uses other than that, one copy into it and deallocations."""
    uses = [u for u in buffer.uses if op_name(u.owner) not in ("memref.copy", "memref.dealloc")]
    copies = [u for u in buffer.uses if op_name(u.owner) == "memref.copy"]
    if len(uses) != 1 or len(copies) != 1 or copies[0].operand_number != 1:
        return None
    (use,) = uses
    if op_name(use.owner) == "memref.cast":
        cast_uses = list(use.owner.results[0].uses)
        use = cast_uses[0] if len(cast_uses) == 1 else None
    return use if use is not None and op_name(use.owner) == "scf.for" and use.operand_number >= 3 else None


def _elide(copy: ir.Operation, reads: dict[str, frozenset[int]]) -> bool:
    """Start the loop that ``copy``'s target feeds from the copy's source, when safe."""
    source, target = copy.operands[0], copy.operands[1]
    if not isinstance(source, ir.BlockArgument) or op_name(source.owner.owner) != "func.func":
        return False
    if source.type != target.type or not isinstance(target.owner, (ir.Operation, ir.OpView)):
        return False
    alloc = target.owner
    if op_name(alloc) != "memref.alloc" or len(alloc.operands):
        return False
    entry = _loop_entry(target)
    if entry is None:
        return False
    loop, position = entry.owner, entry.operand_number - 3
    argument = loop.regions[0].blocks[0].arguments[1 + position]
    if not (
        _starts_at_least_once(loop)
        and _only_read(argument, _unowned_flags(loop), reads)
        and _only_read(source, [], reads)
    ):
        return False
    for use in list(target.uses):
        if op_name(use.owner) in ("memref.copy", "memref.dealloc"):
            use.owner.erase()
    target.replace_all_uses_with(source)
    alloc.erase()
    return True


@dataclasses.dataclass(frozen=True)
class ElideLoopInitCopies(ModulePass):
    """Start scf.for loops that only read a copied function argument from the argument."""

    NAME = "xhlo-elide-loop-init-copies"

    def run(self, module: ir.Operation) -> None:
        reads = read_arguments(module)
        for copy in walk_ops(module, "memref.copy"):
            _elide(copy, reads)
