"""Compiled programs kept for reuse: in memory always, on disk when asked to.

Compiling the same program twice should not run the pipeline twice. The key
of a compilation is a hash of the loaded module (its bytecode, so text, files,
bytes and JAX exports all key alike), the entry point, the options, the
pipeline text and xhlo's own sources (a changed pass invalidates old entries),
plus the host CPU for object code.

* In memory: the last ``MEMORY_ENTRIES`` executables, so ``xhlo.compile`` of a
  program already compiled in this process returns the same Executable.
* On disk (``XHLO_CACHE_DIR`` or ``compile(..., cache_dir=...)``): the JIT's
  object code, linked by the system linker (``ld -shared``) into a shared
  library that ``ctypes`` loads in a later process, next to a JSON file with
  the signatures. The ExecutionEngine cannot load object files itself, so
  without ``ld`` there is no disk cache (compilation proceeds as usual), and
  programs with collectives (their runtime is bound into the engine at load
  time) are kept in memory only.
"""

from __future__ import annotations

import collections
import ctypes
import dataclasses
import functools
import hashlib
import io
import json
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from . import host
from ._mlir import PROVIDER, ir
from .blas import load_globally

MEMORY_ENTRIES = 64
_FORMAT = 2  # bump when the stored metadata changes


@functools.cache
def _xhlo_fingerprint() -> str:
    """Hash of xhlo's Python sources: a change to any pass makes a new key."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    roots = [package] + [package.parent / name for name in ("passes", "dialects")]
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root.parent)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def compilation_key(module: ir.Module, **settings) -> str:
    """A hex digest naming one compilation of ``module`` with ``settings``."""
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    digest = hashlib.sha256(buffer.getvalue())
    digest.update(json.dumps(settings, sort_keys=True, default=str).encode())
    digest.update(f"{_FORMAT} {PROVIDER} {_xhlo_fingerprint()} {host.describe()}".encode())
    return digest.hexdigest()


# -- in memory ----------------------------------------------------------------------------------

_memory: collections.OrderedDict[str, Any] = collections.OrderedDict()
_lock = threading.Lock()


def remember(key: str, executable: Any) -> None:
    with _lock:
        _memory[key] = executable
        _memory.move_to_end(key)
        while len(_memory) > MEMORY_ENTRIES:
            _memory.popitem(last=False)


def recall(key: str) -> Any | None:
    with _lock:
        executable = _memory.get(key)
        if executable is not None:
            _memory.move_to_end(key)
        return executable


def clear_memory() -> None:
    with _lock:
        _memory.clear()


# -- on disk ------------------------------------------------------------------------------------


class LoadedProgram:
    """A compiled program loaded from a shared library; ``lookup`` as ExecutionEngine's."""

    def __init__(self, path: str, shared_libs: list[str], link_slots: dict[str, str]):
        self._deps = [load_globally(lib) for lib in shared_libs]
        self._library = ctypes.CDLL(path)
        for slot, body in link_slots.items():  # as JitProgram links its parts
            body_address = ctypes.cast(getattr(self._library, body), ctypes.c_void_p).value
            ctypes.c_void_p.in_dll(self._library, slot).value = body_address

    def lookup(self, name: str):
        address = ctypes.cast(getattr(self._library, f"_mlir__mlir_ciface_{name}"), ctypes.c_void_p).value
        return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)


def cache_dir(option: str | os.PathLike | None) -> Path | None:
    """The disk cache directory: the option, else ``$XHLO_CACHE_DIR``, else none."""
    chosen = option if option is not None else os.environ.get("XHLO_CACHE_DIR")
    return Path(chosen) if chosen else None


def _linker() -> str | None:
    return shutil.which("ld")


def store(directory: Path, key: str, program: Any, metadata: dict) -> bool:
    """Write the program's object code (a ``JitProgram``) as ``<key>.so`` and
    ``metadata`` as ``<key>.json``."""
    linker = _linker()
    if linker is None:
        return False
    directory.mkdir(parents=True, exist_ok=True)
    metadata = {**metadata, "link_slots": program.link_slots}
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        lib = Path(scratch, "program.so")
        objects = [str(obj) for obj in program.dump_object_files(Path(scratch))]
        linked = subprocess.run([linker, "-shared", "-o", str(lib), *objects], capture_output=True, check=False)
        if linked.returncode != 0 or not lib.exists():
            return False
        meta = Path(scratch, "program.json")
        meta.write_text(json.dumps(metadata))
        os.replace(lib, directory / f"{key}.so")  # the library first: a .json names a complete entry
        os.replace(meta, directory / f"{key}.json")
    return True


def load(directory: Path, key: str) -> tuple[LoadedProgram, dict] | None:
    meta_path, lib_path = directory / f"{key}.json", directory / f"{key}.so"
    if not meta_path.exists() or not lib_path.exists():
        return None
    try:
        metadata = json.loads(meta_path.read_text())
        program = LoadedProgram(str(lib_path), metadata.get("shared_libs", []), metadata.get("link_slots", {}))
        return program, metadata
    except (OSError, ValueError, AttributeError):
        return None


def signature_to_json(sig) -> dict:
    return dataclasses.asdict(sig)


def signature_from_json(data: dict):
    from .checks import Check
    from .executable import FunctionSignature, TensorSpec

    return FunctionSignature(
        name=data["name"],
        inputs=tuple(TensorSpec(tuple(t["shape"]), t["element_type"]) for t in data["inputs"]),
        outputs=tuple(TensorSpec(tuple(t["shape"]), t["element_type"]) for t in data["outputs"]),
        checks=tuple(Check(**c) for c in data["checks"]),
        scratch_bytes=data.get("scratch_bytes", 0),
    )
