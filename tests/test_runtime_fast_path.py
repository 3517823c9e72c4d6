"""xhlo-runtime-fast-path: collectives after their first call run natively, and faults
that happen while they do are still reported as on the Python path."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo
from xhlo.runtime import CollectiveAborted, CollectiveMismatch

from tests.test_collectives import (
    groups_attr,
    module,
    ragged_loop,
    ragged_loop_out_of_bounds_at_step_3,
    ragged_steps,
)

from .conftest import counted_loop_body

STEPS = 20
# loop-body lines defining %which: the replica id at step 5, else 0 (a "stablehlo.case"
# index that sends every replica but 0 another way at that step)
AT_STEP_FIVE = """    %id = stablehlo.replica_id : tensor<ui32>
    %d = stablehlo.convert %id : (tensor<ui32>) -> tensor<i32>
    %five = stablehlo.constant dense<5> : tensor<i32>
    %at = stablehlo.compare EQ, %i, %five : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %at_i = stablehlo.convert %at : (tensor<i1>) -> tensor<i32>
    %which = stablehlo.multiply %at_i, %d : tensor<i32>
"""


def _zeros_after_a_long_sort(value: str, t: str) -> str:
    """Loop-body lines defining ``%zeros`` (a 2-D ``t``) after sorting 2M floats seeded by
    ``value``'s corner: far longer than a native wait slice, and not loop-invariant."""
    big = "tensor<2097152xf32>"
    return f"""      %slow_corner = stablehlo.slice {value} [0:1, 0:1] : ({t}) -> tensor<1x1xf32>
      %slow_scalar = stablehlo.reshape %slow_corner : (tensor<1x1xf32>) -> tensor<f32>
      %slow_ramp = stablehlo.iota dim = 0 : {big}
      %slow_base = stablehlo.broadcast_in_dim %slow_scalar, dims = [] : (tensor<f32>) -> {big}
      %slow_keys = stablehlo.subtract %slow_base, %slow_ramp : {big}
      %slow_sorted = "stablehlo.sort"(%slow_keys) ({{
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %lt = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
      }}) {{dimension = 0 : i64, is_stable = false}} : ({big}) -> {big}
      %slow_first = stablehlo.slice %slow_sorted [0:1] : ({big}) -> tensor<1xf32>
      %slow_none = stablehlo.constant dense<0.0> : tensor<1xf32>
      %slow_zero = stablehlo.multiply %slow_first, %slow_none : tensor<1xf32>
      %slow_z = stablehlo.reshape %slow_zero : (tensor<1xf32>) -> tensor<f32>
      %zeros = stablehlo.broadcast_in_dim %slow_z, dims = [] : (tensor<f32>) -> {t}
"""


def _loop(body: str, *, replicas: int = 2, t: str = "tensor<4xi32>") -> str:
    """``main(x: t)``: STEPS iterations of ``body`` (``%i`` the step, ``%v`` the carried
    value; it defines ``%y``, the next value)."""
    return module(f"(%x: {t}) -> {t}", counted_loop_body(t, STEPS, body), replicas=replicas)


EVERY_PRIMITIVE = _loop(
    f"""    %g = "stablehlo.all_gather"(%v) {{all_gather_dim = 0 : i64, replica_groups = {groups_attr([[0, 1]])}}}
        : (tensor<4xi32>) -> tensor<8xi32>
    %s = stablehlo.slice %g [2:6] : (tensor<8xi32>) -> tensor<4xi32>
    %a = "stablehlo.all_to_all"(%s) {{split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
        replica_groups = {groups_attr([[0, 1]])}}} : (tensor<4xi32>) -> tensor<4xi32>
    %p = "stablehlo.collective_permute"(%a) {{source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}}
        : (tensor<4xi32>) -> tensor<4xi32>
    %b = "stablehlo.collective_broadcast"(%p) {{replica_groups = {groups_attr([[1, 0]])}}} : (tensor<4xi32>) -> tensor<4xi32>
    %y = stablehlo.add %b, %v : tensor<4xi32>"""
)


def _every_primitive_model(xs: list[np.ndarray]) -> list[np.ndarray]:
    v = [x.copy() for x in xs]
    for _ in range(STEPS):
        s = np.concatenate(v)[2:6]  # every device gathers the same and slices the same
        a = [np.concatenate([s[0:2], s[0:2]]), np.concatenate([s[2:4], s[2:4]])]
        permuted = [a[1], a[0]]
        broadcast = permuted[1]  # the group [1, 0] broadcasts device 1's value
        v = [broadcast + v[0], broadcast + v[1]]
    return v


def test_collectives_in_a_loop_match_numpy_and_skip_python_after_the_first_step():
    exe = xhlo.compile(EVERY_PRIMITIVE)
    xs = [np.array([1, -2, 3, 4], np.int32), np.array([5, 6, -7, 8], np.int32)]
    for _ in range(2):  # a second run starts clean: new devices, new plans
        before = exe._runtime.python_calls
        out = exe.run_replicated([(x,) for x in xs])
        for got, want in zip(out, _every_primitive_model(xs)):
            np.testing.assert_array_equal(got[0], want)
        # each device enters Python once per call site (the first step), then runs natively
        assert exe._runtime.python_calls - before == 2 * 4


def test_a_mismatch_while_peers_run_natively_is_reported():
    """At step 5 device 1 runs an all_to_all where device 0 runs its (native) all_gather."""
    src = _loop(
        f"""{AT_STEP_FIVE}    %y = "stablehlo.case"(%which) ({{
      %g = "stablehlo.all_gather"(%v) {{all_gather_dim = 0 : i64, replica_groups = {groups_attr([[0, 1]])}}}
          : (tensor<4xi32>) -> tensor<8xi32>
      %s = stablehlo.slice %g [0:4] : (tensor<8xi32>) -> tensor<4xi32>
      stablehlo.return %s : tensor<4xi32>
    }}, {{
      %a = "stablehlo.all_to_all"(%v) {{split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
          replica_groups = {groups_attr([[0, 1]])}}} : (tensor<4xi32>) -> tensor<4xi32>
      stablehlo.return %a : tensor<4xi32>
    }}) : (tensor<i32>) -> tensor<4xi32>"""
    )
    exe = xhlo.compile(src)
    x = np.arange(4, dtype=np.int32)
    with pytest.raises(CollectiveMismatch, match="the devices run different collectives") as info:
        exe.run_replicated([(x,), (x,)], timeout=60)
    text = str(info.value)
    assert "device 0 runs stablehlo.all_gather" in text and "device 1 runs stablehlo.all_to_all" in text


def test_a_device_failing_while_its_peer_waits_natively_aborts_the_peer():
    """At step 5 device 1 runs a ragged all-to-all (alone) with out-of-bounds sizes and fails
    while device 0 waits in its native all_gather."""
    src = _loop(
        f"""{AT_STEP_FIVE}    %y = "stablehlo.case"(%which) ({{
      %g = "stablehlo.all_gather"(%v) {{all_gather_dim = 0 : i64, replica_groups = {groups_attr([[0, 1]])}}}
          : (tensor<4xi32>) -> tensor<8xi32>
      %s = stablehlo.slice %g [0:4] : (tensor<8xi32>) -> tensor<4xi32>
      stablehlo.return %s : tensor<4xi32>
    }}, {{
      %zero = stablehlo.constant dense<0> : tensor<1xi32>
      %nine = stablehlo.constant dense<9> : tensor<1xi32>
      %r = stablehlo.custom_call @ragged_all_to_all(%v, %v, %zero, %nine, %zero, %nine)
          {{api_version = 4 : i32, backend_config = {{replica_groups = dense<[[0], [1]]> : tensor<2x1xi64>}}}}
          : (tensor<4xi32>, tensor<4xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
      stablehlo.return %r : tensor<4xi32>
    }}) : (tensor<i32>) -> tensor<4xi32>"""
    )
    exe = xhlo.compile(src)
    x = np.arange(4, dtype=np.int32)
    with pytest.raises(xhlo.runtime.CollectiveError) as info:
        exe.run_replicated([(x,), (x,)], timeout=60)
    errors = info.value.errors
    assert "out of bounds" in str(errors[1])
    assert isinstance(errors[0], CollectiveAborted) and "device 1 failed" in str(errors[0])


def _in_place_all_reduce_loop(replicas: int, failing_body: str | None = None) -> str:
    """STEPS iterations of a 1 MiB all_reduce (add), the size the runtime folds in place;
    with ``failing_body``, device 1 runs that instead at step 5."""
    t = "tensor<512x512xi32>"
    reduce = f""""stablehlo.all_reduce"(%v) ({{
        ^bb0(%a: tensor<i32>, %b: tensor<i32>):
          %sum = stablehlo.add %a, %b : tensor<i32>
          stablehlo.return %sum : tensor<i32>
      }}) {{replica_groups = {groups_attr([list(range(replicas))])}}} : ({t}) -> {t}"""
    if failing_body is None:
        body = f"    %y = {reduce}"
    else:
        body = f"""{AT_STEP_FIVE}    %y = "stablehlo.case"(%which) ({{
      %s = {reduce}
      stablehlo.return %s : {t}
    }}, {{
{failing_body}
    }}) : (tensor<i32>) -> {t}"""
    return _loop(body, replicas=replicas, t=t)


@pytest.mark.parametrize("replicas", [2, 4])
def test_in_place_all_reduce_runs_its_fold_natively_after_the_first_step(replicas):
    exe = xhlo.compile(_in_place_all_reduce_loop(replicas))
    assert 'primitive = "all_reduce"' in exe.ir("xhlo-stablehlo-prepare")  # the in-place lowering
    rng = np.random.default_rng(replicas)
    xs = [rng.integers(-9, 10, (512, 512)).astype(np.int32) for _ in range(replicas)]
    want = xs
    for _ in range(STEPS):  # int32 arithmetic wraps as the program's does
        total = want[0].copy()
        for other in want[1:]:
            total += other
        want = [total] * replicas
    for _ in range(2):
        before = exe._runtime.python_calls
        out = exe.run_replicated([(x,) for x in xs])
        for got in out:
            np.testing.assert_array_equal(got[0], want[0])
        assert exe._runtime.python_calls - before == replicas  # the first step only


def test_a_device_failing_while_its_peer_folds_natively_aborts_the_peer():
    failing = """      %zero = stablehlo.constant dense<0> : tensor<1xi32>
      %big = stablehlo.constant dense<9999> : tensor<1xi32>
      %r = stablehlo.custom_call @ragged_all_to_all(%v, %v, %zero, %big, %zero, %big)
          {api_version = 4 : i32, backend_config = {replica_groups = dense<[[0], [1]]> : tensor<2x1xi64>}}
          : (tensor<512x512xi32>, tensor<512x512xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<512x512xi32>
      stablehlo.return %r : tensor<512x512xi32>"""
    exe = xhlo.compile(_in_place_all_reduce_loop(2, failing))
    x = np.ones((512, 512), np.int32)
    with pytest.raises(xhlo.runtime.CollectiveError) as info:
        exe.run_replicated([(x,), (x,)], timeout=60)
    errors = info.value.errors
    assert "out of bounds" in str(errors[1])
    assert isinstance(errors[0], CollectiveAborted) and "device 1 failed" in str(errors[0])


def test_native_fold_resumed_by_python_reads_the_buffers_the_peers_posted():
    """At step 5 device 1 first sorts 2M floats (far longer than a wait slice) and then
    contributes v + 1000, so its peers' native all_reduce (a max) hands over to Python,
    which must fold the buffers posted this step, not those of the step that last went
    through Python."""
    t = "tensor<512x512xf32>"
    delay = f"""{AT_STEP_FIVE}    %u = "stablehlo.case"(%which) ({{
      stablehlo.return %v : {t}
    }}, {{
{_zeros_after_a_long_sort("%v", t)}      %thousand = stablehlo.constant dense<1000.0> : {t}
      %bumped = stablehlo.add %v, %thousand : {t}
      %raised = stablehlo.add %bumped, %zeros : {t}
      stablehlo.return %raised : {t}
    }}) : (tensor<i32>) -> {t}
    %reduced = "stablehlo.all_reduce"(%u) ({{
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %m = stablehlo.maximum %a, %b : tensor<f32>
          stablehlo.return %m : tensor<f32>
      }}) {{replica_groups = {groups_attr([[0, 1, 2, 3]])}}} : ({t}) -> {t}
    %step = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %steps = stablehlo.broadcast_in_dim %step, dims = [] : (tensor<f32>) -> {t}
    %y = stablehlo.add %reduced, %steps : {t}"""
    src = _loop(delay, replicas=4, t=t)
    exe = xhlo.compile(src)
    rng = np.random.default_rng(7)
    xs = [rng.integers(-50, 50, (512, 512)).astype(np.float32) for _ in range(4)]
    want = np.maximum.reduce(xs) + np.float32(sum(range(STEPS)) + 1000)  # step k adds k
    before = exe._runtime.python_calls
    out = exe.run_replicated([(x,) for x in xs])
    for got in out:
        np.testing.assert_array_equal(got[0], want)
    assert exe._runtime.python_calls - before > 4  # the others went back to Python at step 5


@pytest.mark.parametrize("layout", ["apart", "overlapping", "covering", "overlapping-all-rows"])
@pytest.mark.parametrize("ranks,meta", [(2, "2xi64"), (4, "4xi32")])
def test_ragged_all_to_all_pulls_natively_after_the_first_step(ranks, meta, layout):
    """Between its two exchanges each device pulls every member's updates for it in
    native code (xhlo_ragged_pull), in member and update order, as the model does; the
    offsets of empty parts are far out of range and never read; only rows received
    apart that cover the output leave nothing of the output operand to copy."""
    program, args, expected = ragged_steps(ranks, meta, layout, STEPS)
    exe = xhlo.compile(program)
    for _ in range(2):
        before = exe._runtime.python_calls
        out = exe.run_replicated(args)
        for d in range(ranks):
            np.testing.assert_array_equal(out[d][0], expected[d])
        assert exe._runtime.python_calls - before == ranks  # the first step only


def test_ragged_rows_out_of_bounds_in_the_native_pull_are_reported():
    """At step 3 every device sends 9 rows of its 4-row input: the native pull refuses
    them and Python reports which device sends which rows."""
    exe = xhlo.compile(ragged_loop_out_of_bounds_at_step_3(4, 2, "2xi64", STEPS))
    two = np.array([2, 2], np.int64)
    args = [(np.array([0, 2]), two, np.full(2, 2 * d), two, np.ones((4, 2), np.float32)) for d in range(2)]
    with pytest.raises(xhlo.runtime.CollectiveError) as info:
        exe.run_replicated(args, timeout=60)
    message = str(info.value)
    assert "ragged_all_to_all" in message and "sends rows [0, 9) of its 4-row input" in message, message


def test_native_ragged_pull_resumed_by_python_reads_the_buffers_the_peers_posted():
    """At step 5 devices 1-3 first sort 2M floats (far longer than a wait slice), so
    device 0's native ragged all-to-all hands over to Python, whose pull must read the
    buffers posted this step, not those of the step that last went through Python."""
    t = "tensor<12x2xf32>"
    delay = f"""{AT_STEP_FIVE}      %data = "stablehlo.case"(%which) ({{
        stablehlo.return %v : {t}
      }}, {{
{_zeros_after_a_long_sort("%v", t)}        %same = stablehlo.add %v, %zeros : {t}
        stablehlo.return %same : {t}
      }}) : (tensor<i32>) -> {t}
"""
    _, args, expected = ragged_steps(4, "4xi32", "apart", STEPS)
    exe = xhlo.compile(ragged_loop(12, 4, "4xi32", STEPS, prelude=delay, data="%data"))
    out = exe.run_replicated(args)
    for d in range(4):
        np.testing.assert_array_equal(out[d][0], expected[d])
    assert exe._runtime.python_calls > 4  # device 0 went back to Python at step 5


def test_a_device_failing_while_its_peers_pull_natively_aborts_them():
    """At step 5 devices 1-3 fail (a ragged all-to-all of their own sends rows out of
    bounds) instead of joining the loop's ragged all-to-all: device 0, waiting in native
    code, stops with an error naming a failed peer instead of hanging."""
    t, m = "tensor<12x2xf32>", "tensor<1xi32>"
    failing = f"""{AT_STEP_FIVE}      %data = "stablehlo.case"(%which) ({{
        stablehlo.return %v : {t}
      }}, {{
        %start = stablehlo.constant dense<0> : {m}
        %rows = stablehlo.constant dense<99> : {m}
        %bad = stablehlo.custom_call @ragged_all_to_all(%v, %v, %start, %rows, %start, %rows)
            {{api_version = 4 : i32, backend_config = {{replica_groups = dense<[[0], [1], [2], [3]]> : tensor<4x1xi64>}}}}
            : ({t}, {t}, {m}, {m}, {m}, {m}) -> {t}
        stablehlo.return %bad : {t}
      }}) : (tensor<i32>) -> {t}
"""
    _, args, _ = ragged_steps(4, "4xi32", "apart", STEPS)
    exe = xhlo.compile(ragged_loop(12, 4, "4xi32", STEPS, prelude=failing, data="%data"))
    with pytest.raises(xhlo.runtime.CollectiveError) as info:
        exe.run_replicated(args, timeout=60)
    errors = info.value.errors
    assert all("out of bounds" in str(errors[d]) for d in (1, 2, 3)), errors
    assert isinstance(errors[0], CollectiveAborted) and "failed" in str(errors[0]), errors
