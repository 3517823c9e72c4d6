"""Collectives on in-process devices (one thread each), against numpy models of the spec.

Covers xhlo-lower-collectives, xhlo-lower-runtime-calls and the in-process
runtime: every collective, the process-group modes, ragged all-to-all in the
form JAX emits, send/recv, and what happens when devices fail or disagree.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

import ml_dtypes
import numpy as np
import pytest
import xhlo
from xhlo.runtime import CollectiveAborted, CollectiveError, CollectiveMismatch, CollectiveTimeout

from .conftest import counted_loop_body

RNG = np.random.default_rng(7)

DTYPES = {
    "f32": np.float32,
    "bf16": ml_dtypes.bfloat16,
    "i32": np.int32,
    "i64": np.int64,
}


def module(signature: str, body: str, *, replicas: int = 1, partitions: int = 1) -> str:
    return (
        f"module attributes {{mhlo.num_replicas = {replicas} : i32, mhlo.num_partitions = {partitions} : i32}} {{\n"
        f"func.func @main{signature} {{\n{body}\n}}\n}}\n"
    )


def region(op: str, elem: str) -> str:
    return (
        f"({{\n  ^bb0(%a: tensor<{elem}>, %b: tensor<{elem}>):\n"
        f"    %r = stablehlo.{op} %a, %b : tensor<{elem}>\n"
        f"    stablehlo.return %r : tensor<{elem}>\n  }})"
    )


def groups_attr(groups) -> str:
    rows = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
    count = len(groups)
    width = len(groups[0]) if groups else 0
    return (
        f"dense<[{rows}]> : tensor<{count}x{width}xi64>" if groups else "dense<> : tensor<0x0xi64>"
    )


def sample(shape, dtype, device: int) -> np.ndarray:
    """Small integers (exact in every dtype), different per device."""
    values = RNG.integers(-8, 9, size=shape) + device
    return values.astype(dtype)


def run(src: str, args_per_device, **options):
    exe = xhlo.compile(src, **options)
    return exe, exe.run_replicated(args_per_device)


# -- all_reduce ---------------------------------------------------------------------------------


def test_all_reduce_spec_example():
    src = module(
        "(%x: tensor<2xf32>) -> tensor<2xf32>",
        f"""  %0 = "stablehlo.all_reduce"(%x) {region("add", "f32")} {{replica_groups = {groups_attr([[0, 1]])}}}
      : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>""",
        replicas=2,
    )
    _, out = run(src, [(np.array([1.0, 2.5], np.float32),), (np.array([3.0, 5.25], np.float32),)])
    for (result,) in out:
        np.testing.assert_array_equal(result, [4.0, 7.75])


@pytest.mark.parametrize("elem", list(DTYPES))
@pytest.mark.parametrize(
    "op,fold", [("add", np.add), ("maximum", np.maximum), ("multiply", np.multiply)]
)
def test_all_reduce_groups_and_dtypes(elem, op, fold):
    dtype = DTYPES[elem]
    groups = [[0, 2], [3, 1]]
    src = module(
        f"(%x: tensor<3x2x{elem}>) -> tensor<3x2x{elem}>",
        f"""  %0 = "stablehlo.all_reduce"(%x) {region(op, elem)} {{replica_groups = {groups_attr(groups)}}}
      : (tensor<3x2x{elem}>) -> tensor<3x2x{elem}>
  return %0 : tensor<3x2x{elem}>""",
        replicas=4,
    )
    xs = [sample((3, 2), dtype, d) for d in range(4)]
    _, out = run(src, [(x,) for x in xs])
    for group in groups:
        expected = xs[group[0]]
        for member in group[1:]:
            expected = fold(expected, xs[member]).astype(dtype)
        for member in group:
            assert out[member][0].dtype == dtype
            np.testing.assert_array_equal(out[member][0], expected)


def test_all_reduce_applies_the_region_in_group_order():
    """subtract is not associative: ((x3 - x1) - x0) - x2 for the group [3, 1, 0, 2]."""
    src = module(
        "(%x: tensor<4xi32>) -> tensor<4xi32>",
        f"""  %0 = "stablehlo.all_reduce"(%x) {region("subtract", "i32")} {{replica_groups = {groups_attr([[3, 1, 0, 2]])}}}
      : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>""",
        replicas=4,
    )
    xs = [np.arange(4, dtype=np.int32) * (d + 1) + d for d in range(4)]
    _, out = run(src, [(x,) for x in xs])
    expected = ((xs[3] - xs[1]) - xs[0]) - xs[2]
    for d in range(4):
        np.testing.assert_array_equal(out[d][0], expected)


@pytest.mark.parametrize(
    "elem,rows,path",
    [
        ("i32", 256, 'primitive = "all_to_all"'),  # 256 KiB: reduce-scatter + all-gather
        ("bf16", 256, 'primitive = "all_to_all"'),
        ("i32", 1024, 'primitive = "all_reduce"'),  # 1 MiB: in place, the runtime calls the fold
        ("bf16", 2048, 'primitive = "all_reduce"'),
    ],
)
def test_large_all_reduce_folds_slices_in_group_order(elem, rows, path):
    """Large operands are reduced slice-wise (each member folds one block of everyone's
    operand); the order is still the group's, for both lowerings."""
    dtype = DTYPES[elem]
    t = f"tensor<{rows}x256x{elem}>"
    src = module(
        f"(%x: {t}, %y: {t}) -> ({t}, {t})",
        f"""  %0:2 = "stablehlo.all_reduce"(%x, %y) {region("subtract", elem)} {{replica_groups = {groups_attr([[3, 1, 0, 2]])}}}
      : ({t}, {t}) -> ({t}, {t})
  return %0#0, %0#1 : {t}, {t}""",
        replicas=4,
    )
    exe = xhlo.compile(src)
    assert exe.ir("xhlo-stablehlo-prepare").count(path) == 1
    xs = [sample((rows, 256), dtype, d) for d in range(4)]
    ys = [sample((rows, 256), dtype, d) for d in range(4)]
    out = exe.run_replicated([(x, y) for x, y in zip(xs, ys)])
    for values, j in ((xs, 0), (ys, 1)):
        expected = (((values[3] - values[1]).astype(dtype) - values[0]).astype(dtype) - values[2]).astype(dtype)
        for d in range(4):
            np.testing.assert_array_equal(out[d][j], expected)


@pytest.mark.parametrize("devices", [2, 4])
@pytest.mark.parametrize("keep_sum", [False, True])
@pytest.mark.parametrize("rows", [512, 256], ids=["in-place", "reduce-scatter"])
def test_ops_after_a_large_all_reduce_run_where_it_folds(devices, keep_sum, rows):
    """pmean-like ops after a 1 MiB all_reduce (``x * 1/n + 1``, in a loop as
    bench_collectives runs them) are applied by the fold kernel to each folded block; after
    a 256 KiB one (reduce-scatter + all-gather) to the folded slice before the gather;
    unless the sum itself is used too. The numbers are the same either way."""
    t = f"tensor<{rows}x512xf32>"
    results = f"{t}, {t}" if keep_sum else t
    src = module(
        f"(%x: {t}) -> ({results})",
        f"""  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %scale = stablehlo.constant dense<{1 / devices}> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : {t}
  %r:3 = stablehlo.while(%i = %c0, %acc = %x, %last = %x) : tensor<i32>, {t}, {t}
    cond {{
      %lt = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }} do {{
      %s = "stablehlo.all_reduce"(%acc) {region("add", "f32")} {{replica_groups = {groups_attr([])}}}
          : ({t}) -> {t}
      %b = stablehlo.broadcast_in_dim %scale, dims = [] : (tensor<f32>) -> {t}
      %m = stablehlo.multiply %s, %b : {t}
      %p = stablehlo.add %m, %one : {t}
      %n = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %n, %p, %s : tensor<i32>, {t}, {t}
    }}
  return {"%r#1, %r#2" if keep_sum else "%r#1"} : {results}""",
        replicas=devices,
    )
    if not keep_sum:  # the loop's %last is dead: only the chain uses the sum
        src = src.replace("%n, %p, %s", "%n, %p, %last")
    exe = xhlo.compile(src)
    prepared = exe.ir("xhlo-stablehlo-prepare")
    assert ("func.func @xhlo_all_reduce_fold_" in prepared) == (rows == 512)
    on_elements = re.search(r"stablehlo.multiply .* : tensor<f32>", prepared) is not None
    on_tensors = re.search(rf"stablehlo.multiply .* : {t}", prepared) is not None
    assert (on_elements, on_tensors) == (not keep_sum, keep_sum)
    xs = [sample((rows, 512), np.float32, d) for d in range(devices)]
    out = exe.run_replicated([(x,) for x in xs])
    accs = list(xs)
    for _ in range(3):
        total = sum(accs[1:], accs[0])
        accs = [total * np.float32(1 / devices) + np.float32(1)] * devices
    for d in range(devices):
        np.testing.assert_array_equal(out[d][0], accs[d])
        if keep_sum:
            np.testing.assert_array_equal(out[d][1], total)


def test_variadic_all_reduce_spec_example():
    src = module(
        "(%x: tensor<4xi64>, %y: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>)",
        f"""  %0:2 = "stablehlo.all_reduce"(%x, %y) {region("add", "i64")} {{replica_groups = {groups_attr([[0, 1]])},
      channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>}}
      : (tensor<4xi64>, tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>)
  return %0#0, %0#1 : tensor<4xi64>, tensor<4xi64>""",
        replicas=2,
    )
    a = [np.array([1, 2, 3, 4]), np.array([5, 6, 7, 8])]
    b = [np.array([9, 10, 11, 12]), np.array([13, 14, 15, 16])]
    _, out = run(src, [(a[d], b[d]) for d in range(2)])
    for d in range(2):
        np.testing.assert_array_equal(out[d][0], [6, 8, 10, 12])
        np.testing.assert_array_equal(out[d][1], [22, 24, 26, 28])


def test_cross_replica_sum():
    src = module(
        "(%x: tensor<3xf32>) -> tensor<3xf32>",
        f"""  %0 = "stablehlo.cross-replica-sum"(%x) {{replica_groups = {groups_attr([[0, 1], [2, 3]])}}}
      : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>""",
        replicas=4,
    )
    xs = [sample(3, np.float32, d) for d in range(4)]
    _, out = run(src, [(x,) for x in xs])
    for d in range(4):
        np.testing.assert_array_equal(out[d][0], xs[d & ~1] + xs[d | 1])


def test_all_reduce_in_a_loop():
    """Every iteration is a separate collective: counts and order must line up."""
    src = module(
        "(%x: tensor<2xf32>) -> tensor<2xf32>",
        f"""  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<2xf32>
    cond {{
      %lt = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }} do {{
      %s = "stablehlo.all_reduce"(%acc) {region("add", "f32")} {{replica_groups = {groups_attr([])}}}
          : (tensor<2xf32>) -> tensor<2xf32>
      %n = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %n, %s : tensor<i32>, tensor<2xf32>
    }}
  return %r#1 : tensor<2xf32>""",
        replicas=2,
    )
    xs = [np.array([1.0, 2.0], np.float32), np.array([3.0, -1.0], np.float32)]
    _, out = run(src, [(x,) for x in xs])
    expected = (xs[0] + xs[1]) * 4  # sum, then doubled twice
    for d in range(2):
        np.testing.assert_array_equal(out[d][0], expected)


# -- all_gather, reduce_scatter, all_to_all ------------------------------------------------------

def test_all_gather_of_blocks_past_the_streaming_size_at_odd_offsets():
    """Blocks of 64 MiB + 3 bytes: copied with non-temporal stores (spin_wait.STREAM_BYTES),
    the second one to an address 3 bytes past 64-byte alignment, with head and tail bytes."""
    from xhlo.runtime.spin_wait import STREAM_BYTES

    n = STREAM_BYTES + 3
    src = module(
        f"(%x: tensor<{n}xi8>) -> tensor<{2 * n}xi8>",
        f"""  %0 = "stablehlo.all_gather"(%x) {{all_gather_dim = 0 : i64, replica_groups = {groups_attr([[0, 1]])}}}
      : (tensor<{n}xi8>) -> tensor<{2 * n}xi8>
  return %0 : tensor<{2 * n}xi8>""",
        replicas=2,
    )
    xs = [np.random.default_rng(d).integers(-128, 128, n, dtype=np.int8) for d in range(2)]
    _, out = run(src, [(x,) for x in xs])
    want = np.concatenate(xs)
    for d in range(2):
        np.testing.assert_array_equal(out[d][0], want)


@pytest.mark.parametrize("stride", [1, 2], ids=["contiguous", "strided"])
@pytest.mark.parametrize("n", [4096, 70000])  # 70000: the copies of the view are split in blocks
def test_a_loop_carried_slice_enters_a_collective_in_place(stride, n):
    """Each step all-gathers the slice the previous step kept of its gather (a loop-carried
    view): passed where it lies when it is contiguous at run time, copied when strided."""
    t, wide = f"tensor<{n}xf32>", f"tensor<{2 * n}xf32>"
    body = f"""    %g = "stablehlo.all_gather"(%v) {{all_gather_dim = 0 : i64, replica_groups = {groups_attr([[0, 1]])}}}
        : ({t}) -> {wide}
    %y = stablehlo.slice %g [{stride - 1}:{stride - 1 + stride * (n - 1) + 1}:{stride}] : ({wide}) -> {t}"""
    src = module(f"(%x: {t}) -> {t}", counted_loop_body(t, 3, body), replicas=2)
    exe = xhlo.compile(src)
    assert f"-> (memref<{n}xf32, strided<[1], offset: ?>>)" in exe.ir("xhlo-bufferize")
    xs = [sample(n, np.float32, d) for d in range(2)]
    kept = [x.copy() for x in xs]
    values = list(xs)
    for _ in range(3):
        gathered = np.concatenate(values)
        values = [gathered[stride - 1 :: stride][:n]] * 2
    for _ in range(3):
        out = exe.run_replicated([(x,) for x in xs])
        for d in range(2):
            np.testing.assert_array_equal(out[d][0], values[d])
            np.testing.assert_array_equal(xs[d], kept[d])


@pytest.mark.parametrize("elem", list(DTYPES))
@pytest.mark.parametrize("dimension", [0, 1])
def test_all_gather(elem, dimension):
    dtype = DTYPES[elem]
    groups = [[1, 3], [2, 0]]
    shape = (2, 3)
    out_shape = list(shape)
    out_shape[dimension] *= 2
    result = f"tensor<{out_shape[0]}x{out_shape[1]}x{elem}>"
    src = module(
        f"(%x: tensor<2x3x{elem}>) -> {result}",
        f"""  %0 = "stablehlo.all_gather"(%x) {{all_gather_dim = {dimension} : i64, replica_groups = {groups_attr(groups)}}}
      : (tensor<2x3x{elem}>) -> {result}
  return %0 : {result}""",
        replicas=4,
    )
    xs = [sample(shape, dtype, d) for d in range(4)]
    _, out = run(src, [(x,) for x in xs])
    for group in groups:
        expected = np.concatenate([xs[m] for m in group], axis=dimension)
        for member in group:
            np.testing.assert_array_equal(out[member][0], expected)


def test_all_gather_spec_example():
    src = module(
        "(%x: tensor<2xf32>) -> tensor<4xf32>",
        """  %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>""",
        replicas=2,
    )
    _, out = run(src, [(np.array([1.0, 2.5], np.float32),), (np.array([3.0, 5.25], np.float32),)])
    for (result,) in out:
        np.testing.assert_array_equal(result, [1.0, 2.5, 3.0, 5.25])


def test_reduce_scatter_spec_example():
    src = module(
        "(%x: tensor<2x4xi64>) -> tensor<2x2xi64>",
        f"""  %0 = "stablehlo.reduce_scatter"(%x) {region("add", "i64")} {{scatter_dimension = 1 : i64,
      replica_groups = {groups_attr([[0, 1]])}, channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>}}
      : (tensor<2x4xi64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>""",
        replicas=2,
    )
    a = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    b = np.array([[9, 10, 11, 12], [13, 14, 15, 16]])
    _, out = run(src, [(a,), (b,)])
    np.testing.assert_array_equal(out[0][0], [[10, 12], [18, 20]])
    np.testing.assert_array_equal(out[1][0], [[14, 16], [22, 24]])


@pytest.mark.parametrize("elem", ["f32", "bf16", "i32"])
def test_reduce_scatter_four_devices(elem):
    dtype = DTYPES[elem]
    groups = [[2, 0, 3, 1]]
    src = module(
        f"(%x: tensor<8x3x{elem}>) -> tensor<2x3x{elem}>",
        f"""  %0 = "stablehlo.reduce_scatter"(%x) {region("add", elem)} {{scatter_dimension = 0 : i64,
      replica_groups = {groups_attr(groups)}}} : (tensor<8x3x{elem}>) -> tensor<2x3x{elem}>
  return %0 : tensor<2x3x{elem}>""",
        replicas=4,
    )
    xs = [sample((8, 3), dtype, d) for d in range(4)]
    _, out = run(src, [(x,) for x in xs])
    total = xs[2]
    for member in groups[0][1:]:
        total = (total + xs[member]).astype(dtype)
    for position, member in enumerate(groups[0]):
        np.testing.assert_array_equal(out[member][0], total[2 * position : 2 * position + 2])


def test_all_to_all_spec_example():
    src = module(
        "(%x: tensor<2x4xi64>, %y: tensor<2x4xi64>) -> (tensor<4x2xi64>, tensor<4x2xi64>)",
        """  %0:2 = "stablehlo.all_to_all"(%x, %y) {split_dimension = 1 : i64, concat_dimension = 0 : i64,
      split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (tensor<2x4xi64>, tensor<2x4xi64>) -> (tensor<4x2xi64>, tensor<4x2xi64>)
  return %0#0, %0#1 : tensor<4x2xi64>, tensor<4x2xi64>""",
        replicas=2,
    )
    x = [np.arange(1, 9).reshape(2, 4), np.arange(9, 17).reshape(2, 4)]
    y = [np.arange(17, 25).reshape(2, 4), np.arange(25, 33).reshape(2, 4)]
    _, out = run(src, [(x[d], y[d]) for d in range(2)])
    np.testing.assert_array_equal(out[0][0], [[1, 2], [5, 6], [9, 10], [13, 14]])
    np.testing.assert_array_equal(out[1][0], [[3, 4], [7, 8], [11, 12], [15, 16]])
    np.testing.assert_array_equal(out[0][1], [[17, 18], [21, 22], [25, 26], [29, 30]])
    np.testing.assert_array_equal(out[1][1], [[19, 20], [23, 24], [27, 28], [31, 32]])


@pytest.mark.parametrize("split,concat", [(0, 2), (2, 0), (1, 1)])
@pytest.mark.parametrize("elem", ["f32", "bf16", "i64"])
def test_all_to_all_model(split, concat, elem):
    dtype = DTYPES[elem]
    groups = [[1, 2], [3, 0]]
    shape = [4, 2, 6]
    result_shape = list(shape)
    result_shape[split] //= 2
    result_shape[concat] *= 2
    t_in = f"tensor<{'x'.join(map(str, shape))}x{elem}>"
    t_out = f"tensor<{'x'.join(map(str, result_shape))}x{elem}>"
    src = module(
        f"(%x: {t_in}) -> {t_out}",
        f"""  %0 = "stablehlo.all_to_all"(%x) {{split_dimension = {split} : i64, concat_dimension = {concat} : i64,
      split_count = 2 : i64, replica_groups = {groups_attr(groups)}}} : ({t_in}) -> {t_out}
  return %0 : {t_out}""",
        replicas=4,
    )
    xs = [sample(shape, dtype, d) for d in range(4)]
    _, out = run(src, [(x,) for x in xs])
    for group in groups:
        for position, member in enumerate(group):
            parts = [np.split(xs[sender], 2, axis=split)[position] for sender in group]
            np.testing.assert_array_equal(out[member][0], np.concatenate(parts, axis=concat))


# -- permute, broadcast, ids ----------------------------------------------------------------------


def test_collective_permute_spec_example():
    """3 replicas, pairs (0->1), (1->2): replica 0 is no target and gets zeros."""
    src = module(
        "(%x: tensor<2x2xf32>) -> tensor<2x2xf32>",
        """  %0 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>""",
        replicas=3,
    )
    xs = [np.full((2, 2), d + 1, np.float32) for d in range(3)]
    _, out = run(src, [(x,) for x in xs])
    np.testing.assert_array_equal(out[0][0], np.zeros((2, 2)))
    np.testing.assert_array_equal(out[1][0], xs[0])
    np.testing.assert_array_equal(out[2][0], xs[1])


@pytest.mark.parametrize("elem", ["bf16", "i32", "i1"])
def test_collective_permute_cycle(elem):
    dtype = {"i1": np.bool_, **DTYPES}[elem]
    src = module(
        f"(%x: tensor<5x{elem}>) -> tensor<5x{elem}>",
        f"""  %0 = "stablehlo.collective_permute"(%x) {{source_target_pairs = dense<[[0, 3], [3, 1], [1, 2], [2, 0]]> : tensor<4x2xi64>}}
      : (tensor<5x{elem}>) -> tensor<5x{elem}>
  return %0 : tensor<5x{elem}>""",
        replicas=4,
    )
    xs = [
        (sample(5, np.int32, d) > 0).astype(dtype) if elem == "i1" else sample(5, dtype, d)
        for d in range(4)
    ]
    _, out = run(src, [(x,) for x in xs])
    for source, target in [(0, 3), (3, 1), (1, 2), (2, 0)]:
        np.testing.assert_array_equal(out[target][0], xs[source])


def test_collective_broadcast_spec_example():
    """4 replicas, groups [[2, 1]]: 1 and 2 get replica 2's operand, 0 and 3 zeros."""
    src = module(
        "(%x: tensor<1x2xi64>) -> tensor<1x2xi64>",
        """  %0 = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[2, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>} : (tensor<1x2xi64>) -> tensor<1x2xi64>
  return %0 : tensor<1x2xi64>""",
        replicas=4,
    )
    xs = [np.array([[1, 2]]), np.array([[3, 4]]), np.array([[5, 6]]), np.array([[7, 8]])]
    _, out = run(src, [(x,) for x in xs])
    for d, expected in enumerate([[[0, 0]], [[5, 6]], [[5, 6]], [[0, 0]]]):
        np.testing.assert_array_equal(out[d][0], expected)


@pytest.mark.parametrize(
    "groups,channel,partitions",
    [([[0, 1, 2, 3]], "", 1), ([[2, 1], [0, 3]], "", 1),
     # a channel: groups of partitions, one per replica (2 replicas x 2 partitions)
     ([[1, 0]], ", channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>", 2)],
)
def test_collective_reduce(groups, channel, partitions):
    """Each group's first member gets the group's reduction (in group order), the others
    zeros (StableHLO's collective_reduce); 4 devices."""
    src = module(
        "(%x: tensor<3xf32>) -> tensor<3xf32>",
        f"""  %0 = "stablehlo.collective_reduce"(%x) {region("multiply", "f32")} {{replica_groups = {groups_attr(groups)}{channel}}}
      : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>""",
        replicas=4 // partitions,
        partitions=partitions,
    )
    xs = [np.array([1.5, -2.0, 3.0], np.float32) + d for d in range(4)]
    _, out = run(src, [(x,) for x in xs])
    if partitions == 1:
        device_groups = groups
    else:  # partition ids within each replica's row of devices
        device_groups = [[replica * partitions + p for p in group] for group in groups for replica in range(2)]
    want = [np.zeros(3, np.float32) for _ in range(4)]
    for group in device_groups:
        want[group[0]] = np.prod([xs[d] for d in group], axis=0)
    for d in range(4):
        np.testing.assert_array_equal(out[d][0], want[d])


@pytest.mark.parametrize("groups", [[[0, 1], [2, -1]], [[3, 0, 2], [1, -1, -1]], [[1, -1], [2, -1], [0, 3]]])
def test_all_reduce_groups_of_different_sizes(groups):
    """Ragged replica_groups (padded with -1): each device folds its own group in group
    order; 3 or 4 devices."""
    members = [[d for d in g if d >= 0] for g in groups]
    devices = sum(len(g) for g in members)
    src = module(
        "(%x: tensor<3xf32>) -> tensor<3xf32>",
        f"""  %0 = "stablehlo.all_reduce"(%x) {region("subtract", "f32")} {{replica_groups = {groups_attr(groups)}}}
      : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>""",
        replicas=devices,
    )
    xs = [np.array([1.5, -2.0, 30.0], np.float32) * (d + 1) for d in range(devices)]
    _, out = run(src, [(x,) for x in xs])
    for group in members:
        want = xs[group[0]]
        for d in group[1:]:
            want = want - xs[d]
        for d in group:
            np.testing.assert_array_equal(out[d][0], want)


def test_replica_and_partition_ids():
    src = module(
        "() -> (tensor<ui32>, tensor<ui32>)",
        """  %r = stablehlo.replica_id : tensor<ui32>
  %p = stablehlo.partition_id : tensor<ui32>
  return %r, %p : tensor<ui32>, tensor<ui32>""",
        replicas=2,
        partitions=3,
    )
    _, out = run(src, [() for _ in range(6)])
    assert [(int(r), int(p)) for r, p in out] == [(d // 3, d % 3) for d in range(6)]


# -- process-group modes (2 replicas x 2 partitions: device = replica * 2 + partition) -----------


def _all_reduce_mode(attrs: str) -> list[np.ndarray]:
    src = module(
        "(%x: tensor<2xi32>) -> tensor<2xi32>",
        f"""  %0 = "stablehlo.all_reduce"(%x) {region("add", "i32")} {{{attrs}}} : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>""",
        replicas=2,
        partitions=2,
    )
    xs = [np.array([1, 10], np.int32) * 10**d for d in range(4)]
    _, out = run(src, [(x,) for x in xs])
    return xs, [o[0] for o in out]


def test_cross_replica_mode():
    """No channel: groups name replicas, one group per partition."""
    xs, out = _all_reduce_mode(f"replica_groups = {groups_attr([[0, 1]])}")
    for d in range(4):
        partition = d % 2
        np.testing.assert_array_equal(out[d], xs[partition] + xs[2 + partition])


def test_cross_replica_and_partition_mode():
    """A channel without global ids: the replica group spans every partition."""
    xs, out = _all_reduce_mode(
        f"replica_groups = {groups_attr([[0], [1]])}, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>"
    )
    for d in range(4):
        replica = d // 2
        np.testing.assert_array_equal(out[d], xs[2 * replica] + xs[2 * replica + 1])


def test_flattened_ids_mode():
    xs, out = _all_reduce_mode(
        f"replica_groups = {groups_attr([[0, 3], [2, 1]])}, "
        "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids"
    )
    for group in ([0, 3], [2, 1]):
        for d in group:
            np.testing.assert_array_equal(out[d], xs[group[0]] + xs[group[1]])


def test_cross_partition_permute():
    """collective_permute with a channel: pairs name partitions, within each replica."""
    src = module(
        "(%x: tensor<2xi32>) -> tensor<2xi32>",
        """  %0 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>""",
        replicas=2,
        partitions=2,
    )
    xs = [np.array([d, d + 10], np.int32) for d in range(4)]
    _, out = run(src, [(x,) for x in xs])
    for replica in range(2):
        np.testing.assert_array_equal(out[2 * replica][0], [0, 0])
        np.testing.assert_array_equal(out[2 * replica + 1][0], xs[2 * replica])


def test_compile_options_set_the_device_grid():
    src = """func.func @main(%x: tensor<2xf32>) -> tensor<6xf32> {
  %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<> : tensor<0x0xi64>}
      : (tensor<2xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}"""
    exe = xhlo.compile(src, num_replicas=3)
    assert (exe.num_replicas, exe.num_partitions) == (3, 1)
    xs = [np.array([d, -d], np.float32) for d in range(3)]
    for (result,) in exe.run_replicated([(x,) for x in xs]):
        np.testing.assert_array_equal(result, np.concatenate(xs))


# -- ragged all-to-all --------------------------------------------------------------------------------


RAGGED = """  %0 = stablehlo.custom_call @ragged_all_to_all(%x, %out, %io, %ss, %oo, %rs) {{api_version = 4 : i32,
      backend_config = {{replica_groups = {groups}{channel}}}}}
      : ({data}, {output}, {meta}, {meta}, {meta}, {meta}) -> {output}
  return %0 : {output}"""


def ragged_module(
    data: str,
    output: str,
    meta: str,
    groups,
    *,
    channel: int | None = None,
    replicas=2,
    partitions=1,
):
    body = RAGGED.format(
        groups=groups_attr(groups),
        channel="" if channel is None else f", channel_id = {channel} : i64",
        data=data,
        output=output,
        meta=meta,
    )
    signature = f"(%x: {data}, %out: {output}, %io: {meta}, %ss: {meta}, %oo: {meta}, %rs: {meta}) -> {output}"
    return module(signature, body, replicas=replicas, partitions=partitions)


def ragged_model(group, inputs, outputs, input_offsets, send_sizes, output_offsets):
    """Receiver-side model of the spec: every update lands in the receiver's coordinates."""
    results = {d: outputs[d].copy() for d in group}
    size = len(group)
    for sender in group:
        io = input_offsets[sender].reshape(size, -1)
        ss = send_sizes[sender].reshape(size, -1)
        oo = output_offsets[sender].reshape(size, -1)
        for position, receiver in enumerate(group):
            for u in range(io.shape[1]):
                n = ss[position, u]
                results[receiver][oo[position, u] : oo[position, u] + n] = inputs[sender][
                    io[position, u] : io[position, u] + n
                ]
    return results


@pytest.mark.parametrize("index", ["i32", "i64"])
def test_ragged_all_to_all_seed_example(index):
    itype = DTYPES[index]
    src = ragged_module("tensor<3xf32>", "tensor<4xf32>", f"tensor<2x{index}>", [[0, 1]])
    v = lambda *x: np.array(x, itype)
    f = lambda *x: np.array(x, np.float32)
    _, out = run(
        src,
        [
            (f(1, 2, 2), f(0, 0, 0, 0), v(0, 1), v(1, 2), v(0, 0), v(1, 1)),
            (f(3, 4, 0), f(0, 0, 0, 0), v(0, 1), v(1, 1), v(1, 2), v(2, 1)),
        ],
    )
    np.testing.assert_array_equal(out[0][0], [1, 3, 0, 0])
    np.testing.assert_array_equal(out[1][0], [2, 2, 4, 0])


def _random_ragged(group, rows_in, rows_out, updates, row_shape, dtype, itype):
    """Offsets and sizes of a valid exchange: each receiver's slots do not overlap."""
    size = len(group)
    inputs, outputs, io, ss, oo = {}, {}, {}, {}, {}
    for d in group:
        inputs[d] = sample((rows_in, *row_shape), dtype, d)
        outputs[d] = np.full((rows_out, *row_shape), -1, dtype)
        io[d] = np.zeros((size, updates), itype)
        ss[d] = np.zeros((size, updates), itype)
        oo[d] = np.zeros((size, updates), itype)
    for position, receiver in enumerate(group):
        cursor = 0
        for sender in group:
            for u in range(updates):
                n = int(RNG.integers(0, 3))
                start = int(RNG.integers(0, rows_in - n + 1))
                io[sender][position, u], ss[sender][position, u], oo[sender][position, u] = (
                    start,
                    n,
                    cursor,
                )
                cursor += n
        assert cursor <= rows_out
    recv = {d: np.zeros((size, updates), itype) for d in group}
    for position, receiver in enumerate(group):
        for j, sender in enumerate(group):
            recv[receiver][j] = ss[sender][position]
    return inputs, outputs, io, ss, oo, recv


def ragged_steps(ranks: int, meta: str, layout: str, steps: int):
    """``steps`` ragged all-to-alls in a loop, each of the last one's result into zeros
    (offsets and sizes: arguments, one update per member; ``layout``: "apart",
    "overlapping" or "covering" receive regions, or "overlapping-all-rows": as many rows
    as the output has, overlapping, so some output rows receive none; offsets far out of
    range for empty parts). Returns the program, each device's arguments and the model's
    results."""
    group, rows = list(range(ranks)), 3 * ranks
    itype = np.int32 if meta.endswith("i32") else np.int64
    rng = np.random.default_rng(7)
    io, ss, oo = ({d: np.zeros((ranks, 1), itype) for d in group} for _ in range(3))
    for receiver in group:
        cursor = 0
        for sender in group:
            n = 3 if layout in ("covering", "overlapping-all-rows") else int(rng.integers(0, 4))
            io[sender][receiver], ss[sender][receiver] = int(rng.integers(0, rows - n + 1)), n
            oo[sender][receiver] = max(0, cursor - 1) if layout.startswith("overlapping") else cursor
            cursor = oo[sender][receiver, 0] + n
            if n == 0:  # an empty part's offsets may be anything
                io[sender][receiver], oo[sender][receiver] = 2**30, -(2**30)
        assert cursor <= rows
    rs = {r: np.array([ss[s][r] for s in group], itype).reshape(ranks, 1) for r in group}
    xs = {d: rng.integers(-9, 10, (rows, 2)).astype(np.float32) for d in group}
    expected = xs
    for step in range(steps):
        fill = {d: np.full((rows, 2), step, np.float32) for d in group}
        expected = ragged_model(group, expected, fill, io, ss, oo)
    args = [tuple(a.reshape(-1) for a in (io[d], ss[d], oo[d], rs[d])) + (xs[d],) for d in group]
    return ragged_loop(rows, ranks, meta, steps), args, [expected[d] for d in group]


def ragged_loop(
    rows: int, ranks: int, meta: str, steps: int, sizes: str = "%ss", prelude: str = "", data: str = "%v"
) -> str:
    """``main(io, ss, oo, rs, x)``: ``steps`` times ``v = ragged_all_to_all(<data>, fill, io,
    <sizes>, oo, rs)``, ``fill`` the step number in every element (rows nobody sends differ
    from step to step), ``sizes`` and ``data`` SSA values of the loop body (``%i``: the
    step, ``%v``: the carried value; ``prelude``: lines before the call)."""
    t, m = f"tensor<{rows}x2xf32>", f"tensor<{meta}>"
    group = groups_attr([list(range(ranks))])
    body = f"""      %step = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
      %fill = stablehlo.broadcast_in_dim %step, dims = [] : (tensor<f32>) -> {t}
      %three = stablehlo.constant dense<3> : tensor<i32>
      %at3 = stablehlo.compare EQ, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %many = stablehlo.constant dense<9> : {m}
{prelude}      %y = stablehlo.custom_call @ragged_all_to_all({data}, %fill, %io, {sizes}, %oo, %rs) {{api_version = 4 : i32,
          backend_config = {{replica_groups = {group}}}}} : ({t}, {t}, {m}, {m}, {m}, {m}) -> {t}"""
    signature = f"(%io: {m}, %ss: {m}, %oo: {m}, %rs: {m}, %x: {t}) -> {t}"
    return module(signature, counted_loop_body(t, steps, body), replicas=ranks)


# a ragged_loop's sizes that are out of bounds at step 3 (9 rows of a smaller input)
SIZES_OUT_OF_BOUNDS_AT_STEP_3 = "%ss_or_many"


def ragged_loop_out_of_bounds_at_step_3(rows: int, ranks: int, meta: str, steps: int) -> str:
    m = f"tensor<{meta}>"
    return ragged_loop(rows, ranks, meta, steps, SIZES_OUT_OF_BOUNDS_AT_STEP_3).replace(
        "      %y = ",
        f"      {SIZES_OUT_OF_BOUNDS_AT_STEP_3} = stablehlo.select %at3, %many, %ss : tensor<i1>, {m}\n      %y = ",
        1,
    )


@pytest.mark.parametrize("updates,meta_shape", [(1, "4"), (2, "4x2"), (2, "8")])
def test_ragged_all_to_all_model(updates, meta_shape):
    """4 devices, 2-D rows, cross-partition groups, several updates per peer."""
    group = [2, 0, 3, 1]
    inputs, outputs, io, ss, oo, recv = _random_ragged(
        group, 6, 24, updates, (3,), np.float32, np.int64
    )
    shape = tuple(int(s) for s in meta_shape.split("x"))
    src = ragged_module(
        "tensor<6x3xf32>",
        "tensor<24x3xf32>",
        f"tensor<{meta_shape}xi64>",
        [group],
        channel=1,
        replicas=1,
        partitions=4,
    )
    args = [
        (
            inputs[d],
            outputs[d],
            io[d].reshape(shape),
            ss[d].reshape(shape),
            oo[d].reshape(shape),
            recv[d].reshape(shape),
        )
        for d in range(4)
    ]
    _, out = run(src, args)
    expected = ragged_model(group, inputs, outputs, io, ss, oo)
    for d in range(4):
        np.testing.assert_array_equal(out[d][0], expected[d])


def test_ragged_all_to_all_out_of_bounds_is_an_error():
    src = ragged_module("tensor<3xf32>", "tensor<4xf32>", "tensor<2xi32>", [[0, 1]])
    v = lambda *x: np.array(x, np.int32)
    f = lambda *x: np.array(x, np.float32)
    exe = xhlo.compile(src)
    with pytest.raises(
        CollectiveError, match=r"rows \[5, 6\) of device 1's 4-row output: out of bounds"
    ):
        exe.run_replicated(
            [
                (f(1, 2, 2), f(0, 0, 0, 0), v(0, 1), v(1, 2), v(0, 0), v(1, 1)),
                (f(3, 4, 0), f(0, 0, 0, 0), v(0, 1), v(1, 1), v(1, 5), v(2, 1)),
            ]
        )


# -- send / recv ------------------------------------------------------------------------------


def test_send_recv_with_tokens():
    """Replica 0 sends to 1 over channel 5, ordered by tokens; replica 0 receives nothing (zeros)."""
    src = module(
        "(%x: tensor<3xi32>) -> tensor<3xi32>",
        """  %t0 = stablehlo.after_all : !stablehlo.token
  %t1 = "stablehlo.send"(%x, %t0) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>,
      is_host_transfer = false, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token
  %t2 = stablehlo.after_all %t0, %t1 : !stablehlo.token
  %r:2 = "stablehlo.recv"(%t2) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>,
      is_host_transfer = false, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)
  return %r#0 : tensor<3xi32>""",
        replicas=2,
    )
    xs = [np.array([1, 2, 3], np.int32), np.array([4, 5, 6], np.int32)]
    _, out = run(src, [(x,) for x in xs])
    np.testing.assert_array_equal(out[0][0], [0, 0, 0])
    np.testing.assert_array_equal(out[1][0], [1, 2, 3])


def test_send_from_the_host_is_rejected():
    src = module(
        "(%x: tensor<3xi32>) -> tensor<3xi32>",
        """  %t0 = stablehlo.after_all : !stablehlo.token
  %t1 = "stablehlo.send"(%x, %t0) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 2>,
      is_host_transfer = true} : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token
  return %x : tensor<3xi32>""",
    )
    with pytest.raises(xhlo.CompilerError, match="to or from the host is not supported"):
        xhlo.compile(src)


# -- one device, plain calls -----------------------------------------------------------------------


def test_one_device_program_runs_with_a_plain_call():
    src = module(
        "(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<ui32>)",
        f"""  %0 = "stablehlo.all_reduce"(%x) {region("add", "f32")} {{replica_groups = {groups_attr([])}}}
      : (tensor<2xf32>) -> tensor<2xf32>
  %1 = stablehlo.replica_id : tensor<ui32>
  return %0, %1 : tensor<2xf32>, tensor<ui32>""",
    )
    exe = xhlo.compile(src)
    total, replica = exe(np.array([1.5, -2.0], np.float32))
    np.testing.assert_array_equal(total, [1.5, -2.0])
    assert int(replica) == 0


def test_plain_call_of_a_multi_device_program_says_how_to_run_it():
    src = module(
        "() -> tensor<ui32>",
        "  %r = stablehlo.replica_id : tensor<ui32>\n  return %r : tensor<ui32>",
        replicas=2,
    )
    exe = xhlo.compile(src)
    with pytest.raises(CollectiveError, match="runs on 2 devices .* use Executable.run_replicated"):
        exe()
    assert [int(r[0]) for r in exe.run_replicated([(), ()])] == [0, 1]


def test_group_ids_out_of_range_are_a_compile_error():
    src = module(
        "(%x: tensor<2xf32>) -> tensor<2xf32>",
        """  %0 = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[1, 3]]> : tensor<1x2xi64>}
      : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>""",
        replicas=2,
    )
    with pytest.raises(
        xhlo.CompilerError, match="replica id 3 is out of range: the program has 2 replicas"
    ):
        xhlo.compile(src)


# -- faults ---------------------------------------------------------------------------------------


SUM_2 = module(
    "(%x: tensor<4xf32>) -> tensor<4xf32>",
    f"""  %0 = "stablehlo.all_reduce"(%x) {region("add", "f32")} {{replica_groups = {groups_attr([[0, 1]])}}}
      : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>""",
    replicas=2,
)


def test_a_failing_device_makes_its_peers_fail_naming_it():
    exe = xhlo.compile(SUM_2, collective_timeout=60)
    start = time.monotonic()
    with pytest.raises(CollectiveError) as info:
        exe.run_replicated([(np.ones(4, np.float32),), (np.ones(3, np.float32),)])
    assert time.monotonic() - start < 30  # well before the timeout: peers learn at once
    assert isinstance(info.value, ValueError)  # as a single device's bad argument is
    errors = info.value.errors
    assert isinstance(errors[1], ValueError) and "expected shape (4,)" in str(errors[1])
    assert isinstance(errors[0], CollectiveAborted)
    assert "device 1 failed" in str(errors[0]) and "stablehlo.all_reduce at" in str(errors[0])
    assert str(info.value).startswith("2 of 2 device(s) failed; first failure on device 1")


class _SlowArgument:
    """An argument whose conversion takes a while: its device joins late."""

    def __init__(self, delay: float, value: np.ndarray):
        self.delay, self.value = delay, value

    def __array__(self, dtype=None, copy=None):
        time.sleep(self.delay)
        return self.value


def test_a_late_device_times_out_its_peers():
    exe = xhlo.compile(SUM_2)
    x = np.ones(4, np.float32)
    with pytest.raises(CollectiveTimeout) as info:
        exe.run_replicated([(x,), (_SlowArgument(1.5, x),)], timeout=1.0)
    errors = info.value.errors
    assert isinstance(errors[0], CollectiveTimeout)
    assert "timed out after 1 s waiting for device(s) [1]" in str(errors[0])
    assert isinstance(errors[1], CollectiveAborted) and "device 0 gave up" in str(errors[1])


def test_a_device_stuck_outside_the_collectives_is_given_up_on():
    exe = xhlo.compile(SUM_2)
    x = np.ones(4, np.float32)
    start = time.monotonic()
    with pytest.raises(CollectiveTimeout) as info:
        exe.run_replicated([(x,), (_SlowArgument(20, x),)], timeout=0.3)
    assert time.monotonic() - start < 10  # not the 20 s device 1 takes
    errors = info.value.errors
    assert "timed out after 0.3 s waiting for device(s) [1]" in str(errors[0])
    assert isinstance(errors[1], CollectiveTimeout) and "device 1 did not finish" in str(errors[1])
    np.testing.assert_array_equal(exe.run_replicated([(x,), (x,)])[1][0], 2 * x)  # new threads run it


CASE_ON_REPLICA = module(
    "(%x: tensor<4xf32>) -> tensor<4xf32>",
    f"""  %id = stablehlo.replica_id : tensor<ui32>
  %i = stablehlo.convert %id : (tensor<ui32>) -> tensor<i32>
  %r = "stablehlo.case"(%i) ({{
    %0 = "stablehlo.all_reduce"(%x) {region("add", "f32")} {{replica_groups = {groups_attr([[0, 1]])}}}
        : (tensor<4xf32>) -> tensor<4xf32>
    stablehlo.return %0 : tensor<4xf32>
  }}, {{
    %1 = "stablehlo.all_gather"(%x) {{all_gather_dim = 0 : i64, replica_groups = {groups_attr([[0, 1]])}}}
        : (tensor<4xf32>) -> tensor<8xf32>
    %2 = stablehlo.slice %1 [0:4] : (tensor<8xf32>) -> tensor<4xf32>
    stablehlo.return %2 : tensor<4xf32>
  }}, {{
    stablehlo.return %x : tensor<4xf32>
  }}) : (tensor<i32>) -> tensor<4xf32>
  return %r : tensor<4xf32>""",
    replicas=2,
)


def test_different_collectives_are_reported_as_a_mismatch():
    exe = xhlo.compile(CASE_ON_REPLICA)
    x = np.ones(4, np.float32)
    with pytest.raises(CollectiveMismatch, match="the devices run different collectives") as info:
        exe.run_replicated([(x,), (x,)], timeout=60)
    text = str(info.value)
    assert (
        "device 0 runs stablehlo.all_reduce" in text
        and "device 1 runs stablehlo.all_gather" in text
    )


@pytest.mark.parametrize(
    "other",
    [
        # the same op on a different shape
        f"""    %h = stablehlo.slice %x [0:2] : (tensor<4xf32>) -> tensor<2xf32>
    %1 = "stablehlo.all_reduce"(%h) {region("add", "f32")} {{replica_groups = {groups_attr([[0, 1]])}}}
        : (tensor<2xf32>) -> tensor<2xf32>
    %2 = stablehlo.concatenate %1, %1, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>""",
        # the same op and shape, the group in another order
        f"""    %2 = "stablehlo.all_reduce"(%x) {region("add", "f32")} {{replica_groups = {groups_attr([[1, 0]])}}}
        : (tensor<4xf32>) -> tensor<4xf32>""",
    ],
    ids=["shape", "group-order"],
)
def test_mismatched_shape_or_group_is_reported(other):
    src = CASE_ON_REPLICA
    start = src.index('    %1 = "stablehlo.all_gather"')
    end = src.index("    stablehlo.return %2 : tensor<4xf32>")
    exe = xhlo.compile(src[:start] + other + "\n" + src[end:])
    x = np.ones(4, np.float32)
    with pytest.raises(CollectiveMismatch, match="the devices run different collectives"):
        exe.run_replicated([(x,), (x,)], timeout=60)


def test_a_device_skipping_a_collective_is_reported():
    """Replica 1 takes the branch without a collective and finishes."""
    src = CASE_ON_REPLICA.replace(
        "%i = stablehlo.convert %id : (tensor<ui32>) -> tensor<i32>",
        "%i1 = stablehlo.convert %id : (tensor<ui32>) -> tensor<i32>\n"
        "  %two = stablehlo.constant dense<2> : tensor<i32>\n  %i = stablehlo.multiply %i1, %two : tensor<i32>",
    )
    exe = xhlo.compile(src)
    x = np.ones(4, np.float32)
    with pytest.raises(CollectiveMismatch, match="device 1 finished its program without joining"):
        exe.run_replicated([(x,), (x,)], timeout=60)


def test_groups_that_disagree_cannot_proceed():
    """Devices 0, 1 gather over {0, 2}, {1, 3} while 2, 3 gather over {0, 3}, {1, 2}: nobody can go on."""
    gather = """    %{n} = "stablehlo.all_gather"(%x) {{all_gather_dim = 0 : i64, replica_groups = {groups}}}
        : (tensor<2xf32>) -> tensor<4xf32>
    stablehlo.return %{n} : tensor<4xf32>"""
    src = module(
        "(%x: tensor<2xf32>) -> tensor<4xf32>",
        f"""  %id = stablehlo.replica_id : tensor<ui32>
  %two = stablehlo.constant dense<2> : tensor<ui32>
  %half = stablehlo.divide %id, %two : tensor<ui32>
  %i = stablehlo.convert %half : (tensor<ui32>) -> tensor<i32>
  %r = "stablehlo.case"(%i) ({{
{gather.format(n=0, groups=groups_attr([[0, 2], [1, 3]]))}
  }}, {{
{gather.format(n=1, groups=groups_attr([[0, 3], [1, 2]]))}
  }}) : (tensor<i32>) -> tensor<4xf32>
  return %r : tensor<4xf32>""",
        replicas=4,
    )
    exe = xhlo.compile(src)
    start = time.monotonic()
    with pytest.raises(CollectiveMismatch, match="no device can proceed"):
        exe.run_replicated([(np.ones(2, np.float32),)] * 4, timeout=60)
    assert time.monotonic() - start < 30


def test_runs_after_a_failure_start_clean():
    exe = xhlo.compile(SUM_2)
    with pytest.raises(CollectiveError):
        exe.run_replicated([(np.ones(4, np.float32),), (np.ones(5, np.float32),)])
    out = exe.run_replicated([(np.ones(4, np.float32),), (np.full(4, 2, np.float32),)])
    for (result,) in out:
        np.testing.assert_array_equal(result, np.full(4, 3))


# -- xhlo-run --devices --------------------------------------------------------------------------


def test_xhlo_run_devices(tmp_path):
    program = tmp_path / "ragged.mlir"
    program.write_text(ragged_module("tensor<3xf32>", "tensor<4xf32>", "tensor<2xi32>", [[0, 1]]))
    v = lambda *x: np.array(x, np.int32)
    f = lambda *x: np.array(x, np.float32)
    per_device = [
        (f(1, 2, 2), v(0, 1), v(1, 2), v(0, 0), v(1, 1)),
        (f(3, 4, 0), v(0, 1), v(1, 1), v(1, 2), v(2, 1)),
    ]
    inputs = {"arg1": f(0, 0, 0, 0)}  # the same output buffer for both devices
    for d, (x, io, ss, oo, rs) in enumerate(per_device):
        inputs.update(
            {
                f"arg0_dev{d}": x,
                f"arg2_dev{d}": io,
                f"arg3_dev{d}": ss,
                f"arg4_dev{d}": oo,
                f"arg5_dev{d}": rs,
            }
        )
    np.savez(tmp_path / "in.npz", **inputs)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "xhlo.tools.run",
            str(program),
            "--devices",
            "2",
            "--inputs",
            str(tmp_path / "in.npz"),
            "--outputs",
            str(tmp_path / "out.npz"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 0 failed" in done.stdout
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["out0_dev0"], [1, 3, 0, 0])
        np.testing.assert_array_equal(out["out0_dev1"], [2, 2, 4, 0])


def test_keep_freed_memory_tunes_glibc_in_a_fresh_process():
    """Opt-in and process-wide, so it runs in a child; results stay the same."""
    script = (
        "import numpy as np, xhlo\n"
        "from xhlo.runtime.memory import keep_freed_memory\n"
        "assert keep_freed_memory()\n"
        f"exe = xhlo.compile({SUM_2!r})\n"
        "out = exe.run_replicated([(np.ones(4, np.float32),), (np.full(4, 2, np.float32),)])\n"
        "print([r[0].tolist() for r in out])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[[3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]"
