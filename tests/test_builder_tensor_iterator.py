"""OpenVINO's TensorIterator (seed 004) lowered to stablehlo.while: the seed's
LSTM over a sequence against a numpy LSTM, plus slicing/back-edge variants."""

from __future__ import annotations

import numpy as np
import pytest

import xhlo
from xhlo import builder as xb

from .builder_util import assert_close, build, ops, run

RNG = np.random.default_rng(2024)
SEQ, INPUT, HIDDEN = 25, 512, 256


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def numpy_lstm(x, h, c, w, b):
    """LSTMCell over the sequence axis 1; gates in OpenVINO's order f, i, c, o."""
    outputs = []
    for t in range(x.shape[1]):
        gates = np.concatenate([x[:, t], h], axis=1) @ w.T + b
        f, i, g, o = np.split(gates, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        outputs.append(h[:, None, :])
    return np.concatenate(outputs, axis=1)


def lstm_cell(x, h, c, w, b):
    """The body's LSTMCell (layer 7) on XlaOps."""
    gates = ops.Add(ops.Dot(ops.ConcatInDim([x, h], 1), ops.Transpose(w, (1, 0))), b, (1,))
    f, i, g, o = (ops.SliceInDim(gates, k * HIDDEN, (k + 1) * HIDDEN, 1, 1) for k in range(4))
    c_next = ops.Logistic(f) * c + ops.Logistic(i) * ops.Tanh(g)
    h_next = ops.Logistic(o) * ops.Tanh(c_next)
    return h_next, c_next


def test_lstm_example_from_the_seed():
    x = RNG.uniform(-1, 1, (1, SEQ, INPUT)).astype(np.float32)
    h0 = RNG.uniform(-1, 1, (1, HIDDEN)).astype(np.float32)
    c0 = RNG.uniform(-1, 1, (1, HIDDEN)).astype(np.float32)
    w = RNG.uniform(-0.1, 0.1, (4 * HIDDEN, INPUT + HIDDEN)).astype(np.float32)  # Const layer 5
    bias = RNG.uniform(-0.1, 0.1, (4 * HIDDEN,)).astype(np.float32)  # Const layer 6

    # The seed's body layer ids -> body parameter numbers / result indices.
    param = {0: 0, 3: 1, 4: 2}
    result = {8: 0, 9: 1, 12: 2}

    body = xb.XlaBuilder("lstm_body")
    x_t = ops.Parameter(body, param[0], xb.Shape.parse("f32[1,1,512]"))
    h = ops.Parameter(body, param[3], xb.Shape.parse("f32[1,256]"))
    c = ops.Parameter(body, param[4], xb.Shape.parse("f32[1,256]"))
    with body:
        h_next, c_next = lstm_cell(
            ops.Reshape(x_t, (1, INPUT)), h, c, ops.Constant(w), ops.Constant(bias)
        )
        results = [None] * 3
        results[result[8]], results[result[9]] = c_next, h_next
        results[result[12]] = ops.Reshape(h_next, (1, 1, HIDDEN))
    body_comp = body.build(results)

    port_map = {
        "input": [
            {"axis": 1, "external_port_id": 0, "internal_layer_id": param[0], "start": 0},
            {"external_port_id": 1, "internal_layer_id": param[3]},
            {"external_port_id": 2, "internal_layer_id": param[4]},
        ],
        "output": [{"axis": 1, "external_port_id": 3, "internal_layer_id": result[12]}],
    }
    back_edges = [
        {"from-layer": result[8], "to-layer": param[4]},
        {"from-layer": result[9], "to-layer": param[3]},
    ]

    comp = build(
        lambda a, b, d: ops.TensorIterator(body_comp, [a, b, d], port_map, back_edges), x, h0, c0
    )
    assert str(comp.result_shape()) == "f32[1,25,256]"
    text = comp.as_stablehlo_text()
    assert (
        "stablehlo.while" in text
        and "stablehlo.dynamic_slice" in text
        and "stablehlo.dynamic_update_slice" in text
    )
    got = xhlo.compile(comp)(x, h0, c0)
    assert_close(got, numpy_lstm(x, h0, c0, w, bias).astype(np.float32), rtol=1e-4, atol=2e-5)


def test_backward_iteration_with_last_value_and_invariant():
    """start=-1, end=0, stride=-1 walks the axis backwards; outputs are written
    back in positional order; a port without axis returns the last value."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)

    def body(col, acc, scale):  # col [3,1], acc [3,1], scale [] (invariant)
        running = acc + col * scale
        return [running, running]

    port_map = [
        xb.TensorIteratorInput(0, 0, axis=1, start=-1, end=0, stride=-1),
        xb.TensorIteratorInput(1, 1),
        xb.TensorIteratorInput(2, 2),
        xb.TensorIteratorOutput(3, 0, axis=1, start=-1, end=0, stride=-1),
        xb.TensorIteratorOutput(4, 1),
    ]
    cumulative, last = run(
        lambda a, z, s: ops.TensorIterator(body, [a, z, s], port_map, [(0, 1)]),
        x,
        np.zeros((3, 1), np.float32),
        np.float32(2),
    )
    expected = 2 * np.cumsum(x[:, ::-1], axis=1)[:, ::-1]
    assert_close(cumulative, expected)
    assert_close(last, expected[:, :1])


def test_forward_slices_of_two_with_stride_two():
    x = np.arange(10, dtype=np.int32)
    port_map = {
        "input": [
            {"external_port_id": 0, "internal_layer_id": 0, "axis": 0, "stride": 2, "part_size": 2}
        ],
        "output": [{"external_port_id": 1, "internal_layer_id": 0, "axis": 0}],
    }
    (got,) = run(lambda a: ops.TensorIterator(lambda s: ops.Rev(s, (0,)), [a], port_map), x)
    assert_close(got, np.array([1, 0, 3, 2, 5, 4, 7, 6, 9, 8], np.int32))


@pytest.mark.parametrize(
    "port_map,back_edges,error,match",
    [
        (
            {
                "input": [
                    {"external_port_id": 0, "internal_layer_id": 0, "axis": 0},
                    {"external_port_id": 1, "internal_layer_id": 1, "axis": 0},
                ],
                "output": [{"external_port_id": 2, "internal_layer_id": 0}],
            },
            [],
            ValueError,
            "disagree on the iteration count",
        ),
        (
            {
                "input": [
                    {"external_port_id": 0, "internal_layer_id": 0, "axis": 0},
                    {"external_port_id": 1, "internal_layer_id": 1},
                ],
                "output": [{"external_port_id": 2, "internal_layer_id": 0}],
            },
            [(0, 1)],
            TypeError,
            "back edge 0 -> 1 carries",
        ),
        (
            {"input": [{"external_port_id": 5, "internal_layer_id": 0, "axis": 0}], "output": []},
            [],
            ValueError,
            "input port 5",
        ),
        (
            {"input": [{"external_port_id": 0, "internal_layer_id": 0, "axis": 3}], "output": []},
            [],
            ValueError,
            "axis 3",
        ),
    ],
)
def test_build_time_errors(port_map, back_edges, error, match):
    def body(*params):
        return [params[0]]

    with pytest.raises(error, match=match):
        build(
            lambda a, b: ops.TensorIterator(body, [a, b], port_map, back_edges),
            np.zeros((4,), np.float32),
            np.zeros((5, 2), np.float32),
        )
