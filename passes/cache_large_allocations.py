"""xhlo-cache-large-allocations: large heap buffers are reused across calls instead of page faulted.

Buffers that the scratch arena cannot place (allocated inside loops, such as
a ``fori_loop``'s per-step collective results, or freed on one path only)
are ``malloc``-ed and ``free``-d on every use. glibc hands large blocks back
to the kernel on ``free``, so the next ``malloc`` page faults every 4 KiB in
again, zero-filling memory the program is about to overwrite: a 16 MiB
all_reduce on 2 devices spent about three quarters of its time there.

This pass runs after ``finalize-memref-to-llvm{use-generic-functions}``,
which routes every ``memref.alloc``/``dealloc`` through
``_mlir_memref_to_llvm_alloc``/``_mlir_memref_to_llvm_free``, and defines
those two functions in the module (internal, so programs never share or
interpose them):

* every block carries a 16-byte header with its size (16 keeps malloc's
  alignment; memrefs that need more over-allocate and align themselves);
* ``free`` of a block of at least ``min-bytes`` parks it in one of ``slots``
  module-global slots (or frees it when all are taken);
* ``alloc`` of at least ``min-bytes`` takes a parked block of exactly that
  size, else it ``malloc``-s.

The slots are guarded by a spin lock taken only for large blocks (a few per
call), so device threads and parallel loops may allocate concurrently. The
cache holds at most ``slots`` blocks the program itself freed, so never more
than its own peak; ``xhlo_free_cached_blocks()``, which the Executable calls
when it is released, returns them. Only memory this module allocated ever
reaches these functions: results are caller-allocated out-parameters.
"""

from __future__ import annotations

import dataclasses

from xhlo._mlir import ir

from .base import ModulePass, PassError, append_definitions

ALLOC = "_mlir_memref_to_llvm_alloc"
FREE = "_mlir_memref_to_llvm_free"
RELEASE = "xhlo_free_cached_blocks"  # public: () -> (), frees every parked block
HEADER_BYTES = 16

_LIBC = {"malloc": "(i64) -> !llvm.ptr", "free": "(!llvm.ptr)", "sched_yield": "() -> i32"}


def _global(name: str, type_: str) -> str:
    return (
        f"  llvm.mlir.global internal @{name}() {{addr_space = 0 : i32, alignment = 64 : i64}} : {type_} {{\n"
        f"    %z = llvm.mlir.zero : {type_}\n    llvm.return %z : {type_}\n  }}\n"
    )


def _slot(index: str, table: str, result: str) -> str:
    """``result`` = the address of entry ``index`` of slot table ``table``."""
    return (
        f"    %{result}_base = llvm.mlir.addressof @xhlo_cache_{table} : !llvm.ptr\n"
        f"    %{result} = llvm.getelementptr %{result}_base[%{index}] : (!llvm.ptr, i64) -> !llvm.ptr, i64\n"
    )


def _lock_and_scan(exhausted: str) -> str:
    """Take the lock and loop ``%i`` over the slots: each turn enters ``^probe``
    (which branches back to ``^scan(%i + 1)``), the end goes to ``^{exhausted}``."""
    return (
        "    llvm.call @xhlo_cache_acquire() : () -> ()\n"
        "    llvm.br ^scan(%c0 : i64)\n"
        "  ^scan(%i: i64):\n"
        '    %end = llvm.icmp "eq" %i, %slots : i64\n'
        f"    llvm.cond_br %end, ^{exhausted}, ^probe\n"
        "  ^probe:\n"
    )


def allocator_source(min_bytes: int, slots: int, declarations: str = "") -> str:
    """The LLVM-dialect definitions of the two memref allocation functions and the release
    (``declarations``: those of the libc functions they call that the module lacks)."""
    consts = (
        "    %c0 = llvm.mlir.constant(0 : i64) : i64\n"
        "    %c1 = llvm.mlir.constant(1 : i64) : i64\n"
        f"    %header = llvm.mlir.constant({HEADER_BYTES} : i64) : i64\n"
        f"    %min = llvm.mlir.constant({min_bytes} : i64) : i64\n"
        f"    %slots = llvm.mlir.constant({slots} : i64) : i64\n"
    )
    array = f"!llvm.array<{slots} x i64>"
    return f"""module {{
{declarations}{_global("xhlo_cache_lock", "i64")}{_global("xhlo_cache_blocks", array)}{_global("xhlo_cache_sizes", array)}
  llvm.func internal @xhlo_cache_acquire() {{
    %lock = llvm.mlir.addressof @xhlo_cache_lock : !llvm.ptr
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    llvm.br ^try
  ^try:
    %swap = llvm.cmpxchg %lock, %c0, %c1 acquire monotonic : !llvm.ptr, i64
    %taken = llvm.extractvalue %swap[1] : !llvm.struct<(i64, i1)>
    llvm.cond_br %taken, ^done, ^wait
  ^wait:
    %y = llvm.call @sched_yield() : () -> i32
    llvm.br ^try
  ^done:
    llvm.return
  }}

  llvm.func internal @xhlo_cache_release() {{
    %lock = llvm.mlir.addressof @xhlo_cache_lock : !llvm.ptr
    %c0 = llvm.mlir.constant(0 : i64) : i64
    llvm.store %c0, %lock atomic release {{alignment = 8 : i64}} : i64, !llvm.ptr
    llvm.return
  }}

  llvm.func internal @{ALLOC}(%size: i64) -> !llvm.ptr attributes {{no_inline}} {{
{consts}    %large = llvm.icmp "uge" %size, %min : i64
    llvm.cond_br %large, ^lock, ^fresh
  ^lock:
{_lock_and_scan('miss')}{_slot("i", "blocks", "at")}{_slot("i", "sizes", "size_at")}    %block = llvm.load %at : !llvm.ptr -> i64
    %parked = llvm.load %size_at : !llvm.ptr -> i64
    %full = llvm.icmp "ne" %block, %c0 : i64
    %fits = llvm.icmp "eq" %parked, %size : i64
    %hit = llvm.and %full, %fits : i1
    %next = llvm.add %i, %c1 : i64
    llvm.cond_br %hit, ^take, ^scan(%next : i64)
  ^take:
    llvm.store %c0, %at : i64, !llvm.ptr
    llvm.call @xhlo_cache_release() : () -> ()
    %reused = llvm.inttoptr %block : i64 to !llvm.ptr
    %reused_user = llvm.getelementptr %reused[{HEADER_BYTES}] : (!llvm.ptr) -> !llvm.ptr, i8
    llvm.return %reused_user : !llvm.ptr
  ^miss:
    llvm.call @xhlo_cache_release() : () -> ()
    llvm.br ^fresh
  ^fresh:
    %total = llvm.add %size, %header : i64
    %base = llvm.call @malloc(%total) : (i64) -> !llvm.ptr
    %null = llvm.mlir.zero : !llvm.ptr
    %failed = llvm.icmp "eq" %base, %null : !llvm.ptr
    llvm.cond_br %failed, ^out_of_memory, ^record
  ^out_of_memory:
    llvm.return %null : !llvm.ptr
  ^record:
    llvm.store %size, %base : i64, !llvm.ptr
    %user = llvm.getelementptr %base[{HEADER_BYTES}] : (!llvm.ptr) -> !llvm.ptr, i8
    llvm.return %user : !llvm.ptr
  }}

  llvm.func internal @{FREE}(%user: !llvm.ptr) attributes {{no_inline}} {{
{consts}    %null = llvm.mlir.zero : !llvm.ptr
    %none = llvm.icmp "eq" %user, %null : !llvm.ptr
    llvm.cond_br %none, ^done, ^block
  ^block:
    %base = llvm.getelementptr %user[-{HEADER_BYTES}] : (!llvm.ptr) -> !llvm.ptr, i8
    %size = llvm.load %base : !llvm.ptr -> i64
    %large = llvm.icmp "uge" %size, %min : i64
    llvm.cond_br %large, ^lock, ^release
  ^lock:
{_lock_and_scan('no_slot')}{_slot("i", "blocks", "at")}    %block = llvm.load %at : !llvm.ptr -> i64
    %empty = llvm.icmp "eq" %block, %c0 : i64
    %next = llvm.add %i, %c1 : i64
    llvm.cond_br %empty, ^park, ^scan(%next : i64)
  ^park:
{_slot("i", "sizes", "size_at")}    %address = llvm.ptrtoint %base : !llvm.ptr to i64
    llvm.store %address, %at : i64, !llvm.ptr
    llvm.store %size, %size_at : i64, !llvm.ptr
    llvm.call @xhlo_cache_release() : () -> ()
    llvm.return
  ^no_slot:
    llvm.call @xhlo_cache_release() : () -> ()
    llvm.br ^release
  ^release:
    llvm.call @free(%base) : (!llvm.ptr) -> ()
    llvm.br ^done
  ^done:
    llvm.return
  }}

  llvm.func @{RELEASE}() {{
{consts}{_lock_and_scan('done')}{_slot("i", "blocks", "at")}    %block = llvm.load %at : !llvm.ptr -> i64
    llvm.store %c0, %at : i64, !llvm.ptr
    %base = llvm.inttoptr %block : i64 to !llvm.ptr
    llvm.call @free(%base) : (!llvm.ptr) -> ()
    %next = llvm.add %i, %c1 : i64
    llvm.br ^scan(%next : i64)
  ^done:
    llvm.call @xhlo_cache_release() : () -> ()
    llvm.return
  }}
}}
"""


def _symbols(module: ir.Operation) -> dict[str, ir.Operation]:
    found = {}
    for op in module.regions[0].blocks[0].operations:
        if "sym_name" in op.operation.attributes:
            found[ir.StringAttr(op.operation.attributes["sym_name"]).value] = op.operation
    return found


@dataclasses.dataclass(frozen=True)
class CacheLargeAllocations(ModulePass):
    """Define the memref allocation functions: large freed blocks are parked and reused."""

    NAME = "xhlo-cache-large-allocations"
    min_bytes: int = 256 * 1024  # smaller blocks: glibc reuses them from its free lists anyway
    slots: int = 16  # parked blocks at most

    def run(self, module: ir.Operation) -> None:
        symbols = _symbols(module)
        if ALLOC not in symbols and FREE not in symbols:
            return  # the module allocates nothing on the heap
        for name in (ALLOC, FREE, RELEASE, "xhlo_cache_acquire", "xhlo_cache_release"):
            op = symbols.get(name)
            if op is not None and (name not in (ALLOC, FREE) or len(op.regions[0].blocks)):
                raise PassError(op, f"'{name}' is already defined (run the pass once, after "
                                    "finalize-memref-to-llvm{use-generic-functions})")
        for name in (ALLOC, FREE):
            if name in symbols:
                symbols[name].erase()
        declarations = "".join(
            f"  llvm.func @{name}{signature}\n" for name, signature in _LIBC.items() if name not in symbols
        )
        append_definitions(module, allocator_source(self.min_bytes, self.slots, declarations))
