"""The MLIR provider: the only module of xhlo that imports the bindings wheel.

Everything else imports ``ir``, ``passmanager``, ``rewrite``, ``ExecutionEngine``
and ``stablehlo_api`` from here, so switching the provider (torch-mlir today)
touches one file.
"""

from __future__ import annotations

import threading

from torch_mlir import ir, passmanager, rewrite  # noqa: F401  (re-exported)
from torch_mlir._mlir_libs import _stablehlo as stablehlo_api
from torch_mlir.dialects import arith, func, linalg, memref, quant, scf, tensor  # noqa: F401
from torch_mlir.execution_engine import ExecutionEngine  # noqa: F401

PROVIDER = "torch-mlir"

_passes_registered = False
_lock = threading.Lock()


def _register_passes_once() -> None:
    global _passes_registered
    with _lock:
        if not _passes_registered:
            stablehlo_api.register_stablehlo_passes()
            _passes_registered = True


def _load_chlo(ctx: ir.Context) -> None:
    """CHLO is compiled into the wheel but not registered for parsing.

    Running a pass that declares ``chlo`` as a dependent dialect loads it into
    the context; afterwards ``chlo.*`` ops parse and legalize.
    """
    with ctx, ir.Location.unknown():
        empty = ir.Module.parse("module {}")
        passmanager.PassManager.parse(
            "builtin.module(func.func(stablehlo-legalize-quant-to-math))"
        ).run(empty.operation)


def new_context(*, allow_unregistered: bool = True) -> ir.Context:
    """A context with StableHLO, CHLO, VHLO and every upstream dialect loaded.

    Unregistered dialects are allowed by default because conformance files use
    the ``check`` dialect in generic form and JAX's Shardy exports use ``sdy``.
    """
    _register_passes_once()
    ctx = ir.Context()
    stablehlo_api.register_dialect(ctx)
    ctx.allow_unregistered_dialects = allow_unregistered
    _load_chlo(ctx)
    return ctx
