"""Machine code for a module lowered to the LLVM dialect, its parts compiled at once.

``xhlo-partition-codegen`` may assign outlined loop bodies to code-generation
parts. ``JitProgram`` cuts the module into one module per part (each body with
copies of what it uses), creates one MLIR ExecutionEngine per part on its own
thread and generates all machine code before returning. It calls the
ExecutionEngine through the C API with ``ctypes``, which releases the GIL (the
Python bindings hold it), so the parts really run on several cores. Then it
points each ``@xhlo_link_<body>`` slot of part 0 at its body, and each
``@xhlo_call_<function>_<part>`` slot of a part at the function part 0 kept.

A ``JitProgram`` answers ``lookup``/``raw_lookup`` as the bindings'
ExecutionEngine does, and owns its engines: the machine code lives as long as
the program. ``part_seconds`` keeps, per part, how long its engine took to make
(translation to LLVM IR and LLVM's IR optimisation) and to generate machine
code, for ``benchmarks/profile_compile.py``.
"""

from __future__ import annotations

import ctypes
import threading
import time
from pathlib import Path

from ._mlir import StringRef, capi, capi_handle, ir
from .errors import CompilerError

# What xhlo-partition-codegen writes into the module (it imports these names).
PARTS_ATTR = "xhlo.codegen_parts"  # on the module: how many parts
PART_ATTR = "xhlo.codegen_part"  # on a moved body: its part
NEEDS_ATTR = "xhlo.codegen_needs"  # on a moved body: the symbols its part copies
LINK_TO_ATTR = "xhlo.link_to"  # on a pointer slot: the body (or part 0's function) it points at

_PACKED = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Engine:
    """One MLIR ExecutionEngine through the C API (calls release the GIL)."""

    def __init__(self, module: ir.Operation, opt_level: int, symbols: dict[str, int]):
        api = capi()
        handle = api.mlirExecutionEngineCreate(
            api.mlirModuleFromOperation(capi_handle(module)), opt_level, 0, None, True
        )
        if not handle:
            raise CompilerError("the ExecutionEngine rejected the module (LLVM translation failed)", stage="jit")
        self.handle = handle
        self._destroy = api.mlirExecutionEngineDestroy  # kept: module globals are gone at exit
        for name, address in symbols.items():  # before code generation resolves them
            api.mlirExecutionEngineRegisterSymbol(handle, StringRef.of(name), address)

    def lookup(self, symbol: str) -> int:
        """Address of ``symbol`` (generating the module's machine code first, once), 0 if none."""
        return capi().mlirExecutionEngineLookup(self.handle, StringRef.of(symbol)) or 0

    def lookup_packed(self, name: str) -> int:
        return capi().mlirExecutionEngineLookupPacked(self.handle, StringRef.of(name)) or 0

    def dump_object_file(self, path: Path) -> None:
        capi().mlirExecutionEngineDumpToObjectFile(self.handle, StringRef.of(str(path)))

    def close(self) -> None:
        if self.handle:
            self._destroy(self.handle)
            self.handle = None


class JitProgram:
    """A compiled module: one engine per code-generation part, slots linked."""

    def __init__(self, module: ir.Module, opt_level: int = 2, symbols: dict[str, int] | None = None):
        symbols = symbols or {}
        parts = split_into_parts(module)
        capi().mlirRegisterAllLLVMTranslations(capi_handle(module.context))  # once, before any thread
        engines: list[_Engine | None] = [None] * len(parts)
        self.part_seconds: list[tuple[float, float]] = [(0.0, 0.0)] * len(parts)
        errors: list[BaseException] = []

        def compile_part(index: int) -> None:
            try:
                part, anchor = parts[index]
                start = time.perf_counter()
                engines[index] = engine = _Engine(part, opt_level, symbols)
                made = time.perf_counter()
                if anchor and not engine.lookup(anchor):
                    raise CompilerError(f"no machine code for '{anchor}' (LLVM's reason is on stderr)", stage="jit")
                self.part_seconds[index] = (made - start, time.perf_counter() - made)
            except BaseException as err:  # noqa: BLE001  (re-raised below, on the caller's thread)
                errors.append(err)

        threads = [threading.Thread(target=compile_part, args=(i,), daemon=True) for i in range(1, len(parts))]
        for thread in threads:
            thread.start()
        compile_part(0)
        for thread in threads:
            thread.join()
        self._engines = [e for e in engines if e is not None]
        if errors:
            self.close()
            raise errors[0]
        slots = _link_slots(module)
        self.link_slots = {slot: target for slot, (_, target, _) in slots.items()}  # the disk cache links by name
        for slot, (slot_part, target, target_part) in slots.items():
            slot_address = self._engines[slot_part].lookup(slot)
            target_address = self._engines[target_part].lookup(target)
            if not slot_address or not target_address:
                raise CompilerError(f"cannot link '{slot}' to '{target}'", stage="jit")
            ctypes.c_void_p.from_address(slot_address).value = target_address

    @property
    def num_parts(self) -> int:
        return len(self._engines)

    def raw_lookup(self, name: str) -> int:
        """Address of the ``_mlir_<name>`` wrapper (packed arguments), 0 if none."""
        for engine in self._engines:
            address = engine.lookup_packed(name)
            if address:
                return address
        return 0

    def lookup(self, name: str):
        """The ``_mlir_ciface_<name>`` entry point as a ctypes function of the packed arguments."""
        address = self.raw_lookup("_mlir_ciface_" + name)
        if not address:
            raise RuntimeError("Unknown function " + name)
        return _PACKED(address)

    def dump_object_files(self, directory: Path) -> list[Path]:
        """One object file per part (they link into one shared library)."""
        paths = [Path(directory, f"part{i}.o") for i in range(len(self._engines))]
        for engine, path in zip(self._engines, paths):
            engine.dump_object_file(path)
        return paths

    def close(self) -> None:
        for engine in self._engines:
            engine.close()
        self._engines = []

    def __del__(self) -> None:
        self.close()


def split_into_parts(module: ir.Module) -> list[tuple[ir.Operation, str | None]]:
    """One module per code-generation part, with the symbol each part's machine code
    is generated for (None: part 0 of a module without external functions)."""
    op = module.operation
    count = ir.IntegerAttr(op.attributes[PARTS_ATTR]).value if PARTS_ATTR in op.attributes else 1
    if count == 1:
        return [(op, _first_external_function(op))]
    parts = []
    for index in range(count):
        part = op.clone()
        _keep_part(part, index)
        parts.append((part, _first_external_function(part)))
    return parts


def _part_of(op: ir.Operation) -> int:
    return ir.IntegerAttr(op.attributes[PART_ATTR]).value if PART_ATTR in op.attributes else 0


def _keep_part(module: ir.Operation, index: int) -> None:
    """Erase from a copy of the module what part ``index`` neither defines nor uses."""
    top = [op.operation for op in module.regions[0].blocks[0].operations]
    if index == 0:
        doomed = [op for op in top if _part_of(op) != 0]
    else:
        bodies = [op for op in top if _part_of(op) == index]
        keep = {ir.StringAttr(op.attributes["sym_name"]).value for op in bodies}
        for body in bodies:
            if NEEDS_ATTR in body.attributes:  # not on the pointer slots a part has
                keep.update(ir.FlatSymbolRefAttr(ref).value for ref in ir.ArrayAttr(body.attributes[NEEDS_ATTR]))
        doomed = [op for op in top if "sym_name" not in op.attributes
                  or ir.StringAttr(op.attributes["sym_name"]).value not in keep]
    for op in doomed:
        op.erase()


def _first_external_function(module: ir.Operation) -> str | None:
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "llvm.func" or not len(op.regions[0].blocks):
            continue
        linkage = str(op.attributes["linkage"]) if "linkage" in op.attributes else "#llvm.linkage<external>"
        if linkage == "#llvm.linkage<external>":
            return ir.StringAttr(op.attributes["sym_name"]).value
    return None


def _link_slots(module: ir.Module) -> dict[str, tuple[int, str, int]]:
    """``{slot global: (its part, target, the target's part)}`` of the slots
    xhlo-partition-codegen made (part 0's slots point at bodies, other parts' at
    functions part 0 keeps)."""
    ops = [op.operation for op in module.body.operations]
    parts = {ir.StringAttr(op.attributes["sym_name"]).value: _part_of(op) for op in ops if PART_ATTR in op.attributes}
    slots = {}
    for op in ops:
        if LINK_TO_ATTR in op.attributes:
            target = ir.StringAttr(op.attributes[LINK_TO_ATTR]).value
            slots[ir.StringAttr(op.attributes["sym_name"]).value] = (_part_of(op), target, parts.get(target, 0))
    return slots
