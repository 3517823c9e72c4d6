"""Errors xhlo raises, with MLIR diagnostics turned into readable text."""

from __future__ import annotations

import re

from ._mlir import ir

_LOC_FILE_LINE_COL = re.compile(r'^loc\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)')


class CompilerError(Exception):
    """A compile failure: the stage, the diagnostics and how to reproduce it."""

    def __init__(self, message: str, *, stage: str | None = None, reproducer: str | None = None):
        self.stage = stage
        self.reproducer = reproducer
        text = message if stage is None else f"[{stage}] {message}"
        if reproducer:
            text += f"\n  reproduce with: {reproducer}"
        super().__init__(text)


class UnsupportedOpError(CompilerError):
    """An op (or custom call target) xhlo cannot compile."""


def format_location(loc, filename: str | None = None) -> str:
    """``file:line:col`` for a file location, else the location's text."""
    text = str(loc)
    m = _LOC_FILE_LINE_COL.match(text)
    if m is None:
        # Fused / named / callsite locations: show the first file location inside.
        inner = re.search(r'"([^"]*)":(\d+):(\d+)', text)
        if inner is None:
            return filename or "<unknown>"
        file, line, col = inner.groups()
    else:
        file, line, col = m.group("file"), m.group("line"), m.group("col")
    if file in ("-", "") and filename:
        file = filename
    return f"{file}:{line}:{col}"


def format_diagnostics(error: "ir.MLIRError", filename: str | None = None) -> str:
    """mlir-opt style lines, ``file:line:col: error: message`` plus notes."""
    lines = []
    for diag in error.error_diagnostics:
        lines.append(f"{format_location(diag.location, filename)}: error: {diag.message}")
        for note in diag.notes:
            lines.append(f"{format_location(note.location, filename)}: note: {note.message}")
    if not lines:
        lines.append(f"{filename or '<input>'}: error: {error}")
    return "\n".join(lines)


def op_error(op, message: str, filename: str | None = None) -> str:
    """A message naming an op and its location."""
    return f"{format_location(op.location, filename)}: error: '{op.name}' {message}"
