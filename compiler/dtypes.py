"""Element types: MLIR spelling <-> numpy dtype (ml_dtypes for bf16, f8, i4...)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

# MLIR element type spelling -> numpy dtype. Every type here has a byte-sized
# storage in both numpy and the LLVM lowering (sub-byte types use one byte).
MLIR_TO_NUMPY: dict[str, np.dtype] = {
    "i1": np.dtype(np.bool_),
    "i2": np.dtype(ml_dtypes.int2),
    "i4": np.dtype(ml_dtypes.int4),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "ui2": np.dtype(ml_dtypes.uint2),
    "ui4": np.dtype(ml_dtypes.uint4),
    "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E4M3FNUZ": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "f8E5M2FNUZ": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "f8E4M3B11FNUZ": np.dtype(ml_dtypes.float8_e4m3b11fnuz),
    "f8E3M4": np.dtype(ml_dtypes.float8_e3m4),
    "f8E4M3": np.dtype(ml_dtypes.float8_e4m3),
    "f8E8M0FNU": np.dtype(ml_dtypes.float8_e8m0fnu),
    "f6E2M3FN": np.dtype(ml_dtypes.float6_e2m3fn),
    "f6E3M2FN": np.dtype(ml_dtypes.float6_e3m2fn),
    "f4E2M1FN": np.dtype(ml_dtypes.float4_e2m1fn),
    "complex<f32>": np.dtype(np.complex64),
    "complex<f64>": np.dtype(np.complex128),
}

NUMPY_TO_MLIR: dict[np.dtype, str] = {}
for _name, _dt in MLIR_TO_NUMPY.items():
    NUMPY_TO_MLIR.setdefault(_dt, _name)

SUB_BYTE_BITS = {"i2": 2, "i4": 4, "ui2": 2, "ui4": 4, "f4E2M1FN": 4, "f6E2M3FN": 6, "f6E3M2FN": 6}
_SIGNED_SUB_BYTE = ("i2", "i4")


def to_numpy_dtype(element_type: str) -> np.dtype:
    """The numpy dtype of an MLIR element type spelling (``f32``, ``ui8``...)."""
    try:
        return MLIR_TO_NUMPY[element_type]
    except KeyError:
        raise TypeError(f"element type {element_type!r} has no numpy equivalent") from None


def to_mlir_type(dtype) -> str:
    """The MLIR spelling of a numpy dtype (or anything ``np.dtype`` accepts)."""
    dt = np.dtype(dtype)
    try:
        return NUMPY_TO_MLIR[dt]
    except KeyError:
        raise TypeError(f"numpy dtype {dt} has no MLIR element type") from None


def canonicalize_sub_byte(array: np.ndarray, element_type: str) -> np.ndarray:
    """Sign- or zero-extend the stored low bits of sub-byte results in place.

    LLVM leaves the bits above an i4/i2 value unspecified in its byte.
    """
    bits = SUB_BYTE_BITS.get(element_type)
    if bits is None:
        return array
    raw = array.view(np.uint8)
    mask = (1 << bits) - 1
    low = raw & mask
    if element_type in _SIGNED_SUB_BYTE:
        sign = 1 << (bits - 1)
        low = np.where(low & sign, low | (0xFF ^ mask), low).astype(np.uint8)
    raw[...] = low
    return array
