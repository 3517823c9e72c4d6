"""xhlo-legalize-shardy: drop Shardy (``sdy``) sharding annotations.

JAX exports programs that name shardings (``jax.jit(in_shardings=...)``,
``with_sharding_constraint``, ``shard_map``) with Shardy ops and attributes.
xhlo runs a program unpartitioned, where a sharding only says how values would
be split across devices and never changes what is computed, so:

* ``sdy.sharding_constraint``, ``sdy.reshard`` and ``sdy.propagation_barrier``
  return their operand;
* ``sdy.named_computation`` and a ``sdy.manual_computation`` whose body sees the
  full (unsplit) shapes, i.e. whose manual axes have size 1, are inlined;
* ``sdy.sharding_group`` and ``sdy.mesh`` go, and so do ``sdy.*`` attributes on
  ops and function arguments/results (an unregistered dialect's attributes
  cannot be translated to LLVM).

A ``manual_computation`` over real shards runs its body once per device with
collectives between them: that needs partitioning, which is an error here.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from .base import ModulePass, PassError, walk_ops

FORWARDING_OPS = ("sdy.sharding_constraint", "sdy.reshard", "sdy.propagation_barrier")
REGION_OPS = ("sdy.named_computation", "sdy.manual_computation")
ERASED_OPS = ("sdy.sharding_group", "sdy.mesh")
ATTRIBUTE_PREFIX = "sdy."


def _forward(op: ir.Operation) -> None:
    for result, operand in zip(op.results, op.operands):
        result.replace_all_uses_with(operand)
    op.erase()


def _inline_region(op: ir.Operation) -> None:
    """Move the single block of ``op`` before it, arguments bound to the operands."""
    block = op.regions[0].blocks[0]
    for arg, operand in zip(block.arguments, op.operands):
        if arg.type != operand.type:
            raise PassError(
                op,
                f"'{op.name}' splits {operand.type} into shards of {arg.type}: the program is "
                "partitioned over several devices, and xhlo does not partition programs",
            )
    for result, value in zip(op.results, sh.splice_block(op, block, list(op.operands))):
        if result.type != value.type:
            raise PassError(
                op, f"'{op.name}' result {result.type} is built from shards {value.type}"
            )
        result.replace_all_uses_with(value)
    op.erase()


def _strip_attributes(op: ir.Operation) -> None:
    attributes = op.attributes
    for name in [name for name in attributes if name.startswith(ATTRIBUTE_PREFIX)]:
        del attributes[name]
    for list_name in ("arg_attrs", "res_attrs"):
        if list_name in attributes and op.name == "func.func":
            attributes[list_name] = ir.ArrayAttr.get(
                [_without_prefix(d) for d in ir.ArrayAttr(attributes[list_name])]
            )


def _without_prefix(attrs: ir.Attribute) -> ir.Attribute:
    entries = ir.DictAttr(attrs)
    return ir.DictAttr.get(
        {named.name: named.attr for named in entries if not named.name.startswith(ATTRIBUTE_PREFIX)}
    )


@dataclasses.dataclass(frozen=True)
class LegalizeShardy(ModulePass):
    """Drop Shardy sharding ops and attributes (xhlo runs programs unpartitioned)."""

    NAME = "xhlo-legalize-shardy"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, FORWARDING_OPS):
            _forward(op)
        # post-order: inner regions first, so a moved body holds no sdy op
        for op in reversed(walk_ops(module, REGION_OPS)):
            _inline_region(op)
        for op in walk_ops(module, ERASED_OPS):
            op.erase()
        for op in walk_ops(module, None):
            if op.name.startswith(ATTRIBUTE_PREFIX):
                raise PassError(op, f"unsupported Shardy op '{op.name}'")
            _strip_attributes(op)
