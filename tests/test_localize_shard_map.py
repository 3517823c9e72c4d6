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
