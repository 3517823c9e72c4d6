"""xhlo-lower-host-calls: StableHLO infeed/outfeed and custom calls of registered
Python targets, run from MLIR text on one and on several devices."""

from __future__ import annotations

import numpy as np
import pytest

import xhlo

FEEDS = """
module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main(%x: tensor<2xi64>) -> tensor<2xi64> {
    %t = stablehlo.after_all : !stablehlo.token
    %r:2 = "stablehlo.infeed"(%t) {infeed_config = ""} : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    %sum = stablehlo.add %x, %r#0 : tensor<2xi64>
    %id = stablehlo.replica_id : tensor<ui32>
    %t2 = "stablehlo.outfeed"(%id, %r#1) {outfeed_config = ""} : (tensor<ui32>, !stablehlo.token) -> !stablehlo.token
    return %sum : tensor<2xi64>
  }
}
"""


def test_every_device_reads_its_own_infeed_and_writes_its_own_outfeed():
    exe = xhlo.compile(FEEDS)
    for device in range(2):
        exe.transfer_to_infeed(np.array([10, 20], np.int64) * (device + 1), device=device)
    x = np.array([1, 2], np.int64)
    results = exe.run_replicated([(x,), (x,)])
    np.testing.assert_array_equal(results[0][0], [11, 22])
    np.testing.assert_array_equal(results[1][0], [21, 42])
    for device in range(2):
        out = exe.transfer_from_outfeed(device=device)
        assert out.dtype == np.uint32 and int(out) == device


def test_a_starved_device_fails_the_run_with_an_error_naming_it():
    exe = xhlo.compile(FEEDS, collective_timeout=0.3)
    exe.transfer_to_infeed(np.zeros(2, np.int64), device=0)
    x = np.zeros(2, np.int64)
    with pytest.raises(xhlo.CollectiveError, match="device 1 in stablehlo.infeed"):
        exe.run_replicated([(x,), (x,)])


CUSTOM = """
func.func @main(%x: tensor<3xf64>, %k: tensor<i32>) -> (tensor<3xf64>, tensor<3xi32>) {
  %r:2 = stablehlo.custom_call @test_host_poly(%x, %k) {backend_config = ""} : (tensor<3xf64>, tensor<i32>) -> (tensor<3xf64>, tensor<3xi32>)
  %y = stablehlo.multiply %r#0, %x : tensor<3xf64>
  return %y, %r#1 : tensor<3xf64>, tensor<3xi32>
}
"""


def test_custom_call_of_a_registered_target_runs_it_between_compiled_ops():
    calls = []

    def poly(x, k):
        calls.append(int(k))
        return x ** int(k), np.full(3, int(k), np.int32)

    xhlo.register_custom_call_target("test_host_poly", poly)
    try:
        exe = xhlo.compile(CUSTOM)
        x = np.array([1.5, -2.0, 3.0])
        y, ks = exe(x, np.int32(3))
        np.testing.assert_allclose(y, x**4)
        np.testing.assert_array_equal(ks, [3, 3, 3])
        assert calls == [3]
    finally:
        xhlo.unregister_custom_call_target("test_host_poly")


def test_a_raising_target_fails_the_call_with_its_error():
    def broken(x, k):
        raise ArithmeticError("the target gave up")

    xhlo.register_custom_call_target("test_host_poly", broken)
    try:
        exe = xhlo.compile(CUSTOM)
        with pytest.raises(
            xhlo.CollectiveError,
            match="custom_call @test_host_poly.*ArithmeticError: the target gave up",
        ):
            exe(np.zeros(3), np.int32(1))
    finally:
        xhlo.unregister_custom_call_target("test_host_poly")


REENTERED = """
func.func @main(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %s = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<4096xf32>) -> tensor<4096xf32>
  %e = stablehlo.exponential %s : tensor<4096xf32>
  %r = stablehlo.custom_call @test_host_call_again(%x) {backend_config = ""} : (tensor<4096xf32>) -> tensor<4096xf32>
  %y = stablehlo.add %e, %r : tensor<4096xf32>
  return %y : tensor<4096xf32>
}
"""

PLUS_ONE_TWICE = """
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = stablehlo.custom_call @test_host_other(%x) {backend_config = ""} : (tensor<8xf32>) -> tensor<8xf32>
  %b = stablehlo.custom_call @test_host_plus_one(%a) {backend_config = ""} : (tensor<8xf32>) -> tensor<8xf32>
  return %b : tensor<8xf32>
}
"""


def test_a_target_may_call_compiled_programs_again():
    """A host call that runs the same program (its temporaries arena had been shared)
    or another one with other runtime calls (its table of them had been freed: SIGSEGV)."""
    depth = []

    def call_again(x):
        if not depth:
            depth.append(1)
            exe(np.full_like(x, 5.0))
            depth.pop()
        return np.zeros_like(x)

    plus_one = """
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = stablehlo.custom_call @test_host_plus_one(%x) {backend_config = ""} : (tensor<8xf32>) -> tensor<8xf32>
  return %a : tensor<8xf32>
}"""
    targets = {"test_host_call_again": call_again, "test_host_plus_one": lambda x: x + 1,
               "test_host_other": lambda x: inner(x)}
    for name, target in targets.items():
        xhlo.register_custom_call_target(name, target)
    try:
        exe, inner, outer = xhlo.compile(REENTERED), xhlo.compile(plus_one), xhlo.compile(PLUS_ONE_TWICE)
        x = np.random.default_rng(0).standard_normal(4096).astype(np.float32)
        np.testing.assert_allclose(exe(x), np.exp(np.sort(x)), rtol=1e-6)  # exp: vectorized vs numpy
        np.testing.assert_array_equal(outer(np.zeros(8, np.float32)), np.full(8, 2.0))
    finally:
        for name in targets:
            xhlo.unregister_custom_call_target(name)


def test_registering_checks_the_target():
    with pytest.raises(TypeError, match="must be callable"):
        xhlo.register_custom_call_target("x", 3)
    with pytest.raises(ValueError, match="non-empty name"):
        xhlo.register_custom_call_target("", print)
