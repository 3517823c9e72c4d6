"""xhlo-internalize-functions: only the functions the host calls keep external linkage.

The host enters a compiled program through the ``_mlir_ciface_`` wrappers of
its public functions, and the runtime looks up three functions by name (the
parallel-for dispatch slot, the release of cached heap blocks, the FFT loop table). Everything
else (the public function behind its wrapper, outlined parallel loop bodies,
helpers) is only called from inside the module, yet with LLVM's default
external linkage the JIT

* gives each of them an ``_mlir_<name>`` wrapper taking packed arguments,
* keeps each body after inlining it into its callers (it could be called
  from outside), so a public function is compiled twice: on its own and
  inlined into its ``_mlir_ciface_`` wrapper.

Internal linkage lets LLVM inline and drop them: code generation of the
benchmark programs takes 10-50% less time, for the same machine code.

Outlined parallel loop bodies are marked ``no_inline``: ``xhlo_parallel_for``
calls its body directly while no thread pool is installed, and once that
call is inlined the body's constant function pointer made LLVM inline every
body into its caller too, compiling each loop twice (attention: 25 of its
80 ms of LLVM time) for a path that only runs without a runtime.
"""

from __future__ import annotations

import dataclasses

from xhlo import pocketfft
from xhlo._mlir import ir

from .base import ModulePass
from .cache_large_allocations import RELEASE
from .parallelize_loops import BODY_ATTR, SLOT_ADDRESS

C_INTERFACE_PREFIX = "_mlir_ciface_"
HOST_LOOKUPS = (SLOT_ADDRESS, RELEASE, pocketfft.TABLE_ADDRESS)  # found by name by xhlo.runtime


@dataclasses.dataclass(frozen=True)
class InternalizeFunctions(ModulePass):
    """Give internal linkage to every defined llvm.func the host does not call by name;
    keep parallel loop bodies out of line."""

    NAME = "xhlo-internalize-functions"

    def run(self, module: ir.Operation) -> None:
        internal = ir.Attribute.parse("#llvm.linkage<internal>")
        external = ir.Attribute.parse("#llvm.linkage<external>")
        for op in module.regions[0].blocks[0].operations:
            op = op.operation
            if op.name != "llvm.func" or len(op.regions[0].blocks) == 0:
                continue  # declarations are resolved by the JIT
            if "linkage" in op.attributes and op.attributes["linkage"] != external:
                continue  # chosen by the pass that made the function
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if BODY_ATTR in op.attributes:
                op.attributes["no_inline"] = ir.UnitAttr.get()
            if name.startswith(C_INTERFACE_PREFIX) or name in HOST_LOOKUPS:
                continue
            op.attributes["linkage"] = internal
