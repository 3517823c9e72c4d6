"""Collectives from the builder: the emitted StableHLO, and the seed/spec
examples run on several in-process replicas (``Executable.run_replicated``)."""

from __future__ import annotations

import numpy as np
import pytest

import xhlo

from .builder_util import build, ops

F = np.float32


def replicated(fn, per_replica_args, num_replicas=None):
    comp = build(fn, *per_replica_args[0])
    exe = xhlo.compile(comp, num_replicas=num_replicas or len(per_replica_args))
    return [
        r[0] if len(r) == 1 else r for r in exe.run_replicated([list(a) for a in per_replica_args])
    ]


def test_emitted_stablehlo():
    x = np.zeros((4, 2), F)
    text = build(
        lambda v: [
            ops.AllReduce(
                v, lambda a, b: a + b, [[0, 1]], channel_id=3, use_global_device_ids=True
            ),
            ops.AllGather(v, 1, 2),
            ops.AllToAll(v, 0, 1, 2, [[1, 0]]),
            ops.ReduceScatter(v, lambda a, b: ops.Max(a, b), 0, 2),
            ops.CollectivePermute(v, [(0, 1), (1, 0)]),
            ops.CollectiveBroadcast(v, [[1, 0]]),
            ops.ReplicaId(),
            ops.PartitionId(),
        ],
        x,
    ).as_stablehlo_text()
    for fragment in [
        '"stablehlo.all_reduce"',
        "channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>",
        "use_global_device_ids",
        "all_gather_dim = 1",
        "tensor<4x4xf32>",
        "replica_groups = dense<[[0, 1]]>",
        "split_count = 2",
        "concat_dimension = 1",
        "replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>",
        '"stablehlo.reduce_scatter"',
        "stablehlo.maximum",
        "source_target_pairs = dense<[[0, 1], [1, 0]]>",
        '"stablehlo.collective_broadcast"',
        "stablehlo.replica_id : tensor<ui32>",
        "stablehlo.partition_id : tensor<ui32>",
    ]:
        assert fragment in text, fragment
    ragged = build(
        lambda a, b, c, d, e, f: ops.RaggedAllToAll(a, b, c, d, e, f, [[0, 1]], 7),
        np.zeros(3, F),
        *[np.zeros(2, np.int64)] * 2,
        np.zeros(4, F),
        *[np.zeros(2, np.int64)] * 2,
    ).as_stablehlo_text()
    assert (
        "stablehlo.custom_call @ragged_all_to_all(%arg0, %arg3, %arg1, %arg2, %arg4, %arg5)"
        in ragged
    )
    assert (
        "api_version = 4 : i32" in ragged
        and "backend_config = {channel_id = 7 : i64, replica_groups = dense<[[0, 1]]>" in ragged
    )


def test_all_reduce_and_cross_replica_sum():
    args = [(np.array([1.0, 2.5], F),), (np.array([3.0, 5.25], F),)]
    for out in replicated(lambda v: ops.AllReduce(v, lambda a, b: a + b), args):
        np.testing.assert_array_equal(out, [4.0, 7.75])
    for out in replicated(lambda v: ops.CrossReplicaSum(v), args):
        np.testing.assert_array_equal(out, [4.0, 7.75])


def test_all_reduce_of_a_tuple():
    args = [
        (np.array([1.0], F), np.array([2.0, 3.0], F)),
        (np.array([4.0], F), np.array([5.0, 6.0], F)),
    ]
    for a, b in replicated(
        lambda x, y: list(ops.AllReduce(ops.Tuple([x, y]), lambda p, q: ops.Max(p, q))), args
    ):
        np.testing.assert_array_equal(a, [4.0])
        np.testing.assert_array_equal(b, [5.0, 6.0])


def test_all_gather():
    args = [(np.array([1.0, 2.5], F),), (np.array([3.0, 5.25], F),)]
    for out in replicated(lambda v: ops.AllGather(v, 0, 2), args):
        np.testing.assert_array_equal(out, [1.0, 2.5, 3.0, 5.25])


def test_all_to_all_spec_example():
    r0 = np.arange(1, 9, dtype=F).reshape(2, 4)
    outs = replicated(lambda v: ops.AllToAll(v, 1, 0, 2), [(r0,), (r0 + 8,)])
    np.testing.assert_array_equal(outs[0], [[1, 2], [5, 6], [9, 10], [13, 14]])
    np.testing.assert_array_equal(outs[1], [[3, 4], [7, 8], [11, 12], [15, 16]])


def test_reduce_scatter():
    outs = replicated(
        lambda v: ops.ReduceScatter(v, lambda a, b: a + b, 0, 2),
        [(np.array([1.0, 2.25], F),), (np.array([3.0, 5.25], F),)],
    )
    np.testing.assert_array_equal(outs[0], [4.0])
    np.testing.assert_array_equal(outs[1], [7.5])


def test_collective_permute_non_targets_get_zeros():
    args = [(np.array([1.0, 2.0], F),), (np.array([3.0, 4.0], F),), (np.array([5.0, 6.0], F),)]
    outs = replicated(lambda v: ops.CollectivePermute(v, [(0, 1), (1, 2)]), args)
    np.testing.assert_array_equal(outs[0], [0.0, 0.0])
    np.testing.assert_array_equal(outs[1], [1.0, 2.0])
    np.testing.assert_array_equal(outs[2], [3.0, 4.0])


def test_collective_broadcast_spec_example():
    args = [
        (np.array([[1, 2]], np.int64),),
        (np.array([[3, 4]], np.int64),),
        (np.array([[5, 6]], np.int64),),
        (np.array([[7, 8]], np.int64),),
    ]
    outs = replicated(lambda v: ops.CollectiveBroadcast(v, [[2, 1]]), args)
    expected = [[[0, 0]], [[5, 6]], [[5, 6]], [[0, 0]]]
    for out, e in zip(outs, expected):
        np.testing.assert_array_equal(out, e)


def test_replica_id():
    outs = replicated(
        lambda v: ops.ConvertElementType(ops.ReplicaId(), np.float32) + v, [(np.float32(10),)] * 3
    )
    assert [float(o) for o in outs] == [10.0, 11.0, 12.0]


def test_ragged_all_to_all_worked_example():
    def fn(inp, inp_off, send, out, out_off, recv):
        return ops.RaggedAllToAll(inp, inp_off, send, out, out_off, recv)

    i64 = lambda *v: np.array(v, np.int64)
    r0 = (np.array([1, 2, 2], F), i64(0, 1), i64(1, 2), np.zeros(4, F), i64(0, 0), i64(1, 1))
    r1 = (np.array([3, 4, 0], F), i64(0, 1), i64(1, 1), np.zeros(4, F), i64(1, 2), i64(2, 1))
    outs = replicated(fn, [r0, r1])
    np.testing.assert_array_equal(outs[0], [1, 3, 0, 0])
    np.testing.assert_array_equal(outs[1], [2, 2, 4, 0])


@pytest.mark.parametrize(
    "fn,error,match",
    [
        (lambda v: ops.AllToAll(v, 0, 0, 3), ValueError, "not divisible by split_count 3"),
        (lambda v: ops.AllGather(v, 0), ValueError, "shard_count is needed"),
        (
            lambda v: ops.AllGather(v, 0, 3, [[0, 1]]),
            ValueError,
            "shard_count 3 must equal the replica group size 2",
        ),
        (lambda v: ops.AllReduce(v, [[0, 1], [1, 2]]), TypeError, "XlaComputation or a callable"),
        (
            lambda v: ops.AllReduce(v, lambda a, b: a + b, [[0, 1], [1, 2]]),
            ValueError,
            "at most once",
        ),
        (
            lambda v: ops.CollectivePermute(v, [(0, 1), (2, 1)]),
            ValueError,
            "repeat a source or a target",
        ),
        (lambda v: ops.ReduceScatter(v, lambda a: a, 0, 2), TypeError, "takes 1 parameters"),
    ],
)
def test_build_time_errors(fn, error, match):
    with pytest.raises(error, match=match):
        build(fn, np.zeros((4, 2), F))


def test_partition_id():
    comp = build(lambda v: ops.ConvertElementType(ops.PartitionId(), np.float32) + v, np.float32(0))
    exe = xhlo.compile(comp, num_partitions=2)
    outs = exe.run_replicated([[np.float32(10)], [np.float32(20)]])
    assert [float(o[0]) for o in outs] == [10.0, 21.0]
