"""Ops with side effects: tokens, infeed/outfeed, send/recv and custom calls.

Part of ``xb.ops``. A token (``Shape.token_shape()``) orders side effects;
``CreateToken``/``AfterAll`` make and join them. The seed's token-less
spellings (``Infeed``, ``Outfeed``, ``Send``, ``Recv``) make a fresh token
themselves; the ``*WithToken`` spellings of ``xla_client`` take and return one.
Side-effecting ops are kept in the built computation even when its root does
not use them, as XLA keeps them.

Running them: infeed/outfeed move data through the executable's host queues
(``Executable.transfer_to_infeed`` / ``transfer_from_outfeed``); send/recv move
data between devices over a channel, between the ``source_target_pairs`` given
here (XLA carries them in a frontend attribute); a custom call runs the Python
function registered under its target with ``xhlo.register_custom_call_target``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xhlo._mlir import ir
from xhlo.dialects import stablehlo as sh

from ._support import (
    accepts_builder,
    array,
    bool_attr,
    dense_i64_matrix,
    i32_attr,
    resolve_builder,
    single_op,
)
from .builder import XlaOp, flatten
from .collectives import channel_handle_attr, channel_number
from .shape import Shape

__all__ = [
    "AfterAll",
    "CreateToken",
    "CustomCall",
    "Infeed",
    "InfeedWithToken",
    "Outfeed",
    "OutfeedWithToken",
    "Recv",
    "RecvWithToken",
    "Send",
    "SendWithToken",
]

_TOKEN = Shape.token_shape()


def _token(op_name: str, token) -> XlaOp:
    if not isinstance(token, XlaOp) or not token.shape.is_token():
        got = token.shape if isinstance(token, XlaOp) else type(token).__name__
        raise TypeError(f"{op_name}: expected a token (Shape.token_shape()), got {got}")
    return token


def _data_shape(op_name: str, shape) -> Shape:
    if not isinstance(shape, Shape):
        raise TypeError(f"{op_name}: shape must be an xb.Shape, got {type(shape).__name__}")
    if any(leaf.is_token() for leaf in shape.leaves()):
        raise ValueError(f"{op_name}: the data shape {shape} must not contain tokens")
    if shape.is_tuple() and any(s.is_tuple() for s in shape.tuple_shapes()):
        raise ValueError(f"{op_name}: nested tuple shapes are not supported, got {shape}")
    return shape


def _with_token(shape: Shape) -> Shape:
    return Shape.tuple_shape([shape, _TOKEN])


# -- tokens -----------------------------------------------------------------------------------


@accepts_builder
def CreateToken() -> XlaOp:
    """A token that waits for nothing."""
    return AfterAll([])


@accepts_builder
def AfterAll(tokens: Sequence[XlaOp]) -> XlaOp:
    """A token ordered after every token of ``tokens``."""
    tokens = [_token("AfterAll", t) for t in tokens]
    builder = resolve_builder("AfterAll", tokens)
    return single_op("AfterAll", "stablehlo.after_all", _TOKEN, tokens, builder=builder)


# -- infeed / outfeed -------------------------------------------------------------------------


def _infeed(op_name: str, builder, token: XlaOp | None, shape: Shape, config: str) -> XlaOp:
    """An infeed; with a ``token`` operand its value is (data, token), else the data."""
    result = _with_token(shape)

    def emit(em, *values):
        op = sh.create(
            "stablehlo.infeed",
            [_fresh_token(em, values)],
            em.types(result),
            {"infeed_config": ir.StringAttr.get(config)},
        )
        results = list(op.results)
        leaves = results[:-1]
        data = leaves if shape.is_tuple() else leaves[0]
        return [data, results[-1]] if token is not None else data

    operands = [token] if token is not None else []
    value_shape = result if token is not None else shape
    return builder.add_op(op_name, value_shape, operands, emit, side_effect=True)


@accepts_builder
def InfeedWithToken(token: XlaOp, shape: Shape, config: str = "") -> XlaOp:
    """Read one item of ``shape`` from the device's infeed, after ``token``: (data, token)."""
    token = _token("InfeedWithToken", token)
    return _infeed(
        "InfeedWithToken", token.builder, token, _data_shape("InfeedWithToken", shape), config
    )


@accepts_builder
def Infeed(shape: Shape, config: str = "") -> XlaOp:
    """Read one item of ``shape`` from the device's infeed."""
    builder = resolve_builder("Infeed")
    return _infeed("Infeed", builder, None, _data_shape("Infeed", shape), config)


def _checked_feed_shape(op_name: str, operand: XlaOp, shape_with_layout) -> None:
    if shape_with_layout is None:
        return
    if not isinstance(shape_with_layout, Shape) or not shape_with_layout.equal_ignoring_layout(
        operand.shape
    ):
        raise ValueError(
            f"{op_name}: shape_with_layout {shape_with_layout} does not match the operand's "
            f"shape {operand.shape}"
        )


def _outfeed(op_name: str, operand, token: XlaOp | None, shape_with_layout, config: str) -> XlaOp:
    if not isinstance(operand, XlaOp):
        raise TypeError(f"{op_name}: operand must be an XlaOp, got {type(operand).__name__}")
    _data_shape(op_name, operand.shape)
    _checked_feed_shape(op_name, operand, shape_with_layout)

    def emit(em, data, *token_value):
        op = sh.create(
            "stablehlo.outfeed",
            [*flatten(data), _fresh_token(em, token_value)],
            [em.token_type()],
            {"outfeed_config": ir.StringAttr.get(config)},
        )
        return op.result

    operands = [operand] + ([token] if token is not None else [])
    return operand.builder.add_op(op_name, _TOKEN, operands, emit, side_effect=True)


@accepts_builder
def OutfeedWithToken(
    operand: XlaOp, token: XlaOp, shape_with_layout: Shape | None = None, outfeed_config: str = ""
) -> XlaOp:
    """Write ``operand`` to the device's outfeed after ``token``; the new token."""
    token = _token("OutfeedWithToken", token)
    return _outfeed("OutfeedWithToken", operand, token, shape_with_layout, outfeed_config)


@accepts_builder
def Outfeed(
    operand: XlaOp, shape_with_layout: Shape | None = None, outfeed_config: str = ""
) -> XlaOp:
    """Write ``operand`` to the device's outfeed (the seed's form; returns its token)."""
    return _outfeed("Outfeed", operand, None, shape_with_layout, outfeed_config)


# -- send / recv ------------------------------------------------------------------------------


def _channel_attrs(op_name: str, handle, source_target_pairs) -> Callable[[], dict]:
    """Check the channel now; its attributes are made when emitting (in the module's context)."""
    channel = channel_number(handle)
    if channel is None or channel <= 0:
        raise ValueError(f"{op_name}: the channel handle must be positive, got {channel}")
    pairs = [tuple(int(i) for i in p) for p in source_target_pairs or ()]
    if not pairs or any(len(p) != 2 or min(p) < 0 for p in pairs):
        raise ValueError(
            f"{op_name}: source_target_pairs must list (source, target) device pairs, got "
            f"{source_target_pairs!r}"
        )
    targets = [t for _, t in pairs]
    if len(set(targets)) != len(targets) or len({s for s, _ in pairs}) != len(pairs):
        raise ValueError(f"{op_name}: a device may send or receive once per channel, got {pairs}")
    return lambda: {
        "channel_handle": channel_handle_attr(channel),
        "is_host_transfer": bool_attr(False),
        "source_target_pairs": dense_i64_matrix(pairs, 2),
    }


def _fresh_token(em, token_values) -> ir.Value:
    if token_values:
        return token_values[0]
    return sh.create("stablehlo.after_all", [], [em.token_type()]).result


def _send(op_name: str, operand, token: XlaOp | None, handle, source_target_pairs) -> XlaOp:
    array(op_name, operand)
    attrs = _channel_attrs(op_name, handle, source_target_pairs)

    def emit(em, data, *token_value):
        token_value = _fresh_token(em, token_value)
        return sh.create("stablehlo.send", [data, token_value], [em.token_type()], attrs()).result

    operands = [operand] + ([token] if token is not None else [])
    return operand.builder.add_op(op_name, _TOKEN, operands, emit, side_effect=True)


@accepts_builder
def SendWithToken(operand: XlaOp, token: XlaOp, handle, *, source_target_pairs) -> XlaOp:
    """Send ``operand`` over channel ``handle`` after ``token``; the new token."""
    token = _token("SendWithToken", token)
    return _send("SendWithToken", operand, token, handle, source_target_pairs)


@accepts_builder
def Send(operand: XlaOp, handle, *, source_target_pairs) -> XlaOp:
    """Send ``operand`` to the Recv of the same channel on each pair's target device."""
    return _send("Send", operand, None, handle, source_target_pairs)


def _recv(op_name: str, builder, token: XlaOp | None, shape, handle, source_target_pairs) -> XlaOp:
    """A recv; with a ``token`` operand its value is (data, token), else the data."""
    shape = _data_shape(op_name, shape)
    if not shape.is_array():
        raise ValueError(f"{op_name}: receives one array, got {shape}")
    attrs = _channel_attrs(op_name, handle, source_target_pairs)
    result = _with_token(shape)

    def emit(em, *token_value):
        token_value = _fresh_token(em, token_value)
        data, new_token = sh.create(
            "stablehlo.recv", [token_value], em.types(result), attrs()
        ).results
        return [data, new_token] if token is not None else data

    operands = [token] if token is not None else []
    value_shape = result if token is not None else shape
    return builder.add_op(op_name, value_shape, operands, emit, side_effect=True)


@accepts_builder
def RecvWithToken(token: XlaOp, shape: Shape, handle, *, source_target_pairs) -> XlaOp:
    """Receive an array of ``shape`` over channel ``handle`` after ``token``: (data, token).

    A device that is no pair's target receives zeros."""
    token = _token("RecvWithToken", token)
    return _recv("RecvWithToken", token.builder, token, shape, handle, source_target_pairs)


@accepts_builder
def Recv(shape: Shape, handle, *, source_target_pairs) -> XlaOp:
    """Receive an array of ``shape`` from the Send of the same channel (zeros if none)."""
    return _recv("Recv", resolve_builder("Recv"), None, shape, handle, source_target_pairs)


# -- custom calls -----------------------------------------------------------------------------


@accepts_builder
def CustomCall(
    call_target_name: str,
    operands: Sequence[XlaOp],
    shape: Shape,
    opaque: bytes | str = b"",
    has_side_effect: bool = False,
    api_version: int = 1,
) -> XlaOp:
    """Call the function registered as ``call_target_name`` on ``operands``; its
    result has ``shape`` (a tuple shape: several results). ``opaque`` is the
    target's ``backend_config``."""
    if not isinstance(call_target_name, str) or not call_target_name:
        raise ValueError(
            f"CustomCall: call_target_name must be a non-empty string, got {call_target_name!r}"
        )
    operands = list(operands)
    for i, x in enumerate(operands):
        array(f"CustomCall {call_target_name!r}", x, f"operand {i}")
    shape = _data_shape(f"CustomCall {call_target_name!r}", shape)
    config = opaque.decode() if isinstance(opaque, bytes) else str(opaque)

    def attrs() -> dict:
        return {
            "call_target_name": ir.StringAttr.get(call_target_name),
            "backend_config": ir.StringAttr.get(config),
            "has_side_effect": bool_attr(has_side_effect),
            "api_version": i32_attr(api_version),
        }

    builder = resolve_builder("CustomCall", operands)
    return single_op(
        "CustomCall",
        "stablehlo.custom_call",
        shape,
        operands,
        attrs,
        builder=builder,
        side_effect=has_side_effect,
    )
