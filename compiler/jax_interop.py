"""Running JAX programs with xhlo: ``jax.export`` artifacts, polymorphic shapes, ``xhlo.jit``.

JAX is optional: importing this module imports no JAX; only the functions that
need it (deserializing, tracing) do. What a JAX export needs beyond StableHLO:

* the artifact: ``Exported``, its ``serialize()`` bytes (a flatbuffer that embeds
  the StableHLO portable artifact) or ``mlir_module_serialized``. Artifacts with
  Shardy attributes need JAX's own dialects to be read; JAX prints them as text;
* the calling convention of ``Exported``'s module: a leading platform-index
  argument for multi-platform exports (bound here to the index of ``"cpu"``,
  and the platform ``stablehlo.case``s folded, so the user passes the real
  arguments only), arguments JAX dropped because they are unused (restored
  here, so the Executable takes the ``in_avals`` in order), token arguments and
  results (dropped by ``xhlo-legalize-tuples-and-tokens``);
* symbolic dimensions: a module with dynamic argument shapes becomes a
  :class:`PolymorphicExecutable`, refined and compiled for each new input
  signature (``stablehlo-refine-arguments``, inlining, ``stablehlo-refine-shapes``
  and ``xhlo-legalize-dynamic-custom-calls`` for JAX's dynamic custom calls).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xhlo.dialects import stablehlo as sh

from . import dtypes
from . import pipeline as pl
from ._mlir import ir, new_context, passmanager
from .errors import CompilerError
from .executable import scalar_argument
from .source import MLIR_BYTECODE_MAGIC

PLATFORM_INDEX = "_platform_index"
HOST_PLATFORM = "cpu"


# -- recognizing JAX artifacts without importing JAX --------------------------------------


def is_exported(source: Any) -> bool:
    """A ``jax.export.Exported`` (recognized by its type's module, not by importing JAX)."""
    return type(source).__module__.startswith("jax") and hasattr(source, "mlir_module_serialized")


def is_serialized_exported(source: Any) -> bool:
    """``Exported.serialize()`` bytes: a flatbuffer that is not MLIR bytecode but embeds some."""
    if not isinstance(source, (bytes, bytearray, memoryview)):
        return False
    data = bytes(source)
    return not data.startswith(MLIR_BYTECODE_MAGIC) and MLIR_BYTECODE_MAGIC in data


def is_jax_export(source: Any) -> bool:
    return is_exported(source) or is_serialized_exported(source)


def deserialize(data: bytes | bytearray) -> Any:
    """``jax.export.deserialize`` with a clear error when JAX is missing."""
    try:
        from jax import export
    except ImportError:
        raise CompilerError(
            "reading a serialized jax.export.Exported needs JAX (pip install jax)"
        ) from None
    return export.deserialize(bytearray(data))


def artifact_text_via_jax(data: bytes) -> str | None:
    """A StableHLO artifact as generic MLIR text, read with JAX's dialects (Shardy).

    None when JAX is not installed or the bytes are not an artifact JAX can read.
    """
    if b"sdy" not in data:
        return None
    try:
        from jaxlib.mlir import ir as jax_ir
        from jaxlib.mlir.dialects import chlo, sdy, stablehlo
    except ImportError:
        return None
    context = jax_ir.Context()
    for dialect in (stablehlo, sdy, chlo):
        dialect.register_dialect(context)
    context.allow_unregistered_dialects = True
    quiet = context.attach_diagnostic_handler(lambda diagnostic: True)  # failure is a None
    with context:
        try:
            module = stablehlo.deserialize_portable_artifact(context, bytes(data))
        except ValueError:
            return None
        finally:
            quiet.detach()
        # Calls inside sdy regions do not resolve once sdy is unregistered (and the
        # inliner does not enter sdy regions): inline them by hand, here.
        _inline_calls_in_sdy_regions(module, jax_ir)
        return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)


def _inline_calls_in_sdy_regions(module, jax_ir, max_rounds: int = 64) -> None:
    """Replace each ``func.call`` nested in an ``sdy.*`` op by a copy of the callee's body."""
    functions = {
        jax_ir.StringAttr(op.attributes["sym_name"]).value: op.operation
        for op in module.body.operations
        if op.operation.name == "func.func"
    }
    for _ in range(max_rounds):
        calls = []

        def visit(op):
            if op.name == "func.call" and _inside_sdy(op):
                calls.append(op)
            return jax_ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        if not calls:
            return
        for call in calls:
            callee = functions[jax_ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
            _inline_call(call, callee, jax_ir)


def _inside_sdy(op) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name.startswith("sdy."):
            return True
        parent = parent.parent
    return False


def _inline_call(call, callee, jax_ir) -> None:
    block = callee.regions[0].blocks[0]
    mapping = {arg: value for arg, value in zip(block.arguments, call.operands)}
    with jax_ir.InsertionPoint(call):
        for op in block.operations:
            if op.operation.name == "func.return":
                for result, value in zip(call.results, op.operands):
                    result.replace_all_uses_with(mapping.get(value, value))
                break
            clone = op.operation.clone()
            _remap_operands(clone, mapping)
            for old, new in zip(op.results, clone.results):
                mapping[old] = new
    call.erase()


def _remap_operands(op, mapping) -> None:
    for i, operand in enumerate(op.operands):
        if operand in mapping:
            op.operands[i] = mapping[operand]
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                _remap_operands(inner.operation, mapping)


# -- the calling convention of Exported modules ---------------------------------------------


def _main(module: ir.Module) -> ir.Operation:
    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
            return op
    raise CompilerError("the exported module has no @main function")


def _function_type(func_op: ir.Operation) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)


def _arg_attr_dicts(func_op: ir.Operation) -> list[ir.Attribute]:
    count = len(_function_type(func_op).inputs)
    if "arg_attrs" not in func_op.attributes:
        return [ir.DictAttr.get({}) for _ in range(count)]
    return list(ir.ArrayAttr(func_op.attributes["arg_attrs"]))


def _is_platform_index(attrs: ir.Attribute) -> bool:
    d = ir.DictAttr(attrs)
    return (
        "jax.global_constant" in d
        and ir.StringAttr(d["jax.global_constant"]).value == PLATFORM_INDEX
    )


def _set_arguments(
    func_op: ir.Operation, types: Sequence[ir.Type], attrs: Sequence[ir.Attribute]
) -> None:
    results = _function_type(func_op).results
    func_op.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(list(types), list(results))
    )
    func_op.attributes["arg_attrs"] = ir.ArrayAttr.get(list(attrs))


def bind_platform_index(module: ir.Module, platforms: Sequence[str]) -> None:
    """Pass the index of ``"cpu"`` for a multi-platform export's leading argument."""
    main = _main(module)
    attrs = _arg_attr_dicts(main)
    lowered = [p.lower() for p in platforms]
    if HOST_PLATFORM not in lowered:
        raise CompilerError(f"the function was exported for {tuple(platforms)}, not for 'cpu'")
    if not attrs or not _is_platform_index(attrs[0]):
        return
    block = main.regions[0].blocks[0]
    index_type = ir.RankedTensorType(block.arguments[0].type).element_type
    with ir.InsertionPoint.at_block_begin(block), main.location:
        index = sh.index_scalar(lowered.index(HOST_PLATFORM), index_type)
    block.arguments[0].replace_all_uses_with(index)
    block.erase_argument(0)
    _set_arguments(main, list(_function_type(main).inputs)[1:], attrs[1:])
    _fold_platform_cases(module)


def _fold_platform_cases(module: ir.Module) -> None:
    """Inline the private functions, then replace each ``stablehlo.case`` on a
    constant index by its branch (so the other platforms' custom calls vanish)."""
    passmanager.PassManager.parse("builtin.module(inline)").run(module.operation)
    changed = True
    while changed:
        changed = False
        for op in _cases(module.operation):
            index = _constant_index(op.operands[0])
            if index is not None:
                last = len(op.regions) - 1
                _inline_branch(op, index if 0 <= index <= last else last)
                changed = True
                break


def _cases(root: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op):
        if op.name == "stablehlo.case":
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _constant_index(value: ir.Value) -> int | None:
    """The constant a case index holds, looking through the i64 -> i32 convert
    that x64-mode exports put after the platform index."""
    while isinstance(value, ir.OpResult) and value.owner.name == "stablehlo.convert":
        value = value.owner.operands[0]
    return sh.splat_integer(value)


def _inline_branch(case_op: ir.Operation, index: int) -> None:
    """An out-of-range index selects the last branch (the StableHLO spec)."""
    values = sh.splice_block(case_op, case_op.regions[index].blocks[0])
    for result, value in zip(case_op.results, values):
        result.replace_all_uses_with(value)
    case_op.erase()


def _aval_type(aval: Any) -> ir.Type:
    dims = [d if isinstance(d, int) else ir.ShapedType.get_dynamic_size() for d in aval.shape]
    return ir.RankedTensorType.get(dims, ir.Type.parse(dtypes.to_mlir_type(np.dtype(aval.dtype))))


def restore_unused_arguments(
    module: ir.Module, in_avals: Sequence[Any], kept: Sequence[int]
) -> None:
    """Give @main an (unused) argument for every input JAX dropped from the module."""
    if len(kept) == len(in_avals):
        return
    main = _main(module)
    block = main.regions[0].blocks[0]
    old_types = list(_function_type(main).inputs)
    old_attrs = _arg_attr_dicts(main)
    tokens = sum(1 for t in old_types if str(t) == "!stablehlo.token")
    position = {index: tokens + i for i, index in enumerate(sorted(kept))}
    order = list(range(tokens)) + [position.get(i) for i in range(len(in_avals))]
    old_args = [block.arguments[i] for i in range(len(old_types))]
    new_types, new_attrs = [], []
    for i, old in enumerate(order):
        t = old_types[old] if old is not None else _aval_type(in_avals[i - tokens])
        new_types.append(t)
        new_attrs.append(old_attrs[old] if old is not None else ir.DictAttr.get({}))
        new_arg = block.add_argument(t, main.location)
        if old is not None:
            old_args[old].replace_all_uses_with(new_arg)
    for _ in old_types:
        block.erase_argument(0)
    _set_arguments(main, new_types, new_attrs)


def exported_module(source: Any, context: ir.Context) -> tuple[ir.Module, str]:
    """(module, display name) of an ``Exported`` or its serialized bytes, calling
    convention applied: the module's @main takes exactly ``exported.in_avals``."""
    from .source import _parse

    exported = source if is_exported(source) else deserialize(source)
    name = f"<jax.export {exported.fun_name}>"
    module = _parse(bytes(exported.mlir_module_serialized), context, name)
    with context, ir.Location.unknown():
        bind_platform_index(module, exported.platforms)
        restore_unused_arguments(module, exported.in_avals, exported.module_kept_var_idx)
    return module, name


# -- shape polymorphism ------------------------------------------------------------------------


POLYMORPHIC_ATTR = "jax.uses_shape_polymorphism"


def is_shape_polymorphic(module: ir.Module, func_op: ir.Operation) -> bool:
    """Entry arguments with dynamic dimensions in a module that declares itself
    shape-polymorphic (JAX sets ``jax.uses_shape_polymorphism = true``); other
    dynamic modules stay compile errors."""
    attrs = module.operation.attributes
    declared = POLYMORPHIC_ATTR in attrs and ir.BoolAttr(attrs[POLYMORPHIC_ATTR]).value
    return declared and has_dynamic_arguments(func_op)


def has_dynamic_arguments(func_op: ir.Operation) -> bool:
    return any(
        isinstance(t, ir.RankedTensorType) and not t.has_static_shape
        for t in _function_type(func_op).inputs
    )


def _refined_types(input_types: Sequence[ir.Type], args: Sequence[np.ndarray]) -> list[str]:
    """The entry's argument types for ``args`` (tokens stay tokens)."""
    tensors = [t for t in input_types if isinstance(t, ir.RankedTensorType)]
    if len(tensors) != len(args):
        raise ValueError(f"the function takes {len(tensors)} argument(s), got {len(args)}")
    arrays = iter(enumerate(args))
    refined = []
    for t in input_types:
        if not isinstance(t, ir.RankedTensorType):
            refined.append(str(t))
            continue
        position, array = next(arrays)
        elem = str(t.element_type)
        if array.dtype != dtypes.to_numpy_dtype(elem):
            raise ValueError(
                f"argument {position}: expected dtype {dtypes.to_numpy_dtype(elem)} ({t}), got {array.dtype}"
            )
        if array.ndim != t.rank or any(
            not t.is_dynamic_dim(d) and t.shape[d] != array.shape[d] for d in range(t.rank)
        ):
            raise ValueError(f"argument {position}: shape {array.shape} does not fit {t}")
        dims = "x".join(str(d) for d in array.shape)
        refined.append(f"tensor<{dims}{'x' if array.shape else ''}{elem}>")
    return refined


def _module_int_attr(module: ir.Module, name: str, default: int) -> int:
    attrs = module.operation.attributes
    return ir.IntegerAttr(attrs[name]).value if name in attrs else default


class PolymorphicExecutable:
    """A module whose entry arguments have dynamic dimensions, compiled on first
    call for each input signature (shapes and dtypes) and cached.

    Call it like an ``Executable``; ``specialize(*args)`` returns the ``Executable``
    for ``args``' signature. Shape assertions of JAX exports are checked when a
    signature is compiled.
    """

    def __init__(
        self,
        module: ir.Module,
        *,
        entry: str,
        filename: str,
        options: dict[str, Any],
        num_replicas: int | None = None,
        num_partitions: int | None = None,
    ):
        import io

        # Shardy's ops (a shard_map of them: an error now, not at the first call)
        self._shardy = _unregistered_ops(module, filename)
        buffer = io.BytesIO()
        module.operation.write_bytecode(buffer)
        self._bytecode = buffer.getvalue()
        self.entry = entry
        self.filename = filename
        self._options = dict(options)
        self._num_replicas, self._num_partitions = num_replicas, num_partitions
        self.num_replicas = num_replicas or _module_int_attr(module, "mhlo.num_replicas", 1)
        self.num_partitions = num_partitions or _module_int_attr(module, "mhlo.num_partitions", 1)
        func_op = next(
            op.operation
            for op in module.body.operations
            if op.operation.name == "func.func"
            and ir.StringAttr(op.operation.attributes["sym_name"]).value == entry
        )
        inputs = _function_type(func_op).inputs
        self.input_types = tuple(str(t) for t in inputs)
        self._argument_elements = [
            str(t.element_type) for t in inputs if isinstance(t, ir.RankedTensorType)
        ]
        self._executables: dict[tuple, Any] = {}

    def __repr__(self) -> str:
        return f"PolymorphicExecutable(@{self.entry}({', '.join(self.input_types)}), {len(self._executables)} compiled)"

    @property
    def executables(self) -> dict[tuple, Any]:
        """The compiled signatures: ((shape, dtype), ...) -> Executable."""
        return dict(self._executables)

    def specialize(self, *args):
        """The Executable for ``args``' shapes and dtypes (compiled on first use)."""
        arrays = self._as_arrays(args)
        key = tuple((a.shape, a.dtype) for a in arrays)  # not dtype.str: every f8/i4 type is '<V1'
        executable = self._executables.get(key)
        if executable is None:
            executable = self._compile(arrays)
            self._executables[key] = executable
        return executable

    def __call__(self, *args):
        return self.specialize(*args)(*self._as_arrays(args))

    def _as_arrays(self, args) -> list[np.ndarray]:
        """Python scalars take their argument's element type, as in ``Executable``."""
        elements = self._argument_elements + [None] * len(args)
        return [
            scalar_argument(arg, dtypes.to_numpy_dtype(elem), f"argument {i} of {self.entry}")
            if isinstance(arg, (bool, int, float, complex)) and elem is not None
            else np.asarray(arg)
            for i, (arg, elem) in enumerate(zip(args, elements))
        ]

    def _compile(self, arrays: list[np.ndarray]):
        from .api import compile as xhlo_compile

        context = new_context()
        with context, ir.Location.unknown():
            module = ir.Module.parse(self._bytecode)
            types = _refined_types([ir.Type.parse(t) for t in self.input_types], arrays)
            # Shardy's ops and attributes first: unregistered, they crash MLIR's inliner and
            # stablehlo-refine-shapes
            shardy = "xhlo-legalize-shardy," if self._shardy else ""
            pipeline = (
                f"{shardy}stablehlo-refine-arguments{{types={','.join(types)}}},"
                # one body per call site, as JAX refines: a helper that two callers use
                # with different constants (floor division's @_where) has no single refinement
                "func.func(stablehlo-legalize-composite-to-call),inline,stablehlo-refine-shapes,"
                # JAX's dynamic custom calls, static now, and what their results feed
                "xhlo-legalize-dynamic-custom-calls,stablehlo-refine-shapes,"
                "func.func(stablehlo-canonicalize-dynamism)"
            )
            try:
                pl.build_pass_manager(pipeline).run(module.operation)
            except ir.MLIRError as err:
                raise CompilerError(
                    f"{self.filename}: shape refinement for {types} failed: {err}",
                    stage="refine-shapes",
                ) from None
            return xhlo_compile(
                module,
                entry=self.entry,
                filename=self.filename,
                num_replicas=self._num_replicas,
                num_partitions=self._num_partitions,
                **self._options,
            )


def _unregistered_ops(module: ir.Module, filename: str) -> bool:
    """Does the module hold ops of unregistered dialects (Shardy's)? A ``shard_map``'s
    ``sdy.manual_computation`` is an error: its per-device program is made by
    xhlo-localize-shard-map, after refinement, which refines the global program."""
    names: set[str] = set()

    def visit(op):
        if not module.context.is_registered_operation(op.name):
            names.add(op.name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if "sdy.manual_computation" in names:
        raise CompilerError(
            f"{filename}: a shape-polymorphic shard_map in Shardy form is not supported; export it "
            "with concrete shapes, or in GSPMD form (jax.config.update('jax_use_shardy_partitioner', False))",
            stage="refine-shapes",
        )
    return bool(names)


# -- calling with pytrees ----------------------------------------------------------------------


def _as_tuple(outputs: Any) -> tuple:
    return outputs if isinstance(outputs, tuple) else (outputs,)


class ExportedFunction:
    """An ``Exported`` compiled by xhlo, called like the original JAX function:
    the same pytrees of arguments in, numpy arrays in the result's pytree out."""

    def __init__(self, exported: Any, executable: Any):
        self.exported = exported
        self.executable = executable  # Executable or PolymorphicExecutable (flat arrays)

    def __repr__(self) -> str:
        return f"ExportedFunction({self.exported.fun_name}, {self.executable!r})"

    def __call__(self, *args, **kwargs):
        import jax

        leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
        if tree != self.exported.in_tree:
            raise ValueError(
                f"arguments {tree} do not match the exported function's {self.exported.in_tree}"
            )
        arrays = [_as_aval_dtype(leaf, aval, f"argument {i} of {self.exported.fun_name}")
                  for i, (leaf, aval) in enumerate(zip(leaves, self.exported.in_avals))]
        outputs = _as_tuple(self.executable(*arrays))
        return jax.tree_util.tree_unflatten(self.exported.out_tree, list(outputs))


def _as_aval_dtype(leaf: Any, aval: Any, where: str) -> np.ndarray:
    """``leaf`` as an array; Python scalars (if they fit) and 64-bit values JAX would
    have canonicalized (x64 disabled) take the exported dtype, as under ``jax.jit``."""
    import jax

    if isinstance(leaf, (bool, int, float, complex)):
        return scalar_argument(leaf, np.dtype(aval.dtype), where)
    array = np.asarray(leaf)
    if array.dtype != aval.dtype and jax.dtypes.canonicalize_dtype(array.dtype) == aval.dtype:
        array = array.astype(aval.dtype)
    return array


def compile_exported(exported: Any, **options) -> ExportedFunction:
    """Compile an ``Exported`` (or its serialized bytes) into an :class:`ExportedFunction`."""
    from .api import compile as xhlo_compile

    if not is_exported(exported):
        exported = deserialize(exported)
    return ExportedFunction(exported, xhlo_compile(exported, **options))


def load_exported(path: str | os.PathLike, **options) -> ExportedFunction:
    """Compile a file written with ``Path(f).write_bytes(exported.serialize())``."""
    return compile_exported(deserialize(Path(path).read_bytes()), **options)


# -- xhlo.jit ----------------------------------------------------------------------------------


def _leaf_signature(leaf: Any) -> tuple:
    if isinstance(leaf, (bool, int, float, complex)):
        return (type(leaf),)  # weakly typed Python scalars
    array = np.asarray(leaf) if not hasattr(leaf, "dtype") else leaf
    return (tuple(np.shape(array)), np.dtype(array.dtype))  # not dtype.str: every f8/i4 type is '<V1'


class JitFunction:
    """``fun`` traced with ``jax.export`` and compiled by xhlo, once per input
    signature (pytree structure, shapes, dtypes and static arguments)."""

    def __init__(
        self,
        fun: Callable,
        *,
        static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (),
        **options,
    ):
        import jax

        self.fun = fun
        self._static_argnums = (
            (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        )
        self._static_argnames = (
            (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        )
        self._jitted = jax.jit(
            fun, static_argnums=self._static_argnums, static_argnames=self._static_argnames
        )
        self._options = options
        self._compiled: dict[tuple, ExportedFunction] = {}

    def __repr__(self) -> str:
        return (
            f"xhlo.jit({getattr(self.fun, '__name__', self.fun)!r}, {len(self._compiled)} compiled)"
        )

    def _split(self, args: tuple, kwargs: dict) -> tuple[tuple, tuple, tuple, dict]:
        static = tuple((i, args[i]) for i in self._static_argnums if i < len(args))
        static += tuple((k, kwargs[k]) for k in self._static_argnames if k in kwargs)
        dynamic_args = tuple(a for i, a in enumerate(args) if i not in self._static_argnums)
        dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        return static, dynamic_args, dynamic_kwargs, kwargs

    def lower(self, *args, **kwargs) -> ExportedFunction:
        """The compiled function for these arguments' signature (compiled if new)."""
        import jax
        from jax import export

        static, dynamic_args, dynamic_kwargs, _ = self._split(args, kwargs)
        leaves, tree = jax.tree_util.tree_flatten((dynamic_args, dynamic_kwargs))
        key = (tree, tuple(_leaf_signature(leaf) for leaf in leaves), static)
        compiled = self._compiled.get(key)
        if compiled is None:
            exported = export.export(self._jitted, platforms=(HOST_PLATFORM,))(*args, **kwargs)
            compiled = compile_exported(exported, **self._options)
            self._compiled[key] = compiled
        return compiled

    def __call__(self, *args, **kwargs):
        _, dynamic_args, dynamic_kwargs, _ = self._split(args, kwargs)
        return self.lower(*args, **kwargs)(*dynamic_args, **dynamic_kwargs)


def jit(fun: Callable | None = None, **options):
    """Like ``jax.jit``, but compiled by xhlo; results are numpy arrays.

    ``static_argnums``/``static_argnames`` are passed to ``jax.jit``; the other
    keywords are ``xhlo.compile`` options. Usable as ``@xhlo.jit`` or
    ``@xhlo.jit(static_argnums=1)``.
    """
    if fun is None:
        return lambda f: JitFunction(f, **options)
    return JitFunction(fun, **options)


__all__ = [
    "ExportedFunction",
    "JitFunction",
    "PolymorphicExecutable",
    "compile_exported",
    "is_jax_export",
    "jit",
    "load_exported",
]
