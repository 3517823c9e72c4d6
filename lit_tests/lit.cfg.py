# -*- Python -*-
# ruff: noqa: F821  (lit defines config and lit_config before running this file)
"""lit configuration of xhlo's FileCheck tests: pip ``lit`` and ``filecheck``, no LLVM build.

Run with ``lit -v lit_tests`` from the environment xhlo is installed in.
Tools: ``xhlo-opt`` and ``xhlo-run`` (the console scripts next to this Python,
else on PATH, else ``python -m``), ``FileCheck`` (``$FILECHECK``, then
``FileCheck``, then the pip ``filecheck`` on PATH), ``%python``/``%PYTHON``.
``not`` is lit's own built-in (the internal shell runs every RUN line).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

import lit.formats

config.name = "xhlo"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "lit.local.cfg", "Inputs", "tools"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
# Output/ directories for %t go outside the work tree unless a build dir is given.
config.test_exec_root = lit_config.params.get("exec_root") or os.path.join(
    tempfile.gettempdir(), f"xhlo-lit-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
)

# LLVM's FileCheck reads FILECHECK_OPTS; CHECK-LABEL then scopes captured variables.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]

BIN_DIR = os.path.dirname(sys.executable)


def find_program(name):
    """The console script installed next to this Python, else ``name`` on PATH."""
    local = os.path.join(BIN_DIR, name)
    if os.path.isfile(local) and os.access(local, os.X_OK):
        return local
    return shutil.which(name)


def find_filecheck():
    """(command, is the pip port): $FILECHECK, then FileCheck, then filecheck."""
    for candidate in (os.environ.get("FILECHECK"), "FileCheck", "filecheck"):
        if not candidate:
            continue
        path = candidate if os.path.isabs(candidate) else find_program(candidate)
        if path:
            return path, _is_python_port(path)
    lit_config.fatal(
        "no FileCheck found: set $FILECHECK, put LLVM's FileCheck on PATH, "
        "or `pip install filecheck` (the test extra of xhlo)"
    )


def _is_python_port(path):
    try:
        out = subprocess.run(
            [path, "--help"], capture_output=True, text=True, timeout=60, check=False
        )
    except OSError:
        return False
    return "Python-native" in out.stdout + out.stderr


def python_module_fallback(module):
    return f"{sys.executable} -m {module}"


def add_tool(name, command):
    """Substitute ``name`` where it stands as a command word in RUN lines."""
    pattern = r"(?<![\w./%-])" + re.escape(name) + r"(?![\w./-])"
    config.substitutions.append((pattern, command.replace("\\", "\\\\")))


filecheck, is_python_port = find_filecheck()
# The pip port ignores FILECHECK_OPTS: give it the flag directly.
filecheck_command = f"{filecheck} --enable-var-scope" if is_python_port else filecheck

config.substitutions.append(("%PYTHON", sys.executable))
config.substitutions.append(("%python", sys.executable))
add_tool("FileCheck", filecheck_command)
add_tool("xhlo-opt", find_program("xhlo-opt") or python_module_fallback("xhlo.tools.opt"))
add_tool("xhlo-run", find_program("xhlo-run") or python_module_fallback("xhlo.tools.run"))

config.available_features.add("filecheck-python-port" if is_python_port else "llvm-filecheck")
