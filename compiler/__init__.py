"""xhlo: a StableHLO compiler for the CPU, written in Python on MLIR."""

from .api import CompileOptions, compile, pipeline_text
from .checks import CheckFailure
from .errors import CompilerError, UnsupportedOpError
from .executable import Executable

__version__ = "0.1.0"

__all__ = [
    "compile",
    "pipeline_text",
    "CompileOptions",
    "Executable",
    "CompilerError",
    "UnsupportedOpError",
    "CheckFailure",
]
