"""JAX shard_map exports (Shardy and GSPMD forms) run per device, against JAX's own results.

JAX runs in a child process (it needs 4 CPU devices configured before its
backend starts); it exports the program and computes the expected results,
which XLA:CPU can do for everything but ragged all-to-all (there the seed's
worked example is the oracle).
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import xhlo
from xhlo.runtime.sharding import run_sharded

pytest.importorskip("jax")

EXPORT = """
import pickle, sys
import jax
jax.config.update("jax_num_cpu_devices", 4)
jax.config.update("jax_use_shardy_partitioner", sys.argv[1] == "shardy")
import jax.numpy as jnp
import numpy as np
from jax import export, lax
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)

def body(x, w):
    total = lax.psum(x, "x")
    gathered = lax.all_gather(x, "y", axis=1, tiled=True)
    swapped = lax.ppermute(x, "x", [(0, 1), (1, 0)])
    exchanged = lax.all_to_all(x, "y", 0, 1, tiled=True)
    biased = w + lax.axis_index("y").astype(jnp.float32)
    looped = lax.fori_loop(0, 3, lambda i, v: v * 2.0 + i, x)  # a func.call inside the body
    scattered = lax.psum_scatter(x, "y", scatter_dimension=1, tiled=True)
    return total * 2 + swapped, gathered, biased, exchanged, lax.pmax(x, ("x", "y")), looped, scattered

f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("x", "y"), P()),
            out_specs=(P("x", "y"), P("x", None), P(), P("x", "y"), P("x", "y"), P("x", "y"),
                       P("x", "y")),
            check_vma=False))
x = np.arange(32, dtype=np.float32).reshape(4, 8) - 7
w = np.array([1.0, -2.0, 0.5], np.float32)
args = (jax.device_put(x, NamedSharding(mesh, P("x", "y"))), jax.device_put(w, NamedSharding(mesh, P())))
exported = export.export(f)(*args)
expected = [np.asarray(r) for r in f(*args)]
pickle.dump({"artifact": exported.serialize(), "args": [x, w], "expected": expected}, open(sys.argv[2], "wb"))
"""

RAGGED = """
import pickle, sys
import jax
jax.config.update("jax_num_cpu_devices", 2)
import numpy as np
from jax import export, lax
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
f = jax.jit(jax.shard_map(lambda *a: lax.ragged_all_to_all(*a, axis_name="x"), mesh=mesh,
                          in_specs=(P("x"),) * 6, out_specs=P("x")))
args = [np.array([1, 2, 2, 3, 4, 0], np.float32), np.zeros(8, np.float32), np.array([0, 1, 0, 1], np.int32),
        np.array([1, 2, 1, 1], np.int32), np.array([0, 0, 1, 2], np.int32), np.array([1, 1, 2, 1], np.int32)]
put = lambda a: jax.device_put(a, NamedSharding(mesh, P("x")))
exported = export.export(f, disabled_checks=[export.DisabledSafetyCheck.custom_call("ragged_all_to_all")])(
    *[put(a) for a in args])
pickle.dump({"artifact": exported.serialize(), "args": args}, open(sys.argv[2], "wb"))
"""

# A mixture-of-experts token dispatch: every device routes each of its tokens to the
# device of its expert; ragged_all_to_all moves the rows, grouped by sender.
MOE = """
import pickle, sys
import jax
jax.config.update("jax_num_cpu_devices", 4)
jax.config.update("jax_use_shardy_partitioner", sys.argv[1] == "shardy")
import jax.numpy as jnp
import numpy as np
from jax import export, lax
from jax.sharding import NamedSharding, PartitionSpec as P

DEVICES, TOKENS, WIDTH, CAPACITY = 4, 6, 3, 24
mesh = jax.make_mesh((DEVICES,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))

def dispatch(tokens, destination):
    order = jnp.argsort(destination, stable=True)
    send_sizes = jnp.bincount(destination, length=DEVICES).astype(jnp.int32)
    input_offsets = (jnp.cumsum(send_sizes) - send_sizes).astype(jnp.int32)
    recv_sizes = lax.all_to_all(send_sizes, "x", 0, 0, tiled=True)
    my_offsets_per_sender = (jnp.cumsum(recv_sizes) - recv_sizes).astype(jnp.int32)
    output_offsets = lax.all_to_all(my_offsets_per_sender, "x", 0, 0, tiled=True)
    out = jnp.zeros((CAPACITY, WIDTH), tokens.dtype)
    received = lax.ragged_all_to_all(tokens[order], out, input_offsets, send_sizes,
                                      output_offsets, recv_sizes, axis_name="x")
    return received, recv_sizes

f = jax.jit(jax.shard_map(dispatch, mesh=mesh, in_specs=(P("x"), P("x")), out_specs=(P("x"), P("x"))))
rng = np.random.default_rng(7)
tokens = rng.standard_normal((DEVICES * TOKENS, WIDTH)).astype(np.float32)
destination = rng.integers(0, DEVICES, DEVICES * TOKENS).astype(np.int32)
put = lambda a: jax.device_put(a, NamedSharding(mesh, P("x")))
exported = export.export(f, disabled_checks=[export.DisabledSafetyCheck.custom_call("ragged_all_to_all")])(
    put(tokens), put(destination))
pickle.dump({"artifact": exported.serialize(), "args": [tokens, destination],
             "sizes": (DEVICES, TOKENS, CAPACITY)}, open(sys.argv[2], "wb"))
"""


def moe_oracle(tokens, destination, devices, per_device, capacity):
    """Device j receives, sender by sender, the sender's tokens bound for j, in order."""
    out = np.zeros((devices * capacity, tokens.shape[1]), tokens.dtype)
    counts = np.zeros((devices, devices), np.int32)
    for j in range(devices):
        rows = []
        for i in range(devices):
            mine = slice(i * per_device, (i + 1) * per_device)
            chosen = tokens[mine][destination[mine] == j]
            counts[j, i] = len(chosen)
            rows.append(chosen)
        block = np.concatenate(rows)
        out[j * capacity : j * capacity + len(block)] = block
    return out, counts.reshape(-1)


def jax_export(script: str, form: str, tmp_path) -> dict:
    (tmp_path / "export.py").write_text(textwrap.dedent(script))
    out = tmp_path / "export.pkl"
    done = subprocess.run(
        [sys.executable, str(tmp_path / "export.py"), form, str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with open(out, "rb") as f:
        return pickle.load(f)


@pytest.mark.parametrize("form", ["shardy", "gspmd"])
def test_shard_map_export_matches_jax(form, tmp_path):
    data = jax_export(EXPORT, form, tmp_path)
    exe = xhlo.compile(data["artifact"])
    assert (exe.num_replicas, exe.num_partitions) == (1, 4)
    assert [s.shape for s in exe.signature.inputs] == [(2, 4), (3,)]  # the program of one device
    results = run_sharded(exe, *data["args"])
    assert len(results) == len(data["expected"])
    for got, want, called in zip(results, data["expected"], exe(*data["args"])):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(called, want)  # exe(*global_arrays) shards like JAX


def test_ragged_all_to_all_export_runs_the_seed_example(tmp_path):
    """XLA:CPU cannot run ragged all-to-all; the per-device results are the seed's [1,3,0,0], [2,2,4,0]."""
    data = jax_export(RAGGED, "shardy", tmp_path)
    exe = xhlo.compile(data["artifact"])
    (result,) = run_sharded(exe, *data["args"])
    np.testing.assert_array_equal(result, [1, 3, 0, 0, 2, 2, 4, 0])


@pytest.mark.parametrize("form", ["shardy", "gspmd"])
def test_moe_token_dispatch_with_ragged_all_to_all(form, tmp_path):
    data = jax_export(MOE, form, tmp_path)
    exe = xhlo.compile(data["artifact"])
    received, recv_sizes = exe(*data["args"])
    expected, expected_sizes = moe_oracle(*data["args"], *data["sizes"])
    np.testing.assert_array_equal(recv_sizes, expected_sizes)
    np.testing.assert_array_equal(received, expected)


def test_run_sharded_needs_a_shard_map_program():
    exe = xhlo.compile(
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  return %x : tensor<2xf32>\n}"
    )
    with pytest.raises(ValueError, match="not compiled from a shard_map"):
        run_sharded(exe, np.zeros(2, np.float32))


POLYMORPHIC_EXPORT = """
import pickle, sys
import jax
jax.config.update("jax_num_cpu_devices", 4)
import jax.numpy as jnp
import numpy as np
from jax import export, lax
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
spec = jax.ShapeDtypeStruct(export.symbolic_shape("4*b"), np.float32, sharding=NamedSharding(mesh, P("x")))
sharded = jax.jit(lambda x: jnp.sin(x) * 2 + x.sum())
mapped = jax.jit(jax.shard_map(lambda x: lax.psum(x, "x"), mesh=mesh, in_specs=P("x"), out_specs=P("x")))
xs = [np.arange(n, dtype=np.float32) for n in (8, 12)]
pickle.dump({"sharded": export.export(sharded)(spec).serialize(), "mapped": export.export(mapped)(spec).serialize(),
             "args": xs, "expected": [np.asarray(sharded(x)) for x in xs]}, open(sys.argv[2], "wb"))
"""


def test_shape_polymorphic_shardy_exports(tmp_path):
    """A sharded jit with a symbolic dim, in Shardy form, is refined per shape (its sdy ops
    dropped first: they had crashed the refinement); a shard_map of one is a clear error."""
    data = jax_export(POLYMORPHIC_EXPORT, "shardy", tmp_path)
    exe = xhlo.compile(data["sharded"])
    for x, want in zip(data["args"], data["expected"]):
        np.testing.assert_allclose(exe(x), want, rtol=1e-6, atol=1e-5)  # sin and a sum of <= 12
    with pytest.raises(xhlo.CompilerError, match="shape-polymorphic shard_map in Shardy form is not supported"):
        xhlo.compile(data["mapped"])


def _gspmd_program(argument: str, body: str, result: str, results: str) -> str:
    return f"""
module attributes {{mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32}} {{
  func.func public @main(%arg0: {argument}) -> ({results}) {{
    %0 = stablehlo.custom_call @Sharding(%arg0) {{mhlo.sharding = "{{devices=[4]<=[4]}}"}} : ({argument}) -> {argument}
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {{mhlo.sharding = "{{manual}}"}} : ({argument}) -> {body}
    %2 = stablehlo.add %1, %1 : {body}
    %3 = stablehlo.custom_call @Sharding(%2) {{mhlo.sharding = "{{manual}}"}} : ({body}) -> {body}
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {{mhlo.sharding = "{{devices=[4]<=[4]}}"}} : ({body}) -> {argument}
    return {result} : {results}
  }}
}}"""


def test_gspmd_result_returned_twice_and_scalar_arguments():
    """A result returned twice (its boundary ops had been erased twice: a double free), and
    0-d arguments of exe(*global_arrays) (a shard had become shape (1,))."""
    twice = xhlo.compile(_gspmd_program("tensor<8xf32>", "tensor<2xf32>", "%4, %4", "tensor<8xf32>, tensor<8xf32>"))
    x = np.arange(8, dtype=np.float32)
    for got in twice(x):
        np.testing.assert_array_equal(got, 2 * x)
    scalar = xhlo.compile(_gspmd_program("tensor<f32>", "tensor<f32>", "%4", "tensor<f32>").replace(
        "{devices=[4]<=[4]}", "{replicated}"))
    np.testing.assert_array_equal(scalar(np.float32(2.5)), np.float32(5.0))
    # a global array of the wrong shape or dtype: one ValueError in global terms, not one per device
    with pytest.raises(ValueError, match=r"argument 0 of main: expected global shape \(8,\) \(shards of \(2,\) on 4"):
        twice(np.zeros(12, np.float32))
    with pytest.raises(ValueError, match="argument 0 of main: expected dtype float32, got int32"):
        twice(np.zeros(8, np.int32))


SHARD_MAP_IN_A_CALLEE = """
"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg4: tensor<8xf32>):
    %3 = "func.call"(%arg4) <{callee = @inner}> : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%3) : (tensor<8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "inner", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}> ({
    ^bb0(%arg1: tensor<2xf32>):
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %2 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%2) : (tensor<f32>) -> ()
      }) : (tensor<2xf32>) -> tensor<2xf32>
      "sdy.return"(%1) : (tensor<2xf32>) -> ()
    }) : (tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
"""


def test_shard_map_in_a_private_callee():
    """JAX keeps an inner jit (xhlo.jit's, or a user's) as a private function: its shard_map
    runs once the call takes its body (localizing the callee alone broke the call)."""
    exe = xhlo.compile(SHARD_MAP_IN_A_CALLEE)
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(exe(x), np.tile(x.reshape(4, 2).sum(0), 4))  # psum of the 4 shards


ARGUMENT_ENTERING_TWICE = """
module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<8xf32>) -> tensor<8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<2xf32>
    %2 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<8xf32>) -> tensor<8xf32>
    %3 = stablehlo.custom_call @SPMDFullToShardShape(%2) {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<2xf32>
    %4 = stablehlo.multiply %1, %3 : tensor<2xf32>
    %5 = "stablehlo.all_reduce"(%4) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<2xf32>) -> tensor<2xf32>
    %6 = stablehlo.custom_call @Sharding(%5) {mhlo.sharding = "{manual}"} : (tensor<2xf32>) -> tensor<2xf32>
    %7 = stablehlo.custom_call @SPMDShardToFullShape(%6) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<2xf32>) -> tensor<8xf32>
    return %7 : tensor<8xf32>
  }
}
"""


def test_gspmd_argument_entering_the_shard_map_twice():
    """``g(x, x)`` in GSPMD form: two identical Sharding/FullToShard chains on one argument
    (rejected as a partitioned program before) are one."""
    exe = xhlo.compile(ARGUMENT_ENTERING_TWICE)
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(exe(x), np.tile((x * x).reshape(4, 2).sum(0), 4))  # psum of x*x shards
