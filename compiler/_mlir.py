"""The MLIR provider: the only module of xhlo that imports the bindings wheel.

Everything else imports ``ir``, ``passmanager``, ``rewrite``, ``ExecutionEngine``,
``stablehlo_api`` and the C API library (``capi``) from here, so switching the
provider (torch-mlir today) touches one file.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.abc
import importlib.machinery
import os
import shlex
import sys
import threading

from torch_mlir import ir, passmanager, rewrite  # noqa: F401  (re-exported)
from torch_mlir._mlir_libs import _mlir, _stablehlo as stablehlo_api
from torch_mlir.dialects import arith, func, linalg, memref, quant, scf, tensor, vector  # noqa: F401
from torch_mlir.execution_engine import ExecutionEngine  # noqa: F401

PROVIDER = "torch-mlir"

# LLVM options for the JIT, set once per process. MLIR has already tiled,
# vectorized and unrolled the loops it emits; LLVM's own unroller and loop
# strength reduction re-unrolled them and made about half of the JIT's time
# (conv2d 100 -> 37 ms, attention 134 -> 83 ms) for no run-time gain
# (benchmarks/README.md). The post-register-allocation scheduler (which the
# host CPU's tuning turns on) took 7-15% of machine-code generation, again for
# no measurable run-time gain on out-of-order cores. ``XHLO_LLVM_OPTIONS``
# replaces them ("" for LLVM's).
DEFAULT_LLVM_OPTIONS = "-unroll-threshold=0 -disable-lsr -post-RA-scheduler=false"
_llvm_options_set = False

# The upstream dialects xhlo builds ops of, loaded into every context (ops
# created generically need their dialect loaded). The others load on demand;
# loading all ~50 eagerly took 3-5 ms of every compile.
XHLO_DIALECTS = (
    "builtin", "func", "arith", "math", "complex", "tensor", "linalg", "memref", "scf",
    "cf", "vector", "llvm", "bufferization", "affine", "index", "shape", "quant", "ub",
    "transform",
)

_passes_registered = False
_lock = threading.Lock()


class _DialectsWithoutOpClasses(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """An empty Python module for every dialect, under its own prefix.

    For each op object it hands out, the bindings import the op's dialect module
    (``torch_mlir.dialects.<dialect>``) and remember only a success: for dialects
    without Python op classes (stablehlo, chlo, check, sdy, ...) every op object
    cost a failed import, about 40 us (3 ms of sort_1m's compile). Searched after
    ``torch_mlir.dialects``, this prefix turns the miss into a hit they remember;
    ops keep the generic OpView.
    """

    PREFIX = "_xhlo_dialects_without_op_classes"

    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.PREFIX or fullname.startswith(self.PREFIX + "."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module) -> None:
        pass


sys.meta_path.insert(0, _DialectsWithoutOpClasses())
_mlir.globals.append_dialect_search_prefix(_DialectsWithoutOpClasses.PREFIX)


def _register_passes_once() -> None:
    global _passes_registered
    with _lock:
        if not _passes_registered:
            stablehlo_api.register_stablehlo_passes()
            _passes_registered = True


def set_llvm_options_once() -> None:
    """Pass ``XHLO_LLVM_OPTIONS`` (or the defaults) to LLVM's command-line parser, once.

    LLVM ends the process on an option it does not know: the variable is for experiments.
    """
    global _llvm_options_set
    with _lock:
        if _llvm_options_set:
            return
        _llvm_options_set = True
        options = shlex.split(os.environ.get("XHLO_LLVM_OPTIONS", DEFAULT_LLVM_OPTIONS))
        if options:
            argv = [b"xhlo", *(option.encode() for option in options)]
            capi().LLVMParseCommandLineOptions(len(argv), (ctypes.c_char_p * len(argv))(*argv), None)


class StringRef(ctypes.Structure):
    """``MlirStringRef``."""

    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]

    @classmethod
    def of(cls, text: str) -> "StringRef":
        data = text.encode()
        return cls(data, len(data))


@functools.cache
def capi() -> ctypes.CDLL:
    """The provider's MLIR C API library, for what its Python bindings lack: LLVM's
    options, and ExecutionEngine calls that release the GIL (``ctypes`` does, the
    bindings do not), so that several modules compile on several threads."""
    from torch_mlir import _mlir_libs

    library = ctypes.CDLL(os.path.join(os.path.dirname(_mlir_libs.__file__), "libTorchMLIRAggregateCAPI.so"))
    handle = ctypes.c_void_p
    prototypes = {
        "mlirExecutionEngineCreate": (handle, [handle, ctypes.c_int, ctypes.c_int, handle, ctypes.c_bool]),
        "mlirExecutionEngineDestroy": (None, [handle]),
        "mlirExecutionEngineLookup": (handle, [handle, StringRef]),
        "mlirExecutionEngineLookupPacked": (handle, [handle, StringRef]),
        "mlirExecutionEngineRegisterSymbol": (None, [handle, StringRef, handle]),
        "mlirExecutionEngineDumpToObjectFile": (None, [handle, StringRef]),
        "mlirModuleFromOperation": (handle, [handle]),
        "mlirRegisterAllLLVMTranslations": (None, [handle]),
    }
    for name, (restype, argtypes) in prototypes.items():
        function = getattr(library, name)
        function.restype, function.argtypes = restype, argtypes
    return library


_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def capi_handle(obj) -> int:
    """The C API handle (``MlirOperation``, ``MlirContext``, ...) a bindings object wraps."""
    capsule = obj._CAPIPtr
    return _capsule_pointer(capsule, _capsule_name(capsule))


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
    """A context with StableHLO, CHLO, VHLO and ``XHLO_DIALECTS`` loaded, the rest registered.

    Unregistered dialects are allowed by default because conformance files use
    the ``check`` dialect in generic form and JAX's Shardy exports use ``sdy``.
    """
    _register_passes_once()
    set_llvm_options_once()
    ctx = ir.Context(load_on_create_dialects=[])
    for dialect in XHLO_DIALECTS:
        # loads it without importing its Python op classes (torch_mlir.dialects.llvm alone
        # is ~50 ms): a new process reads a disk-cached program in 8 ms instead of 65
        ctx.get_dialect_descriptor(dialect)
    stablehlo_api.register_dialect(ctx)
    ctx.allow_unregistered_dialects = allow_unregistered
    _load_chlo(ctx)
    return ctx
