"""Shardy annotations removed by xhlo-legalize-shardy: the program runs unpartitioned.

Exact comparisons: the computations are small integer-valued float arithmetic.
"""

from __future__ import annotations

import numpy as np
import pytest
import xhlo

SHARDED = """
module attributes {mhlo.num_partitions = 1 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> : () -> ()
  func.func public @main(%x: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %0 = "sdy.sharding_constraint"(%x) <{sharding = #sdy.sharding<@mesh, [{"x"}]>}> : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "sdy.manual_computation"(%0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}> ({
    ^bb0(%shard: tensor<4xf32>):
      %two = stablehlo.constant dense<2.000000e+00> : tensor<4xf32>
      %2 = stablehlo.multiply %shard, %two : tensor<4xf32>
      "sdy.return"(%2) : (tensor<4xf32>) -> ()
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "sdy.reshard"(%1) <{sharding = #sdy.sharding<@mesh, [{}]>}> : (tensor<4xf32>) -> tensor<4xf32>
    %4 = stablehlo.add %3, %x : tensor<4xf32>
    return %4 : tensor<4xf32>
  }
}
"""


def test_sharded_program_runs_unpartitioned():
    executable = xhlo.compile(SHARDED)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(executable(x), 3 * x)
    assert "sdy" not in executable.ir("xhlo-stablehlo-prepare")


def test_manual_computation_over_shards_is_an_error():
    module = SHARDED.replace('["x"=1]', '["x"=2]').replace(
        "%shard: tensor<4xf32>", "%shard: tensor<2xf32>"
    )
    module = module.replace(
        "dense<2.000000e+00> : tensor<4xf32>", "dense<2.000000e+00> : tensor<2xf32>"
    )
    module = module.replace(
        "%2 = stablehlo.multiply %shard, %two : tensor<4xf32>",
        "%2 = stablehlo.multiply %shard, %two : tensor<2xf32>",
    )
    module = module.replace(
        '"sdy.return"(%2) : (tensor<4xf32>)', '"sdy.return"(%2) : (tensor<2xf32>)'
    )
    with pytest.raises(
        xhlo.CompilerError, match="splits tensor<4xf32> into shards of tensor<2xf32>"
    ):
        xhlo.compile(module)
