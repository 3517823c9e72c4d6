"""xhlo-fft-to-pocketfft: FFTs call numpy's pocketfft, checked against numpy and JAX.

``test_lower_fft.py`` checks every transform kind both ways (pocketfft and
StableHLO) against numpy.fft; this file checks what only the library path
does: reading pocketfft's loops out of numpy, strided transforms of other axes
than the last (JAX's transpose, fft, transpose), the thread pool, the disk
cache, and which transforms it leaves to xhlo-lower-fft.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import xhlo
from xhlo import pocketfft
from xhlo.runtime import parallel

from .conftest import load_from_disk_cache

jax = pytest.importorskip("jax")
import jax.numpy as jnp
from jax import export

RNG = np.random.default_rng(0)


def random_complex(shape, dtype=np.complex64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def compile_jax(fn, *args, **options):
    return xhlo.compile(export.export(jax.jit(fn), platforms=["cpu"])(*args), **options)


def calls_pocketfft(exe) -> bool:
    return "xhlo_pocketfft_lines" in exe.ir("xhlo-stablehlo-prepare")


def test_loops_are_read_from_numpy():
    """One loop per transform and precision, and the layout check refuses a ufunc whose
    types are not the asked ones."""
    from numpy.fft import _pocketfft_umath as module

    addresses = pocketfft.loop_addresses()
    assert addresses is not None and len(addresses) == pocketfft.TABLE_SIZE
    assert len(set(addresses)) == pocketfft.TABLE_SIZE
    assert pocketfft._loop_address(module.fft, "ff") is None  # fft has no real-input loop
    assert pocketfft._loop_address(np.add, "ff") is not None  # any ufunc reads the same way


# (function, input) as JAX exports them: other axes than the last come as
# transpose, fft, transpose; f64 with x64 off becomes f32, so the f64 cases use
# complex128 inputs under jax.enable_x64.
JAX_CASES = {
    "fft axis 0": (lambda x: jnp.fft.fft(x, axis=0), random_complex((96, 33))),
    "fft axis 1 of 3-D": (lambda x: jnp.fft.fft(x, axis=1), random_complex((4, 40, 5))),
    "ifft2": (jnp.fft.ifft2, random_complex((3, 16, 9))),
    "fftn": (jnp.fft.fftn, random_complex((4, 6, 10))),
    "rfft2": (jnp.fft.rfft2, RNG.standard_normal((64, 48)).astype(np.float32)),
    "rfft axis 0": (lambda x: jnp.fft.rfft(x, axis=0), RNG.standard_normal((30, 7)).astype(np.float32)),
    "irfftn": (lambda x: jnp.fft.irfftn(x, (4, 6, 9)), random_complex((2, 4, 6, 5))),
    "irfft odd": (lambda x: jnp.fft.irfft(x, 11), random_complex((8, 6))),
}


@pytest.mark.parametrize("name", JAX_CASES)
def test_matches_jax(name):
    fn, x = JAX_CASES[name]
    exe = compile_jax(fn, x)
    assert calls_pocketfft(exe)
    expected = np.asarray(jax.jit(fn)(x))
    got = exe(x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_double_precision_matches_numpy():
    with jax.enable_x64(True):
        x = random_complex((6, 10, 12), np.complex128)
        exe = compile_jax(lambda v: jnp.fft.ifftn(v, axes=(0, 2)), x)
    assert calls_pocketfft(exe)
    np.testing.assert_allclose(exe(x), np.fft.ifftn(x, axes=(0, 2)), rtol=0, atol=1e-15)


def test_no_complex_transpose_is_left():
    """The transposes around a transform of axis 0 become strides of the library call."""
    exe = compile_jax(lambda x: jnp.fft.fft(x, axis=0), random_complex((96, 33)))
    assert "stablehlo.transpose" not in exe.ir("xhlo-stablehlo-prepare")


def test_large_transforms_run_on_the_pool():
    """256 rows of 1024: blocks of lines are handed to the thread pool."""
    previous = parallel.get_num_threads()
    parallel.set_num_threads(2)
    try:
        x = random_complex((256, 1024))
        exe = compile_jax(jnp.fft.fft, x)
        start = parallel.jobs_run()
        got = exe(x)
        assert parallel.jobs_run() > start
        assert "xhlo_parallel_for" in exe.ir("xhlo-lower-to-loops")
    finally:
        parallel.set_num_threads(previous)
    np.testing.assert_allclose(got, np.fft.fft(x.astype(np.complex128)), rtol=0, atol=2e-4 * 32)


@pytest.mark.parametrize("inverse", [False, True])
def test_long_single_lines_are_split_into_many_lines(inverse):
    """A single line past long-length: two transforms of many lines and a twiddle
    multiply (pocketfft would run one line on one core)."""
    x = random_complex((2, 1 << 17))
    exe = compile_jax(jnp.fft.ifft if inverse else jnp.fft.fft, x)
    prepared = exe.ir("xhlo-stablehlo-prepare")
    assert prepared.count("call @xhlo_fft") == 2 and "stablehlo.fft" not in prepared
    expected = (np.fft.ifft if inverse else np.fft.fft)(x.astype(np.complex128))
    np.testing.assert_allclose(exe(x), expected, rtol=0, atol=1e-6 * np.abs(expected).max())


@pytest.mark.parametrize("inverse", [False, True])
def test_long_real_single_lines_are_halved(inverse):
    """A long real line: a complex transform of half the length (the even and odd samples
    as real and imaginary parts), itself split into many lines."""
    n = 1 << 18
    x = RNG.standard_normal(n).astype(np.float32)
    if inverse:
        x = np.fft.rfft(x).astype(np.complex64)
        fn, oracle = (lambda v: jnp.fft.irfft(v, n)), (lambda v: np.fft.irfft(v.astype(np.complex128), n))
    else:
        fn, oracle = jnp.fft.rfft, (lambda v: np.fft.rfft(v.astype(np.float64)))
    exe = compile_jax(fn, x)
    prepared = exe.ir("xhlo-stablehlo-prepare")
    assert prepared.count("call @xhlo_fft") == 2 and "stablehlo.fft" not in prepared
    expected = oracle(x)
    np.testing.assert_allclose(exe(x), expected, rtol=0, atol=1e-6 * np.abs(expected).max())


def test_program_from_the_disk_cache_fills_its_table(tmp_path):
    x = random_complex((8, 64))
    loaded = load_from_disk_cache(export.export(jax.jit(jnp.fft.fft), platforms=["cpu"])(x), tmp_path)
    np.testing.assert_allclose(loaded(x), np.fft.fft(x), rtol=1e-5, atol=1e-4)


def test_table_address_is_a_host_lookup():
    """The table's accessor keeps external linkage (xhlo-internalize-functions), so
    ``install`` finds it in a compiled program and fills every entry."""
    exe = compile_jax(jnp.fft.fft, random_complex((4, 8)))
    assert pocketfft.install(exe._engine)
    address = ctypes.c_void_p()
    function = parallel.packed_function(exe._engine, pocketfft.TABLE_ADDRESS)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(function)((ctypes.c_void_p * 1)(ctypes.addressof(address)))
    table = (ctypes.c_void_p * pocketfft.TABLE_SIZE).from_address(address.value)
    assert list(table) == list(pocketfft.loop_addresses())


def test_options_must_be_positive():
    """block=0 had been a ZeroDivisionError inside the pass."""
    from xhlo.passes_registry import create_pass

    with pytest.raises(ValueError, match="block and elements-per-call must be at least 1, got 0"):
        create_pass("xhlo-fft-to-pocketfft", {"block": "0"})
