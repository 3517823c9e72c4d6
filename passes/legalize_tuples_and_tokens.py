"""xhlo-legalize-tuples-and-tokens: remove tuples, tokens and static dimension queries.

The linalg lowering has no patterns for ``stablehlo.tuple``,
``get_tuple_element``, tokens (``after_all``, ``create_token``, token-typed
arguments and loop carries) or ``get_dimension_size``; bufferization cannot
handle tuple or token values either. None of them computes anything:

* tuples only group values: tuple-typed function arguments and results are
  flattened into their leaves (in order, nested tuples included) and every
  ``get_tuple_element(tuple(...))`` is folded, so no tuple op survives;
* tokens only order side effects, and a single CPU process executes the ops in
  program order anyway: token arguments, results and ``while``/``if``/``case``
  carries are dropped, every token operand becomes a fresh operand-less
  ``after_all``, and unused ``after_all`` ops are erased. The original
  positions of dropped function arguments and results are kept in the
  ``xhlo.token_arguments`` / ``xhlo.token_results`` function attributes;
* ``get_dimension_size`` of a static dimension is a constant.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, functions, walk_ops

TOKEN_ARGUMENTS_ATTR = "xhlo.token_arguments"
TOKEN_RESULTS_ATTR = "xhlo.token_results"


def _is_tuple(t: ir.Type) -> bool:
    return isinstance(t, ir.TupleType)


def _tuple_element_types(t: ir.Type) -> list[ir.Type]:
    tuple_type = ir.TupleType(t)
    return [tuple_type.get_type(i) for i in range(tuple_type.num_types)]


def _leaf_types(t: ir.Type) -> list[ir.Type]:
    """The non-tuple types of ``t`` in order (``t`` itself unless it is a tuple)."""
    if not _is_tuple(t):
        return [t]
    return [leaf for element in _tuple_element_types(t) for leaf in _leaf_types(element)]


def _needs_rewrite(types) -> bool:
    return any(_is_tuple(t) or sh.is_token(t) for t in types)


def fresh_token() -> ir.Value:
    """An operand-less ``after_all``: a token that waits for nothing."""
    return sh.create("stablehlo.after_all", [], [sh.token_type()]).result


def _split(value: ir.Value) -> list[ir.Value]:
    """The leaves of ``value`` (get_tuple_element chains, folded later)."""
    if not _is_tuple(value.type):
        return [value]
    leaves = []
    for index, element_type in enumerate(_tuple_element_types(value.type)):
        element = sh.create(
            "stablehlo.get_tuple_element",
            [value],
            [element_type],
            {"index": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), index)},
        ).result
        leaves += _split(element)
    return leaves


def _assemble(t: ir.Type, leaves: Iterator[ir.Value]) -> ir.Value:
    """Rebuild a value of type ``t`` from its leaves (taken in order)."""
    if not _is_tuple(t):
        return next(leaves)
    elements = [_assemble(element, leaves) for element in _tuple_element_types(t)]
    return sh.create("stablehlo.tuple", elements, [t]).result


def _kept(values: list[ir.Value]) -> list[ir.Value]:
    """Flattened values without the tokens."""
    return [leaf for value in values for leaf in _split(value) if not sh.is_token(leaf.type)]


def _kept_types(types) -> list[ir.Type]:
    return [leaf for t in types for leaf in _leaf_types(t) if not sh.is_token(leaf)]


def _rebuild_from_kept(old_values, kept_values: Iterator[ir.Value]) -> None:
    """Replace ``old_values`` by values rebuilt from their kept leaves (tokens are fresh)."""
    for old in old_values:
        leaves = iter(
            fresh_token() if sh.is_token(leaf) else next(kept_values) for leaf in _leaf_types(old.type)
        )
        old.replace_all_uses_with(_assemble(old.type, leaves))


def _replace_terminator(block: ir.Block, transform) -> None:
    term = block.operations[len(block.operations) - 1]
    with ir.InsertionPoint(term), term.location:
        operands = transform(list(term.operands))
        sh.create(term.name, operands, [])
    term.erase()


# -- functions ---------------------------------------------------------------------------


def _flatten_block_arguments(block: ir.Block, location: ir.Location) -> None:
    """Every argument becomes its kept leaves (appended in order, then the originals go)."""
    count = len(block.arguments)
    originals = [block.arguments[i] for i in range(count)]
    with ir.InsertionPoint.at_block_begin(block), location:
        for arg in originals:
            leaves = iter(
                fresh_token() if sh.is_token(leaf) else block.add_argument(leaf, location)
                for leaf in _leaf_types(arg.type)
            )
            arg.replace_all_uses_with(_assemble(arg.type, leaves))
    for _ in range(count):
        block.erase_argument(0)


def _flatten_attrs(func_op: ir.Operation, name: str, types) -> None:
    """Per-argument/result attribute dicts follow the flattening (leaves get none)."""
    if name not in func_op.attributes:
        return
    old = ir.ArrayAttr(func_op.attributes[name])
    new = []
    for attrs, t in zip(old, types):
        leaves = [leaf for leaf in _leaf_types(t) if not sh.is_token(leaf)]
        if leaves == [t]:
            new.append(attrs)
        else:
            new += [ir.DictAttr.get({}) for _ in leaves]
    func_op.attributes[name] = ir.ArrayAttr.get(new)


def _token_positions(types) -> list[int]:
    return [i for i, t in enumerate(types) if sh.is_token(t)]


def _rewrite_function(func_op: ir.Operation) -> None:
    ftype = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
    inputs, results = list(ftype.inputs), list(ftype.results)
    if not _needs_rewrite(inputs + results):
        return
    for attr, types in ((TOKEN_ARGUMENTS_ATTR, inputs), (TOKEN_RESULTS_ATTR, results)):
        if _token_positions(types):
            func_op.attributes[attr] = sh.dense_i64(_token_positions(types))
    _flatten_attrs(func_op, "arg_attrs", inputs)
    _flatten_attrs(func_op, "res_attrs", results)
    func_op.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(_kept_types(inputs), _kept_types(results))
    )
    region = func_op.regions[0]
    if len(region.blocks) == 0:
        return  # a declaration
    _flatten_block_arguments(region.blocks[0], func_op.location)
    for block in region.blocks:
        term = block.operations[len(block.operations) - 1]
        if term.name == "func.return":
            _replace_terminator(block, _kept)


def _rewrite_call(op: ir.Operation) -> None:
    types = [v.type for v in op.operands] + [r.type for r in op.results]
    if not _needs_rewrite(types):
        return
    with ir.InsertionPoint(op), op.location:
        call = sh.create(
            op.name,
            _kept(list(op.operands)),
            _kept_types(r.type for r in op.results),
            {name: op.attributes[name] for name in op.attributes},
        )
    with ir.InsertionPoint(op), op.location:
        _rebuild_from_kept(list(op.results), iter(call.results))
    op.erase()


# -- control flow --------------------------------------------------------------------------


def _drop_token_arguments(block: ir.Block, location: ir.Location) -> None:
    with ir.InsertionPoint.at_block_begin(block), location:
        for i in reversed(range(len(block.arguments))):
            arg = block.arguments[i]
            if sh.is_token(arg.type):
                arg.replace_all_uses_with(fresh_token())
                block.erase_argument(i)


def _drop_tokens(values: list[ir.Value]) -> list[ir.Value]:
    return [v for v in values if not sh.is_token(v.type)]


def _drop_token_carries(op: ir.Operation) -> None:
    """while/if/case without their token operands, results and region arguments."""
    if not any(sh.is_token(v.type) for v in [*op.operands, *op.results]):
        return
    with ir.InsertionPoint(op), op.location:
        new = sh.create(
            op.name,
            _drop_tokens(list(op.operands)),
            [r.type for r in op.results if not sh.is_token(r.type)],
            {name: op.attributes[name] for name in op.attributes},
            regions=len(op.regions),
        )
    for src, dst in zip(op.regions, new.regions):
        block = src.blocks[0]
        block.append_to(dst)
        _drop_token_arguments(block, op.location)
        _replace_terminator(block, _drop_tokens)
    with ir.InsertionPoint(op), op.location:
        _rebuild_from_kept(list(op.results), iter(new.results))
    op.erase()


# -- folding -------------------------------------------------------------------------------


def _fold_tuple_accesses(module: ir.Operation) -> None:
    """get_tuple_element(tuple(a, b, ...)) -> a, b, ...; then unused tuples go."""
    changed = True
    while changed:
        changed = False
        for op in walk_ops(module, "stablehlo.get_tuple_element"):
            source = op.operands[0]
            if isinstance(source, ir.OpResult) and source.owner.name == "stablehlo.tuple":
                index = ir.IntegerAttr(op.attributes["index"]).value
                op.results[0].replace_all_uses_with(source.owner.operands[index])
                op.erase()
                changed = True
    _erase_unused(module, ("stablehlo.tuple",))


def _erase_unused(module: ir.Operation, names: tuple[str, ...]) -> None:
    changed = True
    while changed:
        changed = False
        for op in reversed(walk_ops(module, names)):
            if all(not list(r.uses) for r in op.results):
                op.erase()
                changed = True


def _normalize_token_producers(module: ir.Operation) -> None:
    """after_all(t1, t2, ...) and create_token are fresh tokens; unused ones go."""
    for op in walk_ops(module, ("stablehlo.after_all", "stablehlo.create_token")):
        if op.name == "stablehlo.after_all" and len(op.operands) == 0:
            continue
        with ir.InsertionPoint(op), op.location:
            op.results[0].replace_all_uses_with(fresh_token())
        op.erase()
    _erase_unused(module, ("stablehlo.after_all",))


def _fold_static_dimension_sizes(module: ir.Operation) -> None:
    for op in walk_ops(module, "stablehlo.get_dimension_size"):
        operand_type = ir.RankedTensorType(op.operands[0].type)
        dim = ir.IntegerAttr(op.attributes["dimension"]).value
        if operand_type.is_dynamic_dim(dim):
            continue
        with ir.InsertionPoint(op), op.location:
            size = sh.constant(operand_type.shape[dim], op.results[0].type)
        op.results[0].replace_all_uses_with(size)
        op.erase()


@dataclasses.dataclass(frozen=True)
class LegalizeTuplesAndTokens(ModulePass):
    """Flatten tuples, drop tokens, fold static get_dimension_size."""

    NAME = "xhlo-legalize-tuples-and-tokens"

    def run(self, module: ir.Operation) -> None:
        for op in functions(module):
            _rewrite_function(op)
        for op in walk_ops(module, "func.call"):
            _rewrite_call(op)
        # Post-order: inner loops first, so moved bodies are already rewritten.
        carriers = []

        def visit(op):
            if op.name in ("stablehlo.while", "stablehlo.if", "stablehlo.case"):
                carriers.append(op.operation)
            return ir.WalkResult.ADVANCE

        module.walk(visit, ir.WalkOrder.POST_ORDER)
        for op in carriers:
            _drop_token_carries(op)
        _fold_tuple_accesses(module)
        _normalize_token_producers(module)
        _fold_static_dimension_sizes(module)
