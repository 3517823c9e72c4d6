"""The ``check.*`` comparisons of StableHLO's conformance programs, in numpy.

Semantics as StableHLO's reference runner applies them (see
``shared/conformance/README.md``): exact equality, ULP distance, and absolute
tolerance, with NaN and infinity rules per check.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np


class CheckFailure(AssertionError):
    """A ``check.*`` comparison failed."""


@dataclasses.dataclass(frozen=True)
class Check:
    kind: str  # expect_eq | expect_close | expect_almost_eq | eq
    actual: int  # result index
    expected: int
    location: str = ""
    max_ulp: float = 3
    min_ulp: float = 0
    tolerance: float = 1e-3


def _is_float(a: np.ndarray) -> bool:
    """numpy floats and ml_dtypes floats (bf16, f8...)."""
    if a.dtype.kind == "f":
        return True
    try:
        ml_dtypes.finfo(a.dtype)
        return True
    except (ValueError, TypeError):
        return False


def _parts(a: np.ndarray) -> list[np.ndarray]:
    if np.iscomplexobj(a):
        return [a.real, a.imag]
    return [a]


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise ULP distance (inf where the values can never be close)."""
    width = a.dtype.itemsize
    uint = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width]
    sign_bit = np.array(1, dtype=uint) << np.array(8 * width - 1, dtype=uint)
    ab, bb = a.view(uint), b.view(uint)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    mag_a, mag_b = (ab & ~sign_bit).astype(np.float64), (bb & ~sign_bit).astype(np.float64)
    same_sign = (ab & sign_bit) == (bb & sign_bit)
    dist = np.where(same_sign, np.abs(mag_a - mag_b), mag_a + mag_b)
    finite = np.isfinite(a64) & np.isfinite(b64)
    dist = np.where(finite, dist, np.inf)
    both_nan = np.isnan(a64) & np.isnan(b64)
    return np.where((ab == bb) | both_nan, 0.0, dist)


def _mismatch_text(mask: np.ndarray, actual: np.ndarray, expected: np.ndarray) -> str:
    bad = np.argwhere(mask)
    idx = tuple(int(i) for i in bad[0]) if actual.ndim else ()
    return (
        f"{int(mask.sum())} of {mask.size} elements differ; first at index {list(idx)}: "
        f"got {_scalar_text(actual[idx])}, expected {_scalar_text(expected[idx])}"
    )


def _scalar_text(value) -> str:
    """A plain number (``9``, ``0.1``), not numpy's ``np.int32(9)`` repr."""
    try:
        return str(value.item())
    except (AttributeError, ValueError):
        return str(value)


def compare(check: Check, actual: np.ndarray, expected: np.ndarray) -> str | None:
    """None when the check holds, else a message saying what differs."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != expected {expected.shape}"
    if actual.size == 0:
        return None
    floating = _is_float(actual) or np.iscomplexobj(actual)
    if not floating:
        mismatch = actual != expected
    elif check.kind == "expect_eq":
        mismatch = np.zeros(actual.shape, bool)
        for x, y in zip(_parts(actual), _parts(expected)):
            mismatch |= ~(x.astype(np.float64) == y.astype(np.float64))
    elif check.kind == "expect_close":
        dist = np.zeros(actual.shape)
        for x, y in zip(_parts(actual), _parts(expected)):
            dist = np.maximum(dist, ulp_distance(np.ascontiguousarray(x), np.ascontiguousarray(y)))
        mismatch = (dist > check.max_ulp) | (dist < check.min_ulp)
    else:  # expect_almost_eq, eq
        mismatch = np.zeros(actual.shape, bool)
        for x, y in zip(_parts(actual), _parts(expected)):
            x64, y64 = x.astype(np.float64), y.astype(np.float64)
            with np.errstate(invalid="ignore"):
                close = (np.abs(x64 - y64) <= check.tolerance) | (x64 == y64)
            close |= np.isnan(x64) & np.isnan(y64)
            mismatch |= ~close
    if np.any(mismatch):
        return _mismatch_text(mismatch, actual, expected)
    return None


def evaluate(checks: list[Check], results: tuple[np.ndarray, ...]) -> None:
    """Raise CheckFailure naming every failed check."""
    failures = []
    for check in checks:
        message = compare(check, results[check.actual], results[check.expected])
        if message is not None:
            failures.append(f"check.{check.kind} at {check.location}: {message}")
    if failures:
        raise CheckFailure("; ".join(failures))
