"""xhlo-lower-host-calls: infeed, outfeed and custom calls to Python become runtime calls.

No linalg pattern lowers ``stablehlo.infeed``/``outfeed``, and a custom call
to a user's function has no lowering at all. All three need the host: data
comes from or goes to the executable's per-device queues, or a registered
Python function computes the results (``xhlo.register_custom_call_target``).
So each becomes a side-effecting ``@xhlo.runtime.<primitive>`` custom call,
which ``xhlo-lower-runtime-calls`` turns into an external call served by
``xhlo.runtime.host``:

=================  =======================================================
``infeed``         () -> data...: the next item of the device's infeed
``outfeed``        data... -> (): appended to the device's outfeed
``host_callback``  operands... -> results of the target's Python function
=================  =======================================================

Tokens are forwarded: the runtime calls keep their order because they are
side-effecting. The host side views each buffer through the shapes and
element types that ``xhlo-lower-runtime-calls`` records for every call. Only custom calls whose target is registered when the pass
runs are taken; ``xhlo-legalize-custom-calls`` reports the others.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh
from xhlo.runtime.host import is_registered

from .base import ModulePass, PassError, walk_ops
from .lower_collectives import runtime_call, runtime_config

_OPS = ("stablehlo.infeed", "stablehlo.outfeed", "stablehlo.custom_call")


def _is_token(value: ir.Value) -> bool:
    return sh.is_token(value.type)


def _check_static(op: ir.Operation, values) -> None:
    for value in values:
        t = value.type
        if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
            raise PassError(op, f"'{op.name}' needs statically shaped tensors, got {t}")


def _lower(op: ir.Operation, primitive: str, **extra: ir.Attribute) -> None:
    operands = [v for v in op.operands if not _is_token(v)]
    results = [r for r in op.results if not _is_token(r)]
    tokens = [v for v in op.operands if _is_token(v)]
    _check_static(op, [*operands, *results])
    config = runtime_config(op, [], **extra)
    with ir.InsertionPoint(op), op.location:
        values = iter(runtime_call(primitive, operands, [r.type for r in results], config))
    for result in op.results:
        if _is_token(result):
            result.replace_all_uses_with(tokens[0])
        else:
            result.replace_all_uses_with(next(values))
    op.erase()


@dataclasses.dataclass(frozen=True)
class LowerHostCalls(ModulePass):
    """Infeed/outfeed and custom calls of registered Python targets -> runtime calls."""

    NAME = "xhlo-lower-host-calls"

    def run(self, module: ir.Operation) -> None:
        for op in walk_ops(module, _OPS):
            if op.name == "stablehlo.infeed":
                _lower(op, "infeed")
            elif op.name == "stablehlo.outfeed":
                _lower(op, "outfeed")
            else:
                target = ir.StringAttr(op.attributes["call_target_name"]).value
                if is_registered(target):
                    _lower(op, "host_callback", target=ir.StringAttr.get(target))
