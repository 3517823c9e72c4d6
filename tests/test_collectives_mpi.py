"""Collectives with one device per MPI rank (``mpiexec -n N``), run as a separate CI step.

The same programs as the in-process tests, started as ``mpiexec -n N xhlo-run``;
plus what only MPI has: a rank that dies or hangs must end the job with an
error, not a hang.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import counted_loop_body
from tests.test_collectives import (
    CASE_ON_REPLICA,
    _random_ragged,
    groups_attr,
    module,
    ragged_loop_out_of_bounds_at_step_3,
    ragged_model,
    ragged_module,
    ragged_steps,
    region,
)

pytestmark = pytest.mark.mpi

pytest.importorskip("mpi4py")


def _mpiexec() -> str | None:
    local = Path(sys.executable).parent / "mpiexec"
    return str(local) if local.exists() else shutil.which("mpiexec")


MPIEXEC = _mpiexec()
if MPIEXEC is None:
    pytest.skip("no mpiexec (pip install mpich)", allow_module_level=True)

JOB_TIMEOUT = 240  # seconds: a hung job fails the test instead of the CI run


def mpirun(ranks: int, *command: str, cwd: Path, threads: str | None = None) -> subprocess.CompletedProcess:
    """``command`` on ``ranks`` ranks; ``threads``: XHLO_NUM_THREADS for them (None: unset)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "OMPI_", "XHLO_NUM_THREADS"))}
    if threads is not None:
        env["XHLO_NUM_THREADS"] = threads
    return subprocess.run(
        [MPIEXEC, "-n", str(ranks), *command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=JOB_TIMEOUT,
        check=False,
    )


def xhlo_run(ranks: int, program: str, inputs: dict, tmp_path: Path) -> dict:
    (tmp_path / "prog.mlir").write_text(program)
    np.savez(tmp_path / "in.npz", **inputs)
    done = mpirun(
        ranks,
        sys.executable,
        "-m",
        "xhlo.tools.run",
        "prog.mlir",
        "--inputs",
        "in.npz",
        "--outputs",
        "out.npz",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"PASS prog.mlir ({ranks} MPI ranks)" in done.stdout
    with np.load(tmp_path / "out.npz") as out:
        return {k: out[k] for k in out.files}


def test_every_collective_on_two_ranks(tmp_path):
    program = module(
        "(%x: tensor<4xf32>, %y: tensor<2x4xi32>) -> (tensor<4xf32>, tensor<8xf32>, tensor<4x2xi32>, "
        "tensor<2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<ui32>)",
        f"""  %0 = "stablehlo.all_reduce"(%x) {region("add", "f32")} {{replica_groups = {groups_attr([[0, 1]])}}}
      : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "stablehlo.all_gather"(%x) {{all_gather_dim = 0 : i64, replica_groups = {groups_attr([[1, 0]])}}}
      : (tensor<4xf32>) -> tensor<8xf32>
  %2 = "stablehlo.all_to_all"(%y) {{split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
      replica_groups = {groups_attr([[0, 1]])}}} : (tensor<2x4xi32>) -> tensor<4x2xi32>
  %3 = "stablehlo.reduce_scatter"(%x) {region("multiply", "f32")} {{scatter_dimension = 0 : i64,
      replica_groups = {groups_attr([[0, 1]])}}} : (tensor<4xf32>) -> tensor<2xf32>
  %4 = "stablehlo.collective_permute"(%x) {{source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}}
      : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "stablehlo.collective_broadcast"(%x) {{replica_groups = {groups_attr([[1, 0]])}}} : (tensor<4xf32>) -> tensor<4xf32>
  %6 = stablehlo.replica_id : tensor<ui32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<8xf32>, tensor<4x2xi32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<ui32>""",
        replicas=2,
    )
    x = [np.array([1, 2.5, 3, 4], np.float32), np.array([3, 5.25, -1, 2], np.float32)]
    y = [
        np.arange(1, 9, dtype=np.int32).reshape(2, 4),
        np.arange(9, 17, dtype=np.int32).reshape(2, 4),
    ]
    out = xhlo_run(
        2,
        program,
        {"arg0_dev0": x[0], "arg0_dev1": x[1], "arg1_dev0": y[0], "arg1_dev1": y[1]},
        tmp_path,
    )
    for d in range(2):
        np.testing.assert_array_equal(out[f"out0_dev{d}"], x[0] + x[1])
        np.testing.assert_array_equal(out[f"out1_dev{d}"], np.concatenate([x[1], x[0]]))
        np.testing.assert_array_equal(
            out[f"out2_dev{d}"],
            np.concatenate([y[0][:, 2 * d : 2 * d + 2], y[1][:, 2 * d : 2 * d + 2]]),
        )
        np.testing.assert_array_equal(out[f"out3_dev{d}"], (x[0] * x[1])[2 * d : 2 * d + 2])
        np.testing.assert_array_equal(out[f"out5_dev{d}"], x[1])
        assert int(out[f"out6_dev{d}"]) == d
    np.testing.assert_array_equal(out["out4_dev0"], np.zeros(4))
    np.testing.assert_array_equal(out["out4_dev1"], x[0])


def test_ragged_all_to_all_seed_example(tmp_path):
    program = ragged_module("tensor<3xf32>", "tensor<4xf32>", "tensor<2xi64>", [[0, 1]])
    v = lambda *a: np.array(a, np.int64)
    f = lambda *a: np.array(a, np.float32)
    per_device = [
        (f(1, 2, 2), f(0, 0, 0, 0), v(0, 1), v(1, 2), v(0, 0), v(1, 1)),
        (f(3, 4, 0), f(0, 0, 0, 0), v(0, 1), v(1, 1), v(1, 2), v(2, 1)),
    ]
    out = xhlo_run(
        2,
        program,
        {f"arg{i}_dev{d}": a for d, args in enumerate(per_device) for i, a in enumerate(args)},
        tmp_path,
    )
    np.testing.assert_array_equal(out["out0_dev0"], [1, 3, 0, 0])
    np.testing.assert_array_equal(out["out0_dev1"], [2, 2, 4, 0])


def _run_ragged(tmp_path, group, inputs, outputs, io, ss, oo, meta: str) -> dict:
    """A ragged all-to-all over ``group`` (all devices, any order), one rank each."""
    rows_in, rows_out = len(inputs[group[0]]), len(outputs[group[0]])
    row = "x".join(map(str, inputs[group[0]].shape[1:]))
    shape = tuple(int(n) for n in meta.split("x")[:-1])
    program = ragged_module(
        f"tensor<{rows_in}x{row}xf32>", f"tensor<{rows_out}x{row}xf32>", f"tensor<{meta}>",
        [group], replicas=len(group),
    )
    recv = {d: np.zeros_like(ss[d]) for d in group}  # what the spec's recv_sizes say
    for position, receiver in enumerate(group):
        for j, sender in enumerate(group):
            recv[receiver][j] = ss[sender][position]
    per_device = {d: (inputs[d], outputs[d], io[d], ss[d], oo[d], recv[d]) for d in group}
    arrays = {
        f"arg{i}_dev{d}": a.reshape(shape) if i >= 2 else a
        for d, args in per_device.items()
        for i, a in enumerate(args)
    }
    return xhlo_run(len(group), program, arrays, tmp_path)


@pytest.mark.parametrize(
    "updates,meta,ranks",
    [(1, "4xi64", 4), (2, "4x2xi32", 4), (2, "8xi64", 4), (160, "2x160xi64", 2)],
    ids=["one-update", "two-updates-i32", "flat-i64", "metadata-beyond-the-agreement"],
)
def test_ragged_all_to_all_matches_the_model(tmp_path, updates, meta, ranks):
    """Random exchanges against the receiver-side model; 2x160 i64 sizes do not fit in the
    agreement exchange and take an all-to-all of their own."""
    group = [2, 0, 3, 1][:ranks] if ranks == 4 else [1, 0]
    itype = np.int32 if meta.endswith("i32") else np.int64
    inputs, outputs, io, ss, oo, _ = _random_ragged(group, 6, 24 * updates, updates, (3,), np.float32, itype)
    out = _run_ragged(tmp_path, group, inputs, outputs, io, ss, oo, meta)
    for d, expected in ragged_model(group, inputs, outputs, io, ss, oo).items():
        np.testing.assert_array_equal(out[f"out0_dev{d}"], expected)


def test_ragged_all_to_all_overlapping_updates(tmp_path):
    """Two senders write rows 1-2 of the same receiver: the later sender's rows win, as in
    process (the receive is not into the result directly then)."""
    group = [0, 1]
    inputs = {d: np.full((4, 2), d + 1, np.float32) for d in group}
    outputs = {d: np.zeros((4, 2), np.float32) for d in group}
    i64 = lambda *values: np.array(values, np.int64).reshape(2, 1)
    io = {0: i64(0, 0), 1: i64(0, 0)}
    ss = {0: i64(2, 2), 1: i64(2, 2)}
    oo = {0: i64(0, 0), 1: i64(1, 1)}
    out = _run_ragged(tmp_path, group, inputs, outputs, io, ss, oo, "2x1xi64")
    for d, expected in ragged_model(group, inputs, outputs, io, ss, oo).items():
        np.testing.assert_array_equal(out[f"out0_dev{d}"], expected)
    np.testing.assert_array_equal(out["out0_dev0"][:, 0], [1, 2, 2, 0])


def test_four_ranks_match_the_in_process_run(tmp_path):
    """Partitions and groups across 2 replicas x 2 partitions; MPI and threads must agree."""
    import xhlo

    program = module(
        "(%x: tensor<4x2xi32>) -> (tensor<4x2xi32>, tensor<4x2xi32>, tensor<4x2xi32>)",
        f"""  %0 = "stablehlo.all_reduce"(%x) {region("add", "i32")} {{replica_groups = {groups_attr([[0, 3], [2, 1]])},
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids}}
      : (tensor<4x2xi32>) -> tensor<4x2xi32>
  %1 = "stablehlo.all_to_all"(%x) {{split_dimension = 0 : i64, concat_dimension = 1 : i64, split_count = 2 : i64,
      replica_groups = {groups_attr([[1, 0]])}, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>}}
      : (tensor<4x2xi32>) -> tensor<2x4xi32>
  %2 = stablehlo.reshape %1 : (tensor<2x4xi32>) -> tensor<4x2xi32>
  %3 = "stablehlo.collective_permute"(%x) {{source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}}
      : (tensor<4x2xi32>) -> tensor<4x2xi32>
  return %0, %2, %3 : tensor<4x2xi32>, tensor<4x2xi32>, tensor<4x2xi32>""",
        replicas=2,
        partitions=2,
    )
    xs = [np.arange(8, dtype=np.int32).reshape(4, 2) * (d + 1) + d for d in range(4)]
    out = xhlo_run(4, program, {f"arg0_dev{d}": x for d, x in enumerate(xs)}, tmp_path)
    expected = xhlo.compile(program).run_replicated([(x,) for x in xs])
    for d in range(4):
        for j in range(3):
            np.testing.assert_array_equal(out[f"out{j}_dev{d}"], expected[d][j])
    np.testing.assert_array_equal(out["out0_dev0"], xs[0] + xs[3])
    np.testing.assert_array_equal(out["out2_dev1"], xs[3])  # replicas swap within partition 1


def test_collective_reduce_and_uneven_groups_on_four_ranks(tmp_path):
    """collective_reduce and an all_reduce over groups of 3 and 1 ranks, against numpy."""
    program = module(
        "(%x: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>)",
        f"""  %0 = "stablehlo.collective_reduce"(%x) {region("add", "i32")} {{replica_groups = {groups_attr([[3, 0], [1, 2]])}}}
      : (tensor<3xi32>) -> tensor<3xi32>
  %1 = "stablehlo.all_reduce"(%x) {region("maximum", "i32")} {{replica_groups = {groups_attr([[0, 2, 3], [1, -1, -1]])}}}
      : (tensor<3xi32>) -> tensor<3xi32>
  return %0, %1 : tensor<3xi32>, tensor<3xi32>""",
        replicas=4,
    )
    xs = [np.array([5, -7, 11], np.int32) * (d + 1) % 13 for d in range(4)]
    out = xhlo_run(4, program, {f"arg0_dev{d}": x for d, x in enumerate(xs)}, tmp_path)
    reduced = {3: xs[3] + xs[0], 1: xs[1] + xs[2]}
    for d in range(4):
        np.testing.assert_array_equal(out[f"out0_dev{d}"], reduced.get(d, np.zeros(3, np.int32)))
        want = xs[1] if d == 1 else np.maximum(np.maximum(xs[0], xs[2]), xs[3])
        np.testing.assert_array_equal(out[f"out1_dev{d}"], want)


@pytest.mark.parametrize("elem", ["bf16", "i32", "i64"])
def test_collectives_of_every_element_type_on_two_ranks(tmp_path, elem):
    """The byte-moving transport and the compiled folds for 16- and 64-bit types, against numpy."""
    import ml_dtypes

    dtype = {"bf16": ml_dtypes.bfloat16, "i32": np.int32, "i64": np.int64}[elem]
    t = f"tensor<4x{elem}>"
    half = f"tensor<2x{elem}>"
    program = module(
        f"(%x: {t}) -> ({t}, tensor<8x{elem}>, {t}, {half}, {t}, {t})",
        f"""  %0 = "stablehlo.all_reduce"(%x) {region("add", elem)} {{replica_groups = {groups_attr([[0, 1]])}}}
      : ({t}) -> {t}
  %1 = "stablehlo.all_gather"(%x) {{all_gather_dim = 0 : i64, replica_groups = {groups_attr([[0, 1]])}}}
      : ({t}) -> tensor<8x{elem}>
  %2 = "stablehlo.all_to_all"(%x) {{split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
      replica_groups = {groups_attr([[0, 1]])}}} : ({t}) -> {t}
  %3 = "stablehlo.reduce_scatter"(%x) {region("maximum", elem)} {{scatter_dimension = 0 : i64,
      replica_groups = {groups_attr([[0, 1]])}}} : ({t}) -> {half}
  %4 = "stablehlo.collective_permute"(%x) {{source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}}
      : ({t}) -> {t}
  %5 = "stablehlo.collective_broadcast"(%x) {{replica_groups = {groups_attr([[1, 0]])}}} : ({t}) -> {t}
  return %0, %1, %2, %3, %4, %5 : {t}, tensor<8x{elem}>, {t}, {half}, {t}, {t}""",
        replicas=2,
    )
    xs = [np.array([1, -2, 3, 40], dtype), np.array([5, 6, -7, 8], dtype)]
    out = xhlo_run(2, program, {f"arg0_dev{d}": x for d, x in enumerate(xs)}, tmp_path)
    got = {k: v.view(dtype) for k, v in out.items()}  # npz keeps bf16 as raw 2-byte values
    for d in range(2):
        np.testing.assert_array_equal(got[f"out0_dev{d}"], xs[0] + xs[1])
        np.testing.assert_array_equal(got[f"out1_dev{d}"], np.concatenate(xs))
        np.testing.assert_array_equal(
            got[f"out2_dev{d}"], np.concatenate([x[2 * d : 2 * d + 2] for x in xs])
        )
        np.testing.assert_array_equal(got[f"out3_dev{d}"], np.maximum(*xs)[2 * d : 2 * d + 2])
        np.testing.assert_array_equal(got[f"out5_dev{d}"], xs[1])
    np.testing.assert_array_equal(got["out4_dev0"], np.zeros(4, dtype))
    np.testing.assert_array_equal(got["out4_dev1"], xs[0])


@pytest.mark.parametrize("elem", ["bf16", "i32"])
def test_large_all_reduce_on_two_ranks(tmp_path, elem):
    """1 MiB operands take the in-place path (all-to-all, the compiled fold kernel, an
    in-place all-gather); subtract checks the group order [1, 0], two operands the variadic form."""
    import ml_dtypes

    dtype = {"bf16": ml_dtypes.bfloat16, "i32": np.int32}[elem]
    rows = {"bf16": 2048, "i32": 1024}[elem]
    t = f"tensor<{rows}x256x{elem}>"
    program = module(
        f"(%x: {t}, %y: {t}) -> ({t}, {t})",
        f"""  %0:2 = "stablehlo.all_reduce"(%x, %y) {region("subtract", elem)} {{replica_groups = {groups_attr([[1, 0]])}}}
      : ({t}, {t}) -> ({t}, {t})
  return %0#0, %0#1 : {t}, {t}""",
        replicas=2,
    )
    rng = np.random.default_rng(7)
    xs = [rng.integers(-8, 9, (rows, 256)).astype(dtype) for _ in range(2)]
    ys = [rng.integers(-8, 9, (rows, 256)).astype(dtype) for _ in range(2)]
    inputs = {f"arg0_dev{d}": xs[d] for d in range(2)} | {f"arg1_dev{d}": ys[d] for d in range(2)}
    out = xhlo_run(2, program, inputs, tmp_path)
    for d in range(2):
        np.testing.assert_array_equal(out[f"out0_dev{d}"].view(dtype), (xs[1] - xs[0]).astype(dtype))
        np.testing.assert_array_equal(out[f"out1_dev{d}"].view(dtype), (ys[1] - ys[0]).astype(dtype))


def test_ops_after_a_large_all_reduce_on_two_ranks(tmp_path):
    """pmean and an add after a 1 MiB all_reduce run in its fold kernel, between the
    all-to-all and the all-gather of the MPI path."""
    t = "tensor<512x512xf32>"
    program = module(
        f"(%x: {t}) -> {t}",
        f"""  %0 = "stablehlo.all_reduce"(%x) {region("add", "f32")} {{replica_groups = {groups_attr([[0, 1]])}}}
      : ({t}) -> {t}
  %h = stablehlo.constant dense<0.5> : {t}
  %1 = stablehlo.multiply %0, %h : {t}
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> {t}
  %2 = stablehlo.add %b, %1 : {t}
  return %2 : {t}""",
        replicas=2,
    )
    rng = np.random.default_rng(3)
    xs = [rng.integers(-8, 9, (512, 512)).astype(np.float32) for _ in range(2)]
    out = xhlo_run(2, program, {f"arg0_dev{d}": xs[d] for d in range(2)}, tmp_path)
    for d in range(2):
        np.testing.assert_array_equal(out[f"out0_dev{d}"], 1 + (xs[0] + xs[1]) * np.float32(0.5))


SUM_PROGRAM = module(
    "(%x: tensor<4xf32>) -> tensor<4xf32>",
    f"""  %0 = "stablehlo.all_reduce"(%x) {region("add", "f32")} {{replica_groups = {groups_attr([[0, 1]])}}}
      : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>""",
    replicas=2,
)

RUN_TWICE = """
import numpy as np
import xhlo
from mpi4py import MPI
from xhlo.runtime.mpi import run_on_rank

exe = xhlo.compile(open("prog.mlir").read())
rank = MPI.COMM_WORLD.Get_rank()
transports = []
for run in range(5):
    (out,) = run_on_rank(exe, [np.full(4, rank + 1 + 10 * run, np.float32)])
    assert (out == 3 + 20 * run).all(), out
    transports.append(exe._runtime.mpi_transport)
assert all(t is transports[0] for t in transports)
# the all-reduce's first call enables its native path, which later runs keep
# (a peer late by more than the native spins sends one more call through Python)
assert exe._runtime.python_calls <= 2, exe._runtime.python_calls
print("OK", rank)
"""


def test_a_program_run_again_keeps_its_transport_and_native_path(tmp_path):
    """Later runs on a rank reuse the communicators of the first and its call sites'
    native path, and still give the right values (each run all-reduces its own inputs)."""
    (tmp_path / "prog.mlir").write_text(SUM_PROGRAM)
    (tmp_path / "twice.py").write_text(RUN_TWICE)
    done = mpirun(2, sys.executable, "twice.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("OK") == 2


THREADS_SCRIPT = """
import os
import numpy as np
import xhlo
from xhlo.runtime import parallel
from xhlo.runtime.mpi import load_mpi, run_on_rank

rank = load_mpi().COMM_WORLD.Get_rank()
before = parallel.get_num_threads()
run_on_rank(xhlo.compile(open("prog.mlir").read()), [np.ones(4, np.float32)])
counts = (before, parallel.get_num_threads(), len(os.sched_getaffinity(0)))
open(f"threads{rank}.txt", "w").write(" ".join(map(str, counts)))
"""


@pytest.mark.parametrize("requested", [None, "3"], ids=["default", "XHLO_NUM_THREADS=3"])
def test_ranks_on_one_node_split_its_cores(tmp_path, requested):
    """Two ranks on the same cores take half of them each for their parallel loops,
    unless XHLO_NUM_THREADS chose a count."""
    (tmp_path / "prog.mlir").write_text(SUM_PROGRAM)
    (tmp_path / "threads.py").write_text(THREADS_SCRIPT)
    done = mpirun(2, sys.executable, "threads.py", cwd=tmp_path, threads=requested)
    assert done.returncode == 0, done.stdout + done.stderr
    for rank in range(2):
        before, after, cores = map(int, (tmp_path / f"threads{rank}.txt").read_text().split())
        if requested:
            assert (before, after) == (3, 3)
        else:
            assert (before, after) == (cores, max(1, cores // 2))


def test_send_recv(tmp_path):
    program = module(
        "(%x: tensor<3xi32>) -> tensor<3xi32>",
        """  %t0 = stablehlo.after_all : !stablehlo.token
  %t1 = "stablehlo.send"(%x, %t0) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>,
      is_host_transfer = false, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>}
      : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token
  %r:2 = "stablehlo.recv"(%t1) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>,
      is_host_transfer = false, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>}
      : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)
  return %r#0 : tensor<3xi32>""",
        replicas=2,
    )
    out = xhlo_run(
        2,
        program,
        {"arg0_dev0": np.array([1, 2, 3], np.int32), "arg0_dev1": np.array([4, 5, 6], np.int32)},
        tmp_path,
    )
    np.testing.assert_array_equal(out["out0_dev0"], [4, 5, 6])
    np.testing.assert_array_equal(out["out0_dev1"], [0, 0, 0])


# Device 0 all-gathers 16 bytes, which travel with the agreement record; device 1 all-gathers
# 8 KiB, which would follow it: the record exchange alone must report the mismatch.
SIZE_ON_REPLICA = module(
    "(%x: tensor<4xf32>) -> tensor<4xf32>",
    f"""  %id = stablehlo.replica_id : tensor<ui32>
  %i = stablehlo.convert %id : (tensor<ui32>) -> tensor<i32>
  %r = "stablehlo.case"(%i) ({{
    %0 = "stablehlo.all_gather"(%x) {{all_gather_dim = 0 : i64, replica_groups = {groups_attr([[0, 1]])}}}
        : (tensor<4xf32>) -> tensor<8xf32>
    %1 = stablehlo.slice %0 [0:4] : (tensor<8xf32>) -> tensor<4xf32>
    stablehlo.return %1 : tensor<4xf32>
  }}, {{
    %w = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<4xf32>) -> tensor<512x4xf32>
    %0 = "stablehlo.all_gather"(%w) {{all_gather_dim = 0 : i64, replica_groups = {groups_attr([[0, 1]])}}}
        : (tensor<512x4xf32>) -> tensor<1024x4xf32>
    %1 = stablehlo.slice %0 [0:1, 0:4] : (tensor<1024x4xf32>) -> tensor<1x4xf32>
    %2 = stablehlo.reshape %1 : (tensor<1x4xf32>) -> tensor<4xf32>
    stablehlo.return %2 : tensor<4xf32>
  }}) : (tensor<i32>) -> tensor<4xf32>
  return %r : tensor<4xf32>""",
    replicas=2,
)


@pytest.mark.parametrize(
    "program,ops",
    [(CASE_ON_REPLICA, ("stablehlo.all_reduce", "stablehlo.all_gather")),
     (SIZE_ON_REPLICA, ("tensor<4xf32>", "tensor<512x4xf32>"))],
    ids=["different-ops", "small-and-large"],
)
def test_mismatched_collectives_end_the_job_with_an_error(tmp_path, program, ops):
    (tmp_path / "prog.mlir").write_text(program)
    np.savez(tmp_path / "in.npz", arg0=np.ones(4, np.float32))
    done = mpirun(
        2, sys.executable, "-m", "xhlo.tools.run", "prog.mlir", "--inputs", "in.npz", cwd=tmp_path
    )
    assert done.returncode != 0
    assert "the devices run different collectives" in done.stderr
    assert all(op in done.stderr for op in ops), done.stderr


RANK_SCRIPT = """
import os, sys, time
import numpy as np
import xhlo
from xhlo.runtime.mpi import load_mpi, run_on_rank

rank = load_mpi().COMM_WORLD.Get_rank()
exe = xhlo.compile(open("prog.mlir").read(), collective_timeout=float(sys.argv[2]))
if rank == 1 and sys.argv[1] == "die":
    os._exit(3)
x = np.ones(4, np.float32)
if rank == 1 and sys.argv[1] == "late":
    time.sleep(60)
print(rank, run_on_rank(exe, [x])[0], flush=True)
"""


@pytest.mark.parametrize("fault", ["die", "late"])
def test_a_lost_or_stuck_rank_ends_the_job(tmp_path, fault):
    sum_program = module(
        "(%x: tensor<4xf32>) -> tensor<4xf32>",
        f"""  %0 = "stablehlo.all_reduce"(%x) {region("add", "f32")} {{replica_groups = {groups_attr([])}}}
      : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>""",
        replicas=2,
    )
    (tmp_path / "prog.mlir").write_text(sum_program)
    (tmp_path / "rank.py").write_text(textwrap.dedent(RANK_SCRIPT))
    start = time.monotonic()
    done = mpirun(2, sys.executable, "rank.py", fault, "3", cwd=tmp_path)
    assert done.returncode != 0, done.stdout + done.stderr
    assert time.monotonic() - start < 50  # the late rank sleeps 60 s: the timeout ended the job
    if fault == "late":
        assert (
            "device 0 (MPI rank 0) failed" in done.stderr and "timed out after 3 s" in done.stderr
        )


def test_ranks_in_different_groups_time_out(tmp_path):
    """Replica 0 gathers over {0, 1}, replica 1 over {1} alone: rank 0 waits in vain."""
    gather = """    %{n} = "stablehlo.all_gather"(%x) {{all_gather_dim = 0 : i64, replica_groups = {groups}}}
        : (tensor<2xf32>) -> tensor<{size}xf32>
    %s{n} = stablehlo.slice %{n} [0:2] : (tensor<{size}xf32>) -> tensor<2xf32>
    stablehlo.return %s{n} : tensor<2xf32>"""
    program = module(
        "(%x: tensor<2xf32>) -> tensor<2xf32>",
        f"""  %id = stablehlo.replica_id : tensor<ui32>
  %i = stablehlo.convert %id : (tensor<ui32>) -> tensor<i32>
  %r = "stablehlo.case"(%i) ({{
{gather.format(n=0, groups=groups_attr([[0, 1]]), size=4)}
  }}, {{
{gather.format(n=1, groups=groups_attr([[0], [1]]), size=2)}
  }}) : (tensor<i32>) -> tensor<2xf32>
  return %r : tensor<2xf32>""",
        replicas=2,
    )
    (tmp_path / "prog.mlir").write_text(program)
    np.savez(tmp_path / "in.npz", arg0=np.ones(2, np.float32))
    start = time.monotonic()
    done = mpirun(
        2,
        sys.executable,
        "-m",
        "xhlo.tools.run",
        "prog.mlir",
        "--inputs",
        "in.npz",
        "--timeout",
        "3",
        cwd=tmp_path,
    )
    assert done.returncode != 0
    assert time.monotonic() - start < 60
    assert "device 0 (MPI rank 0) failed" in done.stderr
    assert "stablehlo.all_gather at" in done.stderr and "timed out after 3 s" in done.stderr


STEPS = 8


def _loop(body: str, carried: str = "tensor<4xf32>", replicas: int = 2) -> str:
    """``STEPS`` iterations of ``body`` (``%v`` -> ``%y``; ``%i``: the step, ``%c0``: 0)."""
    return module(f"(%x: {carried}) -> {carried}", counted_loop_body(carried, STEPS, body), replicas=replicas)


def gather_scatter_broadcast(n: int, pairs: int = 1) -> str:
    """all_gather (of ``%v``, and of a slice at an offset), all_to_all and
    collective_broadcast (root: the pair's second device) of ``n`` floats, each step,
    in device pairs (0, 1), (2, 3), ..."""
    t, t2 = f"tensor<{n}xf32>", f"tensor<{2 * n}xf32>"
    groups = groups_attr([[2 * p, 2 * p + 1] for p in range(pairs)])
    roots_first = groups_attr([[2 * p + 1, 2 * p] for p in range(pairs)])
    return _loop(
        f"""      %g = "stablehlo.all_gather"(%v) {{all_gather_dim = 0 : i64, replica_groups = {groups}}}
          : ({t}) -> {t2}
      %g0 = stablehlo.slice %g [0:{n}] : ({t2}) -> {t}
      %g1 = stablehlo.slice %g [{n}:{2 * n}] : ({t2}) -> {t}
      %g1g = "stablehlo.all_gather"(%g1) {{all_gather_dim = 0 : i64, replica_groups = {groups}}}
          : ({t}) -> {t2}
      %g1_again = stablehlo.slice %g1g [{n}:{2 * n}] : ({t2}) -> {t}
      %twice = stablehlo.add %g0, %g0 : {t}
      %h = stablehlo.concatenate %v, %twice, dim = 0 : ({t}, {t}) -> {t2}
      %a = "stablehlo.all_to_all"(%h) {{split_dimension = 0 : i64, concat_dimension = 0 : i64,
          split_count = 2 : i64, replica_groups = {groups}}} : ({t2}) -> {t2}
      %b = "stablehlo.collective_broadcast"(%a) {{replica_groups = {roots_first}}}
          : ({t2}) -> {t2}
      %a0 = stablehlo.slice %a [0:{n}] : ({t2}) -> {t}
      %b1 = stablehlo.slice %b [{n}:{2 * n}] : ({t2}) -> {t}
      %s = stablehlo.add %a0, %b1 : {t}
      %y = stablehlo.subtract %s, %g1_again : {t}""",
        carried=t,
        replicas=2 * pairs,
    )


def _gather_scatter_broadcast_oracle(xs: list[np.ndarray]) -> list[np.ndarray]:
    """The program's result per device, pair by pair."""
    n, out = len(xs[0]), []
    for pair in range(0, len(xs), 2):
        x = xs[pair : pair + 2]
        for _ in range(STEPS):
            g = np.concatenate(x)
            h = [np.concatenate([v, g[:n] + g[:n]]) for v in x]
            a = [np.concatenate([h[0][n * r : n * r + n], h[1][n * r : n * r + n]]) for r in range(2)]
            x = [a[r][:n] + a[1][n:] - g[n:] for r in range(2)]
        out += x
    return out


LOOP_SCRIPT = """
import sys
import numpy as np
import xhlo
from xhlo.runtime import mpi_fast
from xhlo.runtime.mpi import load_mpi, run_on_rank

mpi_fast.SPINS = int(sys.argv[1])
rank = load_mpi().COMM_WORLD.Get_rank()
exe = xhlo.compile(open("prog.mlir").read())
inputs = np.load("in.npz")
mine = sum(name.endswith(f"_dev{rank}") for name in inputs.files)
(out,) = run_on_rank(exe, [inputs[f"arg{i}_dev{rank}"] for i in range(mine)])
np.save(f"out{rank}.npy", out)
np.save(f"calls{rank}.npy", exe._runtime.python_calls)
"""


def _run_on_ranks(tmp_path, program: str, args: list[tuple], expected: list, spins: int) -> list[int]:
    """Run ``program`` on one MPI rank per device (``args``: each device's arguments)
    with ``mpi_fast.SPINS = spins``, check its results against ``expected``; the runtime
    calls that entered Python, per rank."""
    if len(args) > (os.cpu_count() or 1):
        # Ranks sharing cores wait whole scheduler slices for a descheduled peer: with
        # 10x the spins such a wait stays native, as it does on a core of its own.
        spins *= 10
    (tmp_path / "prog.mlir").write_text(program)
    (tmp_path / "loop.py").write_text(LOOP_SCRIPT)
    np.savez(tmp_path / "in.npz", **{f"arg{i}_dev{d}": a for d, row in enumerate(args) for i, a in enumerate(row)})
    done = mpirun(len(args), sys.executable, "loop.py", str(spins), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for rank, want in enumerate(expected):
        np.testing.assert_array_equal(np.load(tmp_path / f"out{rank}.npy"), want)
    return [int(np.load(tmp_path / f"calls{rank}.npy")) for rank in range(len(args))]


def _run_loop(tmp_path, n: int, ranks: int, spins: int, program=None, oracle=None) -> list[int]:
    """Run ``program`` (``gather_scatter_broadcast``) of ``n`` random floats a device on
    ``ranks`` MPI ranks against ``oracle`` (its oracle); the Python calls per rank."""
    rng = np.random.default_rng(5)
    xs = [rng.integers(-4, 5, n).astype(np.float32) for _ in range(ranks)]
    program = program or gather_scatter_broadcast(n, ranks // 2)
    expected = (oracle or _gather_scatter_broadcast_oracle)(xs)
    return _run_on_ranks(tmp_path, program, [(x,) for x in xs], expected, spins)


def _first_calls_only(n: int) -> int:
    """Python calls when the native path runs every later call: each of the 4 sites' first
    call, and every call of the 8 KiB broadcast (only inline broadcasts run natively)."""
    return 4 if n == 4 else 3 + STEPS


@pytest.mark.parametrize("spins", [100_000, 0], ids=["native", "python-resumes"])
@pytest.mark.parametrize("n", [4, 2048], ids=["inline", "direct"])
def test_repeated_collectives_run_natively(tmp_path, spins, n):
    """After each call site's first call, later steps run without Python (mpi_fast) and
    still move the current step's data: 16-byte operands travel with the agreement
    record; 8 KiB all_gather and all_to_all operands follow it buffer to buffer. With
    no spins every native exchange is left pending and Python finishes it (the path a
    late peer takes)."""
    calls = _run_loop(tmp_path, n, 2, spins)
    if spins:  # +2: a peer late by more than the spins
        assert all(_first_calls_only(n) <= c <= _first_calls_only(n) + 2 for c in calls), calls
    else:
        assert calls == [4 * STEPS] * 2, calls


@pytest.mark.parametrize("n", [4, 2048], ids=["inline", "direct"])
def test_repeated_collectives_run_natively_in_pairs_of_four_ranks(tmp_path, n):
    """Group communicators other than the world's, natively."""
    calls = _run_loop(tmp_path, n, 4, 100_000)
    # of 4 sites x 8 steps; four ranks share two cores, so peers are late more often
    assert all(c <= _first_calls_only(n) + STEPS // 2 for c in calls), calls


def shift_and_add(n: int, ranks: int) -> str:
    """Each step adds to ``%v`` its left neighbour's ``%v`` (collective_permute 0 -> 1 ->
    ... -> ranks-1: device 0 receives nothing, so zeros; the last device sends nothing)."""
    t = f"tensor<{n}xf32>"
    pairs = ", ".join(f"[{d}, {d + 1}]" for d in range(ranks - 1))
    return _loop(
        f"""      %p = "stablehlo.collective_permute"(%v) {{
          source_target_pairs = dense<[{pairs}]> : tensor<{ranks - 1}x2xi64>}} : ({t}) -> {t}
      %y = stablehlo.add %v, %p : {t}""",
        carried=t,
        replicas=ranks,
    )


def _shift_and_add_oracle(xs: list[np.ndarray]) -> list[np.ndarray]:
    xs = [x.astype(np.float64) for x in xs]
    for _ in range(STEPS):
        xs = [x + (xs[d - 1] if d else 0.0) for d, x in enumerate(xs)]
    return [x.astype(np.float32) for x in xs]


@pytest.mark.parametrize("spins", [100_000, 0], ids=["native", "python-resumes"])
@pytest.mark.parametrize("n", [4, 2048], ids=["inline", "direct"])
@pytest.mark.parametrize("ranks", [2, 4])
def test_repeated_permutes_run_natively(tmp_path, spins, n, ranks):
    """A collective_permute's later calls run natively: 16-byte operands in the agreement
    exchange, 8 KiB ones as a send and a receive after it; the device without a source
    gets zeros, the one without a target sends nothing."""
    calls = _run_loop(tmp_path, n, ranks, spins, shift_and_add(n, ranks), _shift_and_add_oracle)
    if spins:  # the first call, and a few for peers late by more than the spins
        assert all(1 <= c <= 1 + STEPS // 2 for c in calls), calls
    else:
        assert calls == [STEPS] * ranks, calls


@pytest.mark.parametrize("spins", [100_000, 0], ids=["native", "python-resumes"])
@pytest.mark.parametrize("ranks,meta", [(2, "2xi64"), (4, "4xi32")])
@pytest.mark.parametrize("layout", ["apart", "overlapping", "covering", "overlapping-all-rows"])
def test_repeated_ragged_all_to_all_runs_natively(tmp_path, spins, ranks, meta, layout):
    """A ragged all-to-all's later calls run natively (one MPI_Ialltoallv, rows straight
    from the input into the result) and match the model step after step; received rows
    that overlap go back to Python, which applies them in sender order; rows that cover
    the whole output leave nothing of the output operand to copy."""
    calls = _run_on_ranks(tmp_path, *ragged_steps(ranks, meta, layout, STEPS), spins)
    if spins and not layout.startswith("overlapping"):
        assert all(1 <= c <= 1 + STEPS // 2 for c in calls), calls
    else:  # each call ends in Python: pending exchanges, or overlapping rows to order
        assert calls == [STEPS] * ranks, calls


def test_ragged_rows_out_of_bounds_on_the_native_path_are_reported(tmp_path):
    """Step 3 sends more rows than the input has, after the native path took over: the
    native code hands the call to Python, which names the op and the rows."""
    program = ragged_loop_out_of_bounds_at_step_3(4, 2, "2xi64", STEPS)
    (tmp_path / "prog.mlir").write_text(program)
    two = np.array([2, 2], np.int64)
    arrays = {
        f"arg{i}_dev{d}": a
        for d in range(2)
        for i, a in enumerate((np.array([0, 2]), two, np.full(2, 2 * d), two, np.ones((4, 2), np.float32)))
    }
    np.savez(tmp_path / "in.npz", **arrays)
    done = mpirun(
        2, sys.executable, "-m", "xhlo.tools.run", "prog.mlir", "--inputs", "in.npz", cwd=tmp_path
    )
    assert done.returncode != 0
    assert "ragged_all_to_all" in done.stderr and "sends rows [0, 9) of its 4-row input: out of bounds" in done.stderr, done.stderr


def mismatch_at_step_3(n: int) -> str:
    """Step 3 on replica 1 gathers 8 bytes at another call site while replica 0 gathers
    ``n`` floats at the site the native path has run since step 1."""
    t, t2 = f"tensor<{n}xf32>", f"tensor<{2 * n}xf32>"
    return _loop(
        f"""      %id = stablehlo.replica_id : tensor<ui32>
      %rid = stablehlo.convert %id : (tensor<ui32>) -> tensor<i32>
      %three = stablehlo.constant dense<3> : tensor<i32>
      %at3 = stablehlo.compare EQ, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %branch = stablehlo.select %at3, %rid, %c0 : tensor<i1>, tensor<i32>
      %y = "stablehlo.case"(%branch) ({{
        %0 = "stablehlo.all_gather"(%v) {{all_gather_dim = 0 : i64, replica_groups = {groups_attr([[0, 1]])}}}
            : ({t}) -> {t2}
        %1 = stablehlo.slice %0 [{n}:{2 * n}] : ({t2}) -> {t}
        stablehlo.return %1 : {t}
      }}, {{
        %half = stablehlo.slice %v [0:2] : ({t}) -> tensor<2xf32>
        %0 = "stablehlo.all_gather"(%half) {{all_gather_dim = 0 : i64, replica_groups = {groups_attr([[0, 1]])}}}
            : (tensor<2xf32>) -> tensor<4xf32>
        %1 = stablehlo.pad %0, %zerof, low = [0], high = [{n - 4}], interior = [0] : (tensor<4xf32>, tensor<f32>) -> {t}
        stablehlo.return %1 : {t}
      }}) : (tensor<i32>) -> {t}""",
        carried=t,
    ).replace("  %c1 = ", "  %zerof = stablehlo.constant dense<0.0> : tensor<f32>\n  %c1 = ", 1)


@pytest.mark.parametrize("n", [4, 2048], ids=["inline", "direct"])
def test_a_mismatch_on_the_native_path_is_reported(tmp_path, n):
    (tmp_path / "prog.mlir").write_text(mismatch_at_step_3(n))
    np.savez(tmp_path / "in.npz", arg0=np.ones(n, np.float32))
    done = mpirun(
        2, sys.executable, "-m", "xhlo.tools.run", "prog.mlir", "--inputs", "in.npz", cwd=tmp_path
    )
    assert done.returncode != 0
    assert "the devices run different collectives" in done.stderr, done.stderr
    assert f"tensor<{n}xf32>" in done.stderr and "tensor<2xf32>" in done.stderr, done.stderr
