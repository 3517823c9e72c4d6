"""Tokens, infeed/outfeed, send/recv and custom calls from the builder, run with xhlo."""

from __future__ import annotations

import numpy as np
import pytest

import xhlo
from xhlo import builder as xb

from .builder_util import build, ops

F = np.float32


def f32(*dims) -> xb.Shape:
    return xb.Shape.array_shape(F, dims)


def test_token_shape_prints_and_parses():
    token = xb.Shape.token_shape()
    assert str(token) == "token[]" and token.is_token() and not token.is_array()
    assert xb.Shape.parse("(f32[2], token[])").tuple_shapes()[1].is_token()


def test_after_all_joins_tokens_in_the_emitted_stablehlo():
    b = xb.XlaBuilder("tokens")
    t1, t2 = ops.CreateToken(b), ops.CreateToken(b)
    joined = ops.AfterAll(b, [t1, t2])
    x = ops.Parameter(b, 0, f32(2))
    ops.OutfeedWithToken(x, joined, f32(2))
    text = b.build(x).as_stablehlo_text()
    assert text.count("stablehlo.after_all") == 3
    assert "stablehlo.outfeed" in text  # kept although the root does not use it


def test_infeed_and_outfeed_move_host_data_in_order():
    b = xb.XlaBuilder("feeds")
    token = ops.CreateToken(b)
    first, token = ops.InfeedWithToken(token, f32(3))
    second, token = ops.InfeedWithToken(
        token, xb.Shape.tuple_shape([f32(2), xb.Shape.array_shape(np.int32, ())])
    )
    pair, count = second
    token = ops.OutfeedWithToken(first * 2, token, f32(3))
    ops.Outfeed(ops.ConvertElementType(count, F) + pair)
    exe = xhlo.compile(b.build(first - 1))
    x = np.array([1, 2, 3], F)
    for step in range(2):  # the queues persist across calls
        exe.transfer_to_infeed(x + step)
        exe.transfer_to_infeed(np.array([0.5, 1.5], F), np.int32(step))
        np.testing.assert_array_equal(exe(), x + step - 1)
        np.testing.assert_array_equal(exe.transfer_from_outfeed(), (x + step) * 2)
        np.testing.assert_array_equal(exe.transfer_from_outfeed(), np.array([0.5, 1.5], F) + step)
    with pytest.raises(ValueError, match="outfeed is empty"):
        exe.transfer_from_outfeed()


def test_empty_infeed_times_out_with_an_error_naming_the_op():
    b = xb.XlaBuilder("starved")
    x = ops.Infeed(b, f32(2))
    exe = xhlo.compile(b.build(x), collective_timeout=0.2)
    with pytest.raises(
        xhlo.CollectiveError, match="stablehlo.infeed at .*no data in device 0's infeed"
    ):
        exe()


def test_infeed_item_of_the_wrong_shape_is_an_error():
    b = xb.XlaBuilder("wrong")
    exe = xhlo.compile(b.build(ops.Infeed(b, f32(2))))
    exe.transfer_to_infeed(np.zeros(3, F))
    with pytest.raises(
        xhlo.CollectiveError, match=r"result 0 is float32\[3\].*expects float32\[2\]"
    ):
        exe()


def test_program_without_feeds_has_no_queues():
    exe = xhlo.compile(build(lambda x: x + 1, np.zeros(2, F)))
    with pytest.raises(ValueError, match="no infeed, outfeed or host calls"):
        exe.transfer_to_infeed(np.zeros(2, F))


def test_send_and_recv_between_two_replicas():
    def program(x):
        token = ops.SendWithToken(x * 10, ops.CreateToken(), 7, source_target_pairs=[(0, 1)])
        received, _ = ops.RecvWithToken(token, f32(3), 7, source_target_pairs=[(0, 1)])
        plain = ops.Recv(f32(3), 8, source_target_pairs=[(1, 0)])
        ops.Send(x + 1, 8, source_target_pairs=[(1, 0)])
        return [received, plain]

    xs = [np.array([1, 2, 3], F), np.array([4, 5, 6], F)]
    exe = xhlo.compile(build(program, xs[0]), num_replicas=2)
    (recv0, plain0), (recv1, plain1) = exe.run_replicated([(x,) for x in xs])
    np.testing.assert_array_equal(recv0, np.zeros(3, F))  # no pair targets replica 0 on channel 7
    np.testing.assert_array_equal(recv1, xs[0] * 10)
    np.testing.assert_array_equal(plain0, xs[1] + 1)
    np.testing.assert_array_equal(plain1, np.zeros(3, F))


def test_send_checks_its_channel_at_build_time():
    b = xb.XlaBuilder("bad")
    x = ops.Parameter(b, 0, f32(2))
    with pytest.raises(ValueError, match="Send: source_target_pairs must list"):
        ops.Send(x, 1, source_target_pairs=[])
    with pytest.raises(ValueError, match="Send: the channel handle must be positive"):
        ops.Send(x, 0, source_target_pairs=[(0, 1)])
    with pytest.raises(ValueError, match="a device may send or receive once per channel"):
        ops.Recv(b, f32(2), 1, source_target_pairs=[(0, 1), (2, 1)])
    with pytest.raises(TypeError, match="SendWithToken: expected a token"):
        ops.SendWithToken(x, x, 1, source_target_pairs=[(0, 1)])


def test_custom_call_runs_a_registered_python_function():
    def top2(values, bias):
        order = np.sort(values, axis=-1)[..., ::-1]
        return order[..., :2] + bias, np.argmax(values, axis=-1).astype(np.int32)

    xhlo.register_custom_call_target("test_top2", top2)
    try:
        shape = xb.Shape.tuple_shape([f32(4, 2), xb.Shape.array_shape(np.int32, (4,))])
        comp = build(
            lambda v, b: ops.CustomCall("test_top2", [v * 2, b], shape, opaque=b"k=2"),
            np.zeros((4, 5), F),
            np.zeros((), F),
        )
        assert 'backend_config = "k=2"' in comp.as_stablehlo_text()
        values = np.random.default_rng(0).standard_normal((4, 5)).astype(F)
        best, where = xhlo.compile(comp)(values, F(0.5))
        expected_best, expected_where = top2(values * 2, F(0.5))
        np.testing.assert_array_equal(best, expected_best)
        np.testing.assert_array_equal(where, expected_where)
    finally:
        xhlo.unregister_custom_call_target("test_top2")


def test_custom_call_result_of_the_wrong_shape_is_an_error():
    xhlo.register_custom_call_target("test_wrong", lambda x: x[:1])
    try:
        exe = xhlo.compile(
            build(lambda x: ops.CustomCall("test_wrong", [x], f32(3)), np.zeros(3, F))
        )
        with pytest.raises(
            xhlo.CollectiveError, match=r"custom call target 'test_wrong': result 0 is float32\[1\]"
        ):
            exe(np.zeros(3, F))
    finally:
        xhlo.unregister_custom_call_target("test_wrong")


def test_unregistered_custom_call_target_is_a_compile_error():
    comp = build(lambda x: ops.CustomCall("nobody_home", [x], f32(3)), np.zeros(3, F))
    with pytest.raises(
        xhlo.CompilerError, match="unsupported custom call target 'nobody_home'.*register"
    ):
        xhlo.compile(comp)


def test_custom_call_checks_operands_at_build_time():
    b = xb.XlaBuilder("bad")
    token = ops.CreateToken(b)
    with pytest.raises(
        TypeError, match="CustomCall 'f': operand 0 must be an array, got the token"
    ):
        ops.CustomCall(b, "f", [token], f32(1))


def test_feeds_and_tokens_check_their_arguments_at_build_time():
    b = xb.XlaBuilder("bad")
    x = ops.Parameter(b, 0, f32(2))
    with pytest.raises(TypeError, match="AfterAll: expected a token"):
        ops.AfterAll(b, [x])
    with pytest.raises(
        ValueError, match=r"Outfeed: shape_with_layout f32\[3\] does not match .* f32\[2\]"
    ):
        ops.Outfeed(x, f32(3))
    with pytest.raises(ValueError, match="Infeed: the data shape .* must not contain tokens"):
        ops.Infeed(b, xb.Shape.token_shape())
    with pytest.raises(ValueError, match="InfeedWithToken: nested tuple shapes are not supported"):
        ops.InfeedWithToken(
            ops.CreateToken(b), xb.Shape.tuple_shape([xb.Shape.tuple_shape([f32(1)])])
        )
