"""``xhlo.compile``: any StableHLO module -> an Executable running on the CPU."""

from __future__ import annotations

import dataclasses
import os
import threading

from . import blas, cache, pipeline as pl, pocketfft
from ._mlir import ir, new_context
from .checks import Check
from .errors import CompilerError, format_diagnostics, format_location
from .executable import SCRATCH_ATTR, Executable, FunctionSignature, TensorSpec
from .jax_interop import PolymorphicExecutable, is_shape_polymorphic
from .llvm_jit import JitProgram
from .runtime import bind as bind_runtime, parallel, record_device_counts
from .runtime.program import check_timeout
from .source import _looks_like_path as looks_like_path, load_module


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "") == "1"


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    """Knobs of ``xhlo.compile``; every field is also a keyword argument."""

    opt_level: int = 2  # LLVM optimisation level of the JIT (3: slower compiles, no faster code here)
    keep_ir: bool = True  # keep the IR after every stage (Executable.ir(stage))
    # Run the MLIR verifier after every pass (as xhlo-opt does; the test suite sets
    # XHLO_VERIFY_EACH=1). Off, the module is verified once after each stage: that
    # saves 20-30% of a compile, and errors still name the stage.
    verify_each: bool = dataclasses.field(default_factory=lambda: _env_flag("XHLO_VERIFY_EACH"))
    collective_timeout: float = 300.0  # seconds a device waits for its peers in a collective
    cache: bool = True  # reuse an Executable this process compiled from the same program and options
    cache_dir: str | None = None  # also keep compiled code on disk there (default: $XHLO_CACHE_DIR)

    def __post_init__(self):
        check_timeout("collective_timeout", self.collective_timeout)


class _ThreadContext(threading.local):
    """The MLIR context ``xhlo.compile`` uses on this thread, and the stage pass managers
    built in it.

    A new context and new pass managers cost 5-7 ms per compile (registering the
    dialects, building canonicalize's pattern sets), a third of a small program's
    compile. The context is recycled after ``CONTEXT_COMPILES`` compiles or
    ``CONTEXT_INPUT_BYTES`` of input, since every attribute a program interns
    (dense constants) lives as long as the context; each Executable keeps its own
    context alive. One context per thread: diagnostics handlers are per context, and
    threads compile concurrently.
    """

    context: ir.Context | None = None
    compiles = 0
    input_bytes = 0
    pass_managers: dict[str, object] = {}

    def take(self, input_bytes: int) -> ir.Context:
        if self.context is None or self.compiles >= CONTEXT_COMPILES or self.input_bytes >= CONTEXT_INPUT_BYTES:
            self.context, self.compiles, self.input_bytes, self.pass_managers = new_context(), 0, 0, {}
        self.compiles += 1
        self.input_bytes += input_bytes
        return self.context

    def pass_manager(self, text: str, context: ir.Context):
        """The pass manager of ``text`` in ``context`` (built once per context)."""
        if context is not self.context:
            return pl.build_pass_manager(text)
        pm = self.pass_managers.get(text)
        if pm is None:
            pm = self.pass_managers[text] = pl.build_pass_manager(text)
        return pm


CONTEXT_COMPILES = 64
CONTEXT_INPUT_BYTES = 64 << 20
_UNKNOWN_INPUT_BYTES = 1 << 20  # a source whose size is not known up front (an ir.Module, a builder)
_thread_context = _ThreadContext()


def _input_bytes(source) -> int:
    """About how many bytes of program ``source`` is (what its constants may intern)."""
    if isinstance(source, os.PathLike) or isinstance(source, str) and looks_like_path(source):
        try:
            return os.path.getsize(source)
        except OSError:
            return 0  # load_module reports the missing file
    if isinstance(source, (str, bytes, bytearray, memoryview)):
        return len(source)
    serialized = getattr(source, "mlir_module_serialized", None)  # a jax.export artifact
    return len(serialized) if serialized is not None else _UNKNOWN_INPUT_BYTES


def _public_functions(module: ir.Module) -> list[ir.Operation]:
    funcs = []
    for op in module.body.operations:
        op = op.operation
        if op.name != "func.func" or len(op.regions[0].blocks) == 0:
            continue
        vis = op.attributes["sym_visibility"] if "sym_visibility" in op.attributes else None
        if vis is None or ir.StringAttr(vis).value == "public":
            funcs.append(op)
    return funcs


def _func_name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _has_checks(func_op: ir.Operation) -> bool:
    from xhlo.passes.expose_checks import check_kind

    return any(check_kind(op.operation) for op in func_op.regions[0].blocks[0].operations)


def _signature(func_op: ir.Operation, filename: str) -> FunctionSignature:
    ftype = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
    checks = []
    if "xhlo.checks" in func_op.attributes:
        for rec in ir.ArrayAttr(func_op.attributes["xhlo.checks"]):
            d = ir.DictAttr(rec)
            fields = {}
            for key in ("max_ulp", "min_ulp", "tolerance"):
                if key in d:
                    fields[key] = ir.FloatAttr(d[key]).value
            checks.append(
                Check(
                    kind=ir.StringAttr(d["kind"]).value,
                    actual=ir.IntegerAttr(d["actual"]).value,
                    expected=ir.IntegerAttr(d["expected"]).value,
                    location=ir.StringAttr(d["location"]).value.replace('"-"', f'"{filename}"'),
                    **fields,
                )
            )
    name = _func_name(func_op)
    try:
        return FunctionSignature(
            name,
            tuple(TensorSpec.from_type(t) for t in ftype.inputs),
            tuple(TensorSpec.from_type(t) for t in ftype.results),
            tuple(checks),
        )
    except TypeError as err:
        raise CompilerError(f"function @{name}: {err}", stage="signature") from None


def _with_scratch_sizes(signatures: dict[str, FunctionSignature], module: ir.Module) -> dict[str, FunctionSignature]:
    """Record the arena each public function takes last (``xhlo-scratch-arena``)."""
    sizes = {}
    for func_op in _public_functions(module):
        if SCRATCH_ATTR in func_op.attributes:
            sizes[_func_name(func_op)] = ir.IntegerAttr(func_op.attributes[SCRATCH_ATTR]).value
    return {name: dataclasses.replace(sig, scratch_bytes=sizes.get(name, 0)) for name, sig in signatures.items()}


def _module_int_attr(module: ir.Module, name: str, default: int) -> int:
    attrs = module.operation.attributes
    return ir.IntegerAttr(attrs[name]).value if name in attrs else default


def _run_stage(
    module: ir.Module, text: str, stage: str, filename: str, verify: bool, done: list[str]
) -> None:
    """Run one stage; ``done`` lists the pipeline elements already run (for the reproducer).

    ``verify``: after every pass; otherwise the stage's result is verified once.
    """
    pm = _thread_context.pass_manager(text, module.context)
    pm.enable_verifier(verify)
    try:
        pm.run(module.operation)
        if not verify:
            module.operation.verify()
    except ir.MLIRError as err:
        pipeline = ",".join([*done, stage])
        raise CompilerError(
            format_diagnostics(err, filename),
            stage=stage,
            reproducer=f"xhlo-opt {filename} --allow-unregistered-dialect "
            f"--pass-pipeline='builtin.module({pipeline})'",
        ) from None
    done.append(stage if stage in pl.NAMED_PIPELINES else text)


def _jit(
    module: ir.Module, opt_level: int, context: ir.Context, filename: str, symbols: dict[str, int]
) -> JitProgram:
    """Generate the machine code (``symbols``: runtime entries the code calls); the
    diagnostics of a failure become the error message."""
    messages: list[str] = []

    def collect(diag) -> bool:
        messages.append(f"{format_location(diag.location, filename)}: {diag.message}")
        return True  # handled: keep MLIR from printing to stderr

    handler = context.attach_diagnostic_handler(collect)
    try:
        for path in blas.shared_libs_for(module):
            blas.load_globally(path)
        return JitProgram(module, opt_level, symbols)
    except CompilerError as err:
        if not messages:
            raise
        raise CompilerError(f"{'; '.join(messages)} ({err})", stage="jit") from None
    finally:
        handler.detach()


def compile(  # noqa: A001  (mirrors jax/iree naming)
    source,
    *,
    entry: str = "main",
    num_replicas: int | None = None,
    num_partitions: int | None = None,
    filename: str | None = None,
    **options,
) -> Executable:
    """Compile a StableHLO module for the CPU.

    ``source``: MLIR text, a path to ``.mlir``/``.mlirbc``, bytes (MLIR bytecode
    or a StableHLO portable artifact) or an ``ir.Module``. ``entry`` names the
    public function ``Executable.__call__`` runs. ``options`` are the fields of
    ``CompileOptions``. ``filename`` names text sources in diagnostics.
    """
    opts = CompileOptions(**options)
    context = _thread_context.take(_input_bytes(source))
    with context, ir.Location.unknown():
        module, filename = load_module(source, context, filename)
        record_device_counts(module, num_replicas, num_partitions)
        stage_ir: dict[str, object] = {}  # stage -> a copy of the IR, printed when asked for
        if opts.keep_ir:
            stage_ir["input"] = module.operation.clone()
        try:
            module.operation.verify()
        except ir.MLIRError as err:
            raise CompilerError(format_diagnostics(err, filename), stage="verify") from None
        publics = {_func_name(f): f for f in _public_functions(module)}
        if entry not in publics:
            raise ValueError(f"no public function '{entry}' in {filename}; found {sorted(publics)}")
        if is_shape_polymorphic(module, publics[entry]):  # compiled per input signature
            return PolymorphicExecutable(
                module,
                entry=entry,
                filename=filename,
                options=options,
                num_replicas=num_replicas,
                num_partitions=num_partitions,
            )
        key = cache.compilation_key(
            module, entry=entry, filename=filename, pipeline=pl.pipeline_text(),
            options={k: v for k, v in dataclasses.asdict(opts).items() if k not in ("cache", "cache_dir")},
        )
        cached = _cached_executable(key, opts, context, stage_ir)
        if cached is not None:
            return cached
        done: list[str] = []
        for name, func_op in publics.items():
            if _has_checks(func_op):
                expose = f"xhlo-expose-checks{{entry={name}}}"
                _run_stage(module, expose, expose, filename, True, done)
        for stage in pl.STAGES:
            _run_stage(module, stage.text, stage.name, filename, opts.verify_each, done)
            if stage.name == "xhlo-stablehlo-prepare":
                signatures = {_func_name(f): _signature(f, filename) for f in _public_functions(module)}
            if stage.name == "xhlo-bufferize":
                signatures = _with_scratch_sizes(signatures, module)
            if opts.keep_ir:
                stage_ir[stage.name] = module.operation.clone()
        runtime = bind_runtime(module, timeout=opts.collective_timeout, filename=filename)
        engine = _jit(module, opts.opt_level, context, filename, runtime.symbols() if runtime else {})
        parallel.install(engine)  # loops outlined by xhlo-parallelize-loops run on the thread pool
        pocketfft.install(engine)  # FFTs call numpy's pocketfft through a table
        executable = Executable(
            engine,
            signatures,
            entry,
            stage_ir=stage_ir,
            pipeline=pl.pipeline_text(),
            context=context,
            num_replicas=num_replicas or _module_int_attr(module, "mhlo.num_replicas", 1),
            num_partitions=num_partitions or _module_int_attr(module, "mhlo.num_partitions", 1),
            runtime=runtime,
        )
        executable.materialize()  # code generation counts as compile time, not first-call time
        _remember(key, opts, executable, engine, module)
    return executable


def _cached_executable(key: str, opts: CompileOptions, context: ir.Context, stage_ir: dict) -> Executable | None:
    """The Executable of an earlier compilation with this key: from memory, else from disk."""
    if opts.cache:
        executable = cache.recall(key)
        if executable is not None:
            return executable
    directory = cache.cache_dir(opts.cache_dir)
    loaded = cache.load(directory, key) if directory is not None else None
    if loaded is None:
        return None
    program, meta = loaded
    parallel.install(program)
    pocketfft.install(program)
    executable = Executable(
        program,
        {name: cache.signature_from_json(sig) for name, sig in meta["signatures"].items()},
        meta["entry"],
        stage_ir={**stage_ir, **meta.get("stage_ir", {})},
        pipeline=meta["pipeline"],
        context=context,
        num_replicas=meta["num_replicas"],
        num_partitions=meta["num_partitions"],
    )
    if opts.cache:
        cache.remember(key, executable)
    return executable


def _remember(key: str, opts: CompileOptions, executable: Executable, engine, module: ir.Module) -> None:
    """Keep the Executable in memory, and its object code on disk when asked (not with collectives)."""
    if opts.cache:
        cache.remember(key, executable)
    directory = cache.cache_dir(opts.cache_dir)
    if directory is None or executable._runtime is not None:
        return
    metadata = {
        "signatures": {name: cache.signature_to_json(sig) for name, sig in executable.signatures.items()},
        "entry": executable.entry,
        "pipeline": executable.pipeline,
        "num_replicas": executable.num_replicas,
        "num_partitions": executable.num_partitions,
        "shared_libs": blas.shared_libs_for(module),
        "stage_ir": {k: executable.ir(k) for k in executable.stage_ir if k != "input"},
    }
    cache.store(directory, key, engine, metadata)


def pipeline_text() -> str:
    """The compile pipeline as one textual pass pipeline (what xhlo-opt accepts)."""
    return pl.pipeline_text()


__all__ = ["compile", "CompileOptions", "pipeline_text"]
