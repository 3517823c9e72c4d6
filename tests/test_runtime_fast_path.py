"""xhlo-runtime-fast-path: collectives after their first call run natively, and faults
that happen while they do are still reported as on the Python path."""

from __future__ import annotations

import numpy as np
import pytest
import xhlo
from xhlo.runtime import CollectiveAborted, CollectiveMismatch

from tests.test_collectives import groups_attr, module

STEPS = 20


def _loop(body: str, *, replicas: int = 2) -> str:
    """``main(x: tensor<4xi32>)``: STEPS iterations of ``body`` (``%i`` the step, ``%v`` the
    carried value; it defines ``%y``, the next value)."""
    return module(
        "(%x: tensor<4xi32>) -> tensor<4xi32>",
        f"""  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<{STEPS}> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<4xi32>
   cond {{
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
{body}
    %j = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %j, %y : tensor<i32>, tensor<4xi32>
  }}
  return %r#1 : tensor<4xi32>""",
        replicas=replicas,
    )


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
        f"""    %id = stablehlo.replica_id : tensor<ui32>
    %d = stablehlo.convert %id : (tensor<ui32>) -> tensor<i32>
    %five = stablehlo.constant dense<5> : tensor<i32>
    %at = stablehlo.compare EQ, %i, %five : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %at_i = stablehlo.convert %at : (tensor<i1>) -> tensor<i32>
    %which = stablehlo.multiply %at_i, %d : tensor<i32>
    %y = "stablehlo.case"(%which) ({{
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
        f"""    %id = stablehlo.replica_id : tensor<ui32>
    %d = stablehlo.convert %id : (tensor<ui32>) -> tensor<i32>
    %five = stablehlo.constant dense<5> : tensor<i32>
    %at = stablehlo.compare EQ, %i, %five : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %at_i = stablehlo.convert %at : (tensor<i1>) -> tensor<i32>
    %which = stablehlo.multiply %at_i, %d : tensor<i32>
    %y = "stablehlo.case"(%which) ({{
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
