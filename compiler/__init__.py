"""xhlo: a StableHLO compiler for the CPU, written in Python on MLIR."""

from .api import CompileOptions, compile, pipeline_text
from .checks import CheckFailure
from .errors import CompilerError, UnsupportedOpError
from .executable import Executable
from .runtime.errors import CollectiveError
from .runtime.host import register_custom_call_target, unregister_custom_call_target

__version__ = "0.1.0"

_JAX_INTEROP = ("jit", "load_exported")


def __getattr__(name: str):
    """``xhlo.jit``/``xhlo.load_exported`` come from ``xhlo.jax_interop`` on first use."""
    if name in _JAX_INTEROP:
        from . import jax_interop

        return getattr(jax_interop, name)
    raise AttributeError(f"module 'xhlo' has no attribute '{name}'")


__all__ = [
    "compile",
    "pipeline_text",
    "CompileOptions",
    "Executable",
    "CompilerError",
    "UnsupportedOpError",
    "CheckFailure",
    "CollectiveError",
    "register_custom_call_target",
    "unregister_custom_call_target",
]
