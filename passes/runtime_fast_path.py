"""xhlo-runtime-fast-path: runtime calls try native code before Python.

``xhlo-lower-runtime-calls`` leaves call site ``k`` as a call of the external
``_mlir_ciface_xhlo_rt_op<k>(descriptor pointers...)``, which the runtime
resolves to a Python callback. Entering Python costs a few microseconds and,
with one thread per device, a turn on the GIL: four devices on two cores take
turns for every collective, which made a 4 KiB collective cost 40-60 us.

This pass, run on the LLVM dialect, defines ``_mlir_ciface_xhlo_rt_op<k>``:

    descriptors = [d0, ..., dn]                 (on the stack)
    if xhlo_rt_fast(k, descriptors) != 0:       (native, see xhlo.runtime.spin_wait)
        _mlir_ciface_xhlo_rt_slow_op<k>(d0, ..., dn)   (the Python callback)

``xhlo_rt_fast`` finishes a collective whose plan the runtime prepared for the
calling device (posting buffer addresses, arriving, the exchange) and returns
0; it returns nonzero when there is no plan or a peer is late, and Python
takes over with its timeouts and error reports.
"""

from __future__ import annotations

import dataclasses
import re

from xhlo._mlir import ir

from .base import ModulePass, append_definitions

FAST_FUNCTION = "xhlo_rt_fast"
CALL_PREFIX = "_mlir_ciface_xhlo_rt_op"
SLOW_PREFIX = "_mlir_ciface_xhlo_rt_slow_op"


def _trampoline(index: int, arity: int) -> str:
    """LLVM-dialect text of call site ``index``'s entry, its slow callee, and nothing else."""
    args = ", ".join(f"%d{i}: !llvm.ptr" for i in range(arity))
    values = ", ".join(f"%d{i}" for i in range(arity))
    types = ", ".join(["!llvm.ptr"] * arity)
    stores = "\n".join(
        f"    %at{i} = llvm.getelementptr %array[{i}] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr\n"
        f"    llvm.store %d{i}, %at{i} : !llvm.ptr, !llvm.ptr"
        for i in range(arity)
    )
    return f"""
  llvm.func @{SLOW_PREFIX}{index}({types})
  llvm.func internal @{CALL_PREFIX}{index}({args}) {{
    %n = llvm.mlir.constant({max(arity, 1)} : i64) : i64
    %array = llvm.alloca %n x !llvm.ptr : (i64) -> !llvm.ptr
{stores}
    %k = llvm.mlir.constant({index} : i64) : i64
    %status = llvm.call @{FAST_FUNCTION}(%k, %array) : (i64, !llvm.ptr) -> i64
    %zero = llvm.mlir.constant(0 : i64) : i64
    %done = llvm.icmp "eq" %status, %zero : i64
    llvm.cond_br %done, ^return, ^slow
  ^slow:
    llvm.call @{SLOW_PREFIX}{index}({values}) : ({types}) -> ()
    llvm.br ^return
  ^return:
    llvm.return
  }}"""


def _arity(func: ir.Operation) -> int:
    """Parameters of an llvm.func (all descriptor pointers here): ``!llvm.func<void (ptr, ptr)>``."""
    signature = str(ir.TypeAttr(func.attributes["function_type"]).value)
    parameters = signature[signature.index("(") + 1 : signature.rindex(")")].strip()
    return len(parameters.split(",")) if parameters else 0


@dataclasses.dataclass(frozen=True)
class RuntimeFastPath(ModulePass):
    """Define each runtime call site's C-interface entry: native fast path, then Python."""

    NAME = "xhlo-runtime-fast-path"

    def run(self, module: ir.Operation) -> None:
        body = module.regions[0].blocks[0]
        declarations = []
        for op in body.operations:
            op = op.operation
            if op.name != "llvm.func" or len(op.regions[0].blocks):
                continue
            match = re.fullmatch(rf"{CALL_PREFIX}(\d+)", ir.StringAttr(op.attributes["sym_name"]).value)
            if match:
                declarations.append((op, int(match.group(1)), _arity(op)))
        if not declarations:
            return
        text = f"module {{\n  llvm.func @{FAST_FUNCTION}(i64, !llvm.ptr) -> i64"
        text += "".join(_trampoline(index, arity) for _, index, arity in declarations) + "\n}"
        for op, _, _ in declarations:
            op.erase()
        append_definitions(module, text)
