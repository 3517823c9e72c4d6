"""The check dialect's custom syntax, rewritten to the generic form xhlo parses.

StableHLO's interpreter tests (``stablehlo/tests/interpret``) write checks as
``check.expect_eq_const %r, dense<[1, 2]> : tensor<2xi64>``. The provider's
bindings do not register the check dialect, so only the generic form
(``"check.expect_eq_const"(%r) <{value = ...}> : (tensor<2xi64>) -> ()``) parses,
with unregistered dialects allowed. ``to_generic`` rewrites each check op of the
custom syntax (the assembly formats of StableHLO's ``CheckOps.td``), spanning
lines if its constant does, and leaves everything else as it is.
"""

from __future__ import annotations

import re

_OP = re.compile(
    r"^([ \t]*)check\.(expect_eq_const|expect_almost_eq_const|expect_eq|expect_almost_eq|expect_close"
    r"|expect_serialized_eq)\b",
    re.MULTILINE,
)
_OPERAND = re.compile(r"\s*(%[\w$.#-]+)\s*")
_KEYWORD = re.compile(r"\s*,\s*(tolerance|max_ulp_difference|min_ulp_difference|probe_id|iter)\s*=\s*")
_SCALAR = re.compile(r"\"[^\"]*\"|[-+\w.]+")


class CheckSyntaxError(ValueError):
    """A check op whose custom syntax does not follow its assembly format."""


def balanced(text: str, start: int, open_: str = "<", close: str = ">") -> int:
    """Index just past the group that opens at ``text[start]``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
    raise CheckSyntaxError(f"unbalanced '{open_}' at offset {start}")


def _type(text: str, pos: int) -> tuple[str, int]:
    """A type (``tensor<...>``, ``complex<...>``, ``f32``) starting at ``pos`` (after blanks)."""
    match = re.compile(r"\s*([\w.!]+)").match(text, pos)
    if match is None:
        raise CheckSyntaxError(f"expected a type at offset {pos}")
    end = match.end()
    if end < len(text) and text[end] == "<":
        end = balanced(text, end)
    return text[match.start(1) : end], end


def _attribute(text: str, pos: int) -> tuple[str, int]:
    """An elements attribute with its type (``dense<...> : tensor<...>``)."""
    match = re.compile(r"\s*(\w+)<").match(text, pos)
    if match is None:
        raise CheckSyntaxError(f"expected an elements attribute at offset {pos}")
    end = balanced(text, match.end() - 1)
    colon = re.compile(r"\s*:\s*").match(text, end)
    if colon is None:
        raise CheckSyntaxError(f"expected ': type' after the attribute at offset {end}")
    _, end = _type(text, colon.end())
    return text[match.start(1) : end], end


def _rewrite_one(text: str, match: re.Match) -> tuple[str, int]:
    """The generic form of the check op ``match`` found, and where its text ends."""
    indent, kind = match.group(1), match.group(2)
    pos, operands, attributes = match.end(), [], {}
    operand = _OPERAND.match(text, pos)
    if operand is None:
        raise CheckSyntaxError(f"check.{kind}: expected an operand")
    operands.append(operand.group(1))
    pos = operand.end()
    if kind.endswith("_const"):
        comma = re.compile(r"\s*,").match(text, pos)
        if comma is None:
            raise CheckSyntaxError(f"check.{kind}: expected ', <constant>'")
        attributes["value"], pos = _attribute(text, comma.end())
    elif kind != "expect_serialized_eq":
        second = re.compile(r"\s*,\s*(%[\w$.#-]+)").match(text, pos)
        if second is None:
            raise CheckSyntaxError(f"check.{kind}: expected a second operand")
        operands.append(second.group(1))
        pos = second.end()
    while (keyword := _KEYWORD.match(text, pos)) is not None:
        value = _SCALAR.match(text, keyword.end())
        if value is None:
            raise CheckSyntaxError(f"check.{kind}: expected a value for '{keyword.group(1)}'")
        attributes[keyword.group(1)] = value.group(0)
        pos = value.end()
    dictionary = re.compile(r"\s*\{").match(text, pos)
    if dictionary is not None:
        end = balanced(text, dictionary.end() - 1, "{", "}")
        extra = text[dictionary.end() : end - 1].strip()
        pos = end
    else:
        extra = ""
    types = []
    colon = re.compile(r"[ \t]*:").match(text, pos)
    if colon is not None:
        pos = colon.end()
        t, pos = _type(text, pos)
        types.append(t)
        if kind == "expect_close":  # the only format naming both types
            comma = re.compile(r"\s*,").match(text, pos)
            if comma is None:
                raise CheckSyntaxError("check.expect_close: expected two types")
            t, pos = _type(text, comma.end())
            types.append(t)
    if not types:  # the *_const forms name no type: the constant's is the operand's
        types = [attributes["value"].rsplit(":", 1)[1].strip()] if "value" in attributes else []
    if len(types) == 1 and len(operands) == 2:
        types.append(types[0])
    if len(types) != len(operands):
        raise CheckSyntaxError(f"check.{kind}: expected {len(operands)} operand type(s)")
    props = ", ".join(f"{name} = {_typed(name, value)}" for name, value in attributes.items())
    props = ", ".join(p for p in (props, extra) if p)
    generic = (f'{indent}"check.{kind}"({", ".join(operands)}) <{{{props}}}> '
               f': ({", ".join(types)}) -> ()')
    return generic, pos


def _typed(name: str, value: str) -> str:
    """An attribute value as the op's ODS type stores it."""
    if name == "tolerance":
        return f"{float(value)!r} : f64"
    if name in ("max_ulp_difference", "min_ulp_difference"):
        return f"{value} : ui64"
    if name == "iter":
        return f"{value} : ui32"
    return value


def to_generic(text: str) -> str:
    """``text`` with every check op of the custom syntax in the generic form."""
    if "check." not in text or _OP.search(text) is None:  # the first test is a fast scan
        return text
    pieces, pos = [], 0
    for match in _OP.finditer(text):
        if match.start() < pos:
            continue
        generic, end = _rewrite_one(text, match)
        pieces += [text[pos : match.start()], generic]
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)
