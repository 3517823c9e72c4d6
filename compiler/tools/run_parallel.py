"""xhlo-run: the reference interpreter's ``interpreter.run_parallel`` on xhlo's devices.

StableHLO's interpreter tests of collectives compute inputs in ``main``, run a
program on a grid of processes with them and check the results::

    %results:2 = "interpreter.run_parallel"(%in0, %in1) {programs = [[@f], [@f]]}
    check.expect_eq_const %results#0, dense<...> : ...

``programs[r][p]`` is the program of replica r and partition p; the inputs are
handed out in that order, each program taking as many as it has arguments, and
the results come back in the same order. xhlo runs such a module in three
compiled parts: ``main`` up to the op (returning its operands), the program on
R x P in-process devices (``run_replicated``: device d = r * P + p), and
``main`` after the op, its results as arguments, whose checks compare them.
One program for every device (SPMD) is supported: xhlo compiles one program.
"""

from __future__ import annotations

from xhlo._mlir import ir, new_context
from xhlo.passes.expose_checks import find_function
from xhlo.source import load_module

RUN_PARALLEL = "interpreter.run_parallel"


def _find(module: ir.Operation) -> tuple[ir.Operation, ir.Operation] | None:
    """(function, its run_parallel op), None if the module has none."""
    for function in module.regions[0].blocks[0].operations:
        if function.operation.name != "func.func":
            continue
        for op in function.regions[0].blocks[0].operations:
            if op.operation.name == RUN_PARALLEL:
                return function.operation, op.operation
    return None


def _grid(op: ir.Operation) -> tuple[str, int, int]:
    """(the program, replicas, partitions) of a run_parallel op."""
    unsupported = sorted(name for name in op.attributes if name != "programs")
    if unsupported:
        raise ValueError(f"{RUN_PARALLEL}: attribute(s) {', '.join(unsupported)} are not supported by xhlo-run")
    rows = [[ir.FlatSymbolRefAttr(p).value for p in ir.ArrayAttr(row)] for row in ir.ArrayAttr(op.attributes["programs"])]
    names = {name for row in rows for name in row}
    if len(names) != 1 or len({len(row) for row in rows}) != 1:
        raise ValueError(f"{RUN_PARALLEL}: xhlo runs one program on every device (SPMD); got {rows}")
    return names.pop(), len(rows), len(rows[0])


def _set_function_type(function: ir.Operation, inputs: list[ir.Type], results: list[ir.Type]) -> None:
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))


def _before(module: ir.Operation, program: str) -> ir.Operation:
    """``main`` up to the op, returning the op's operands; the program erased."""
    function, op = _find(module)
    block = function.regions[0].blocks[0]
    operands = list(op.operands)
    with ir.InsertionPoint(op), op.location:
        ir.Operation.create("func.return", operands=operands)
    later = [o.operation for o in block.operations]
    for doomed in reversed(later[later.index(op):]):
        doomed.erase()
    _set_function_type(function, [a.type for a in block.arguments], [v.type for v in operands])
    find_function(module, program).erase()
    return module


def _after(module: ir.Operation, program: str) -> ir.Operation:
    """``main`` after the op, the op's results its (extra) arguments; the program erased."""
    function, op = _find(module)
    block = function.regions[0].blocks[0]
    for result in op.results:
        result.replace_all_uses_with(block.add_argument(result.type, op.location))
    op.erase()
    _set_function_type(function, [a.type for a in block.arguments],
                       list(ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).results))
    find_function(module, program).erase()
    return module


def _program(module: ir.Operation, program: str) -> ir.Operation:
    """The program, public, without the function that ran it."""
    function, _ = _find(module)
    function.erase()
    op = find_function(module, program)
    if "sym_visibility" in op.attributes:
        del op.attributes["sym_visibility"]
    return module


def run_chunk(text: str, filename: str) -> int | None:
    """Run a module holding ``interpreter.run_parallel`` (checks raise ``CheckFailure``);
    the number of programs run, None if the module has no such op."""
    import xhlo

    if RUN_PARALLEL not in text:
        return None
    with new_context() as context:
        source, _ = load_module(text, context, filename)
        found = _find(source.operation)
        if found is None:
            return None
        function, op = found
        entry = ir.StringAttr(function.attributes["sym_name"]).value
        program, replicas, partitions = _grid(op)
        # each part a copy of the module, as text with its locations (diagnostics name the file's lines)
        parts = {name: build(source.operation.clone(), program).get_asm(enable_debug_info=True)
                 for name, build in (("before", _before), ("program", _program), ("after", _after))}
    inputs = xhlo.compile(parts["before"], entry=entry, filename=filename)()
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    devices = xhlo.compile(parts["program"], entry=program, num_replicas=replicas, num_partitions=partitions,
                           filename=filename)
    count = len(devices.signatures[program].inputs)
    if count * replicas * partitions != len(inputs):
        raise ValueError(f"{RUN_PARALLEL}: {len(inputs)} inputs for {replicas * partitions} programs "
                         f"of {count} argument(s) each")
    per_device = [inputs[d * count:(d + 1) * count] for d in range(replicas * partitions)]
    results = [r for outputs in devices.run_replicated(per_device) for r in outputs]
    xhlo.compile(parts["after"], entry=entry, filename=filename)(*results)
    return replicas * partitions
