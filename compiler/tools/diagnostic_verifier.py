"""``xhlo-opt --verify-diagnostics``: check emitted diagnostics against ``expected-*`` comments.

The bindings do not expose MLIR's source-manager verifier, so xhlo-opt collects
the diagnostics itself and matches them here with mlir-opt's rules: an
``// expected-error {{text}}`` (or ``-warning``, ``-remark``, ``-note``) expects
a diagnostic of that severity whose message contains ``text``, on the same
line, on ``@+N``/``@-N`` lines, on the nearest line above/below that holds no
expectation (``@above``/``@below``), or at an unknown location (``@unknown``).
``expected-error-re`` takes ``{{regex}}`` groups inside the text. Unexpected
diagnostics and expectations nobody met are both errors.
"""

from __future__ import annotations

import dataclasses
import re

SEVERITIES = ("error", "warning", "remark", "note")

_FILE_LINE_COL = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')
_EXPECTED = re.compile(
    r"expected-(?P<severity>error|warning|remark|note)(?P<re>-re)?\s*"
    r"(?:@(?P<where>[+-]\d+|above|below|unknown))?\s*\{\{(?P<text>.*)\}\}"
)
# mlir-opt turns this note off while verifying; the bindings cannot, so drop it.
_OP_NOTE_PREFIX = "see current operation:"


@dataclasses.dataclass(frozen=True)
class Diag:
    """One diagnostic, copied out of MLIR (its objects die with the callback)."""

    severity: str
    message: str
    location: str  # the location's text, e.g. loc("f.mlir":3:5)
    notes: tuple[Diag, ...] = ()

    @classmethod
    def from_mlir(cls, diag, rename: str | None = None) -> Diag:
        """From an ``ir.Diagnostic``/``DiagnosticInfo``; ``rename`` replaces the parser's "-"."""
        location = str(diag.location)
        if rename is not None:
            location = location.replace('loc("-":', f'loc("{rename}":')
        return cls(
            severity=diag.severity.name.lower(),
            message=diag.message,
            location=location,
            notes=tuple(cls.from_mlir(n, rename) for n in diag.notes),
        )

    @property
    def file_line_col(self) -> tuple[str, int, int] | None:
        """The first file location inside this diagnostic's location."""
        m = _FILE_LINE_COL.search(self.location)
        return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None

    def where(self, fallback: str) -> str:
        """``file:line:col`` as mlir-opt prints it, or ``fallback`` for unknown locations."""
        flc = self.file_line_col
        return f"{flc[0]}:{flc[1]}:{flc[2]}" if flc else fallback


@dataclasses.dataclass
class Expectation:
    severity: str
    line: int | None  # the line the diagnostic must be on; None for @unknown
    comment_line: int
    column: int
    text: str
    pattern: re.Pattern | None
    matched: bool = False

    def accepts(self, message: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(message) is not None
        return self.text in message


def _regex_for(text: str) -> re.Pattern:
    """``a{{b.*}}c`` -> literal ``a``, regex ``b.*``, literal ``c``."""
    parts, pos = [], 0
    for m in re.finditer(r"\{\{(.*?)\}\}", text):
        parts.append(re.escape(text[pos : m.start()]))
        parts.append(f"(?:{m.group(1)})")
        pos = m.end()
    parts.append(re.escape(text[pos:]))
    return re.compile("".join(parts))


def parse_expectations(source: str) -> list[Expectation]:
    """Every ``expected-*`` directive of ``source`` (line numbers 1-based)."""
    lines = source.splitlines()
    directive_lines = {i for i, line in enumerate(lines, 1) if _EXPECTED.search(line)}
    found = []
    for number, line in enumerate(lines, 1):
        for m in _EXPECTED.finditer(line):
            found.append(
                Expectation(
                    severity=m.group("severity"),
                    line=_target_line(m.group("where"), number, len(lines), directive_lines),
                    comment_line=number,
                    column=m.start() + 1,
                    text=m.group("text"),
                    pattern=_regex_for(m.group("text")) if m.group("re") else None,
                )
            )
    return found


def _target_line(where: str | None, line: int, count: int, directive_lines: set[int]) -> int | None:
    if where is None:
        return line
    if where == "unknown":
        return None
    if where in ("above", "below"):
        step = -1 if where == "above" else 1
        target = line + step
        while 1 <= target <= count and target in directive_lines:
            target += step
        return target
    return line + int(where)


def _flatten(diags: list[Diag]) -> list[Diag]:
    """Each diagnostic followed by its notes, which are verified like any diagnostic."""
    out = []
    for d in diags:
        out.append(d)
        out.extend(n for n in _flatten(list(d.notes)) if not n.message.startswith(_OP_NOTE_PREFIX))
    return out


def verify(
    diags: list[Diag],
    expectations: list[Expectation],
    filename: str,
    *,
    only_expected: bool = False,
) -> list[str]:
    """mlir-opt style error lines for every mismatch (empty when all is as expected)."""
    problems = []
    for diag in _flatten(diags):
        flc = diag.file_line_col
        line = flc[1] if flc and flc[0] == filename else None
        if line is None and flc is not None:
            line = -1  # a location in another file: no expectation can name it
        candidates = [e for e in expectations if e.line == line and e.accepts(diag.message)]
        same_kind = [e for e in candidates if e.severity == diag.severity]
        if same_kind:
            pick = next((e for e in same_kind if not e.matched), same_kind[0])
            pick.matched = True
        elif not only_expected:
            problems.append(
                f"{diag.where(filename)}: error: unexpected {diag.severity}: {diag.message}"
            )
    for e in expectations:
        if not e.matched:
            problems.append(
                f"{filename}:{e.comment_line}:{e.column}: error: "
                f'expected {e.severity} "{e.text}" was not produced'
            )
    return problems
