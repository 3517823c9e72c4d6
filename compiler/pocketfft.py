"""The FFTs xhlo calls: pocketfft, the C++ FFT inside numpy (numpy >= 2.0).

numpy computes ``numpy.fft`` with gufuncs of its ``_pocketfft_umath`` module
(pocketfft, BSD-licensed, the predecessor of the DUCC FFT XLA:CPU calls). A
gufunc's inner loops are plain C functions, reachable from the ufunc object's
``functions`` table (``PyUFuncObject`` in numpy's public ``ufuncobject.h``):

    void loop(char **args, npy_intp const *dimensions, npy_intp const *steps, void *data)

with ``args = {in, &scale, out}``, ``dimensions = {lines, n_in, n_out}`` and
``steps = {line stride in, 0, line stride out, element stride in, element
stride out}`` (bytes). It transforms ``lines`` 1-D lines, SIMD across lines
when there are several; it touches no Python object and numpy itself runs it
without the GIL. ``data`` points at the direction (a C++ ``bool``) for the
complex transforms.

Compiled programs find the loops through a table in the program
(``xhlo-fft-to-pocketfft`` emits it and a function returning its address);
``install`` fills it, as ``xhlo.runtime.parallel.install`` fills the thread
pool's slot, for fresh and disk-cached programs alike. Without numpy's module
(numpy < 2) or if the ufunc's layout is not the one read here, ``available()``
is False and ``xhlo-lower-fft`` computes FFTs in StableHLO instead.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

# The table holds, for each transform, its f32 loop and then its f64 loop.
TRANSFORMS = ("fft", "rfft_n_even", "rfft_n_odd", "irfft")
_INPUT_TYPES = {"fft": ("Ff", "Dd"), "rfft_n_even": ("ff", "dd"), "rfft_n_odd": ("ff", "dd"), "irfft": ("Ff", "Dd")}
TABLE_SIZE = 2 * len(TRANSFORMS)
TABLE_ADDRESS = "xhlo_pocketfft_table_address"  # emitted by xhlo-fft-to-pocketfft: () -> table address


def entry(transform: str, double: bool) -> int:
    """The table index of ``transform``'s loop (a gufunc name of ``TRANSFORMS``)."""
    return 2 * TRANSFORMS.index(transform) + int(double)


class _UFuncHead(ctypes.Structure):
    """The leading fields of ``PyUFuncObject`` (numpy/ufuncobject.h), up to ``types``."""

    _fields_ = [
        ("ob_refcnt", ctypes.c_ssize_t), ("ob_type", ctypes.c_void_p),
        ("nin", ctypes.c_int), ("nout", ctypes.c_int), ("nargs", ctypes.c_int), ("identity", ctypes.c_int),
        ("functions", ctypes.POINTER(ctypes.c_void_p)), ("data", ctypes.POINTER(ctypes.c_void_p)),
        ("ntypes", ctypes.c_int), ("reserved1", ctypes.c_int),
        ("name", ctypes.c_char_p), ("types", ctypes.POINTER(ctypes.c_char)),
    ]


def _loop_address(ufunc: np.ufunc, inputs: str) -> int | None:
    """Address of ``ufunc``'s inner loop for ``inputs``, None unless the object reads as
    the layout above says (name, type count and the loop's type numbers all agree)."""
    signatures = [t.split("->")[0] for t in ufunc.types]
    if inputs not in signatures:
        return None
    index = signatures.index(inputs)
    head = _UFuncHead.from_address(id(ufunc))
    if (head.nin, head.nout, head.ntypes) != (ufunc.nin, ufunc.nout, ufunc.ntypes) or head.name != ufunc.__name__.encode():
        return None
    numbers = [ord(head.types[index * ufunc.nargs + i]) for i in range(ufunc.nargs)]
    expected = [np.dtype(c).num for c in ufunc.types[index].replace("->", "")]
    if numbers != expected:
        return None
    return head.functions[index] or None


@functools.cache
def loop_addresses() -> tuple[int, ...] | None:
    """The table's loops in order, None when numpy's pocketfft gufuncs are not there."""
    try:
        from numpy.fft import _pocketfft_umath as module
    except ImportError:
        return None
    addresses = []
    for name in TRANSFORMS:
        ufunc = getattr(module, name, None)
        for inputs in _INPUT_TYPES[name]:
            address = _loop_address(ufunc, inputs) if isinstance(ufunc, np.ufunc) else None
            if address is None:
                return None
            addresses.append(address)
    return tuple(addresses)


def available() -> bool:
    return loop_addresses() is not None


def install(program) -> bool:
    """Fill ``program``'s loop table; False if it calls no FFT.

    ``program``: a ``JitProgram`` or a disk-cached program, as for
    ``xhlo.runtime.parallel.install``."""
    from .runtime.parallel import packed_function

    address = packed_function(program, TABLE_ADDRESS)
    if not address:
        return False
    loops = loop_addresses()
    if loops is None:  # compiled with the library, run without it: cannot happen in one process
        raise RuntimeError("this program calls numpy's pocketfft, which this process lacks")
    table = ctypes.c_void_p()
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)((ctypes.c_void_p * 1)(ctypes.addressof(table)))
    ctypes.memmove(table.value, (ctypes.c_void_p * len(loops))(*loops), ctypes.sizeof(ctypes.c_void_p) * len(loops))
    return True
