"""xhlo-opt: mlir-opt for xhlo, running upstream, StableHLO and xhlo passes on MLIR files.

Every stage of ``xhlo.compile`` is a named pipeline here (``--xhlo-stablehlo-to-linalg``,
or ``-p 'builtin.module(xhlo-stablehlo-to-linalg)'``), built by the same
``xhlo.pipeline.build_pass_manager``, so any stage can be reproduced and
debugged on the command line with the flags MLIR users know. The Python
bindings give no access to mlir-opt's C++ driver, so this module re-implements
its command line: one flag per pass (applied in command-line order),
``--split-input-file``, ``--verify-diagnostics``, IR printing and timing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import re
import sys
import tempfile
from pathlib import Path

from xhlo import pipeline as pl
from xhlo.errors import CompilerError
from xhlo.source import MLIR_BYTECODE_MAGIC

from .diagnostic_verifier import Diag, parse_expectations, verify

PROG = "xhlo-opt"
DEFAULT_SPLIT_MARKER = "// -----"
COMPILE_PIPELINE = "xhlo-compile-pipeline"


class UsageError(Exception):
    """A bad command line: reported as ``xhlo-opt: error: ...``, exit status 1."""


# -- the command line ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Flag:
    """A driver option. kind: bool | value | optional (value only after '=') | list | action."""

    kind: str
    dest: str
    help: str
    metavar: str = ""


DRIVER_FLAGS: dict[str, Flag] = {
    "help": Flag("action", "help", "Show this help (options and every pass) and exit"),
    "version": Flag("action", "version", "Show the xhlo and provider versions and exit"),
    "list-passes": Flag("action", "list-passes", "List the pass pipelines and passes and exit"),
    "show-dialects": Flag(
        "action", "show-dialects", "List the dialects xhlo-opt can parse and exit"
    ),
    "pass-pipeline": Flag(
        "value",
        "pipeline",
        "Textual pass pipeline, e.g. 'builtin.module(func.func(cse),xhlo-check-lowered)' (also -p)",
        "pipeline",
    ),
    "split-input-file": Flag(
        "optional",
        "split_marker",
        "Split the input at '// -----' lines (or =<marker>) and process each chunk on its own",
        "marker",
    ),
    "output-split-marker": Flag(
        "value",
        "output_split_marker",
        "Line written between the output chunks (default '// -----')",
        "marker",
    ),
    "verify-diagnostics": Flag(
        "optional",
        "verify_diagnostics",
        "Check diagnostics against the input's expected-* comments (=all or =only-expected)",
        "level",
    ),
    "verify-each": Flag("bool", "verify_each", "Run the verifier after each pass (default true)"),
    "allow-unregistered-dialect": Flag(
        "bool", "allow_unregistered", "Accept ops of unknown dialects (check.*, sdy.* ...)"
    ),
    "emit-bytecode": Flag("bool", "emit_bytecode", "Write MLIR bytecode instead of text"),
    "dump-pass-pipeline": Flag(
        "bool", "dump_pass_pipeline", "Print the pipeline that will run to stderr"
    ),
    "mlir-print-ir-before-all": Flag("bool", "print_before_all", "Print the IR before each pass"),
    "mlir-print-ir-after-all": Flag("bool", "print_after_all", "Print the IR after each pass"),
    "mlir-print-ir-before": Flag(
        "list",
        "print_before",
        "Print the IR before the passes named (repeat or separate with commas)",
        "pass",
    ),
    "mlir-print-ir-after": Flag(
        "list", "print_after", "Print the IR after the passes named", "pass"
    ),
    "mlir-print-ir-after-change": Flag(
        "bool", "print_after_change", "With an after flag: only when the pass changed the IR"
    ),
    "mlir-print-ir-after-failure": Flag(
        "bool", "print_after_failure", "Print the IR after a pass that failed"
    ),
    "mlir-print-ir-module-scope": Flag(
        "bool",
        "print_module_scope",
        "Print the whole module in IR dumps, not just the op a pass ran on",
    ),
    "mlir-disable-threading": Flag("bool", "disable_threading", "Run passes on one thread"),
    "mlir-timing": Flag("bool", "timing", "Print the time each pass took"),
    "mlir-pass-statistics": Flag("bool", "statistics", "Print pass statistics"),
    "mlir-print-debuginfo": Flag("bool", "print_debuginfo", "Print locations in the output"),
    "mlir-pretty-debuginfo": Flag(
        "bool", "pretty_debuginfo", "Print locations readably (not parseable)"
    ),
    "mlir-print-op-generic": Flag("bool", "print_op_generic", "Print ops in generic form"),
    "mlir-print-local-scope": Flag(
        "bool", "print_local_scope", "Print without attribute/type aliases"
    ),
    "mlir-elide-elementsattrs-if-larger": Flag(
        "value", "elide_limit", "Elide constants with more elements than this", "n"
    ),
}
SHORT_FLAGS = {"h": "help", "p": "pass-pipeline", "o": "output"}


@dataclasses.dataclass
class Options:
    input: str = "-"
    output: str = "-"
    pipeline: list[str] = dataclasses.field(default_factory=list)  # top-level elements, in order
    from_pipeline_text: set[str] = dataclasses.field(default_factory=set)  # elements -p/--pass-pipeline gave
    action: str | None = None
    split_marker: str | None = None
    output_split_marker: str = DEFAULT_SPLIT_MARKER
    verify_diagnostics: str | None = None
    verify_each: bool = True
    allow_unregistered: bool = False
    emit_bytecode: bool = False
    dump_pass_pipeline: bool = False
    print_before_all: bool = False
    print_after_all: bool = False
    print_before: list[str] = dataclasses.field(default_factory=list)
    print_after: list[str] = dataclasses.field(default_factory=list)
    print_after_change: bool = False
    print_after_failure: bool = False
    print_module_scope: bool = False
    disable_threading: bool = False
    timing: bool = False
    statistics: bool = False
    print_debuginfo: bool = False
    pretty_debuginfo: bool = False
    print_op_generic: bool = False
    print_local_scope: bool = False
    elide_limit: int | None = None

    @property
    def prints_ir(self) -> bool:
        return bool(
            self.print_before_all
            or self.print_after_all
            or self.print_before
            or self.print_after
            or self.print_after_failure
        )


def parse_args(argv: list[str]) -> Options:
    """The command line, mlir-opt style: ``-flag``/``--flag``, ``=value`` or a separate value."""
    opts = Options()
    positional: list[str] = []
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        if arg == "--":
            positional.extend(args)
            break
        name, eq, value = arg.lstrip("-").partition("=")
        name = SHORT_FLAGS.get(name, name)
        if name == "output":
            opts.output = value if eq else _take_value(args, arg)
        elif name in DRIVER_FLAGS:
            _apply_flag(opts, name, DRIVER_FLAGS[name], value if eq else None, args)
        else:
            opts.pipeline.append(_pass_flag_element(name, value if eq else None))
    if len(positional) > 1:
        raise UsageError(f"expected one input file, got {len(positional)}: {' '.join(positional)}")
    if positional:
        opts.input = positional[0]
    if opts.verify_diagnostics not in (None, "all", "only-expected"):
        raise UsageError(
            f"--verify-diagnostics takes 'all' or 'only-expected', not '{opts.verify_diagnostics}'"
        )
    if opts.emit_bytecode and opts.split_marker is not None:
        raise UsageError("--emit-bytecode cannot write several --split-input-file chunks")
    return opts


def _take_value(args: list[str], flag: str) -> str:
    if not args:
        raise UsageError(f"{flag} needs a value")
    return args.pop(0)


def _apply_flag(opts: Options, name: str, flag: Flag, value: str | None, args: list[str]) -> None:
    if flag.kind == "action":
        opts.action = opts.action or flag.dest
    elif flag.kind == "bool":
        setattr(opts, flag.dest, _parse_bool(name, value))
    elif flag.kind == "optional":
        default = DEFAULT_SPLIT_MARKER if name == "split-input-file" else "all"
        setattr(opts, flag.dest, value or default)
    elif flag.kind == "list":
        text = value if value is not None else _take_value(args, f"--{name}")
        getattr(opts, flag.dest).extend(v.strip() for v in text.split(",") if v.strip())
    elif name == "pass-pipeline":
        text = value if value is not None else _take_value(args, f"--{name}")
        elements = pl.split_top_level(pl.strip_anchor(text))
        opts.pipeline.extend(elements)
        opts.from_pipeline_text.update(elements)
    elif name == "mlir-elide-elementsattrs-if-larger":
        text = value if value is not None else _take_value(args, f"--{name}")
        try:
            opts.elide_limit = int(text)
        except ValueError:
            raise UsageError(f"--{name} takes an integer, not '{text}'") from None
    else:
        setattr(opts, flag.dest, value if value is not None else _take_value(args, f"--{name}"))


def _parse_bool(name: str, value: str | None) -> bool:
    if value is None or value.lower() in ("true", "1", "on"):
        return True
    if value.lower() in ("false", "0", "off"):
        return False
    raise UsageError(f"--{name} takes true or false, not '{value}'")


def _pass_flag_element(name: str, options: str | None) -> str:
    """``--name="a=1 b=2"`` -> the pipeline element ``name{a=1 b=2}``."""
    if not re.fullmatch(r"[A-Za-z][\w.-]*", name):
        raise UsageError(f"unknown command line argument '-{name}'")
    if options:
        return f"{name}{{{options}}}"
    return name


# -- pipelines ---------------------------------------------------------------------


def expand_compile_pipeline(elements: list[str]) -> list[str]:
    """``xhlo-compile-pipeline`` -> the stage names (which pipeline.expand expands in turn)."""
    out = []
    for element in elements:
        if element == COMPILE_PIPELINE:
            out.extend(stage.name for stage in pl.STAGES)
        else:
            out.append(element)
    return out


def check_elements(elements: list[str], from_pipeline_text: frozenset[str] | set[str] = frozenset()) -> None:
    """Raise UsageError naming the first element that is no valid pass, pipeline or option set."""
    from xhlo._mlir import passmanager
    from xhlo.passes import REGISTRY
    from xhlo.passes_registry import create_pass

    for element in elements:
        name, _, options = element.partition("{")
        name = name.strip()
        if name in pl.NAMED_PIPELINES or name == COMPILE_PIPELINE:
            if options:
                raise UsageError(f"named pipeline '{name}' takes no options")
            continue
        if name in REGISTRY:
            try:
                create_pass(name, pl.parse_options(options.rstrip().removesuffix("}")))
            except (ValueError, TypeError) as err:
                raise UsageError(str(err)) from None
            continue
        nested_xhlo = [n for n in REGISTRY if re.search(rf"[(,{{\s]{re.escape(n)}\b", element)]
        if nested_xhlo:
            raise UsageError(
                f"'{nested_xhlo[0]}' is an xhlo module pass: put it at the top "
                f"level of the pipeline, not inside '{element}'"
            )
        try:
            passmanager.PassManager("builtin.module").add(element)
        except ValueError as err:
            message = str(err).strip()
            if "does not refer to a registered pass" in message and "(" not in element:
                if element in from_pipeline_text:
                    raise UsageError(f"unknown pass '{name}' in the pass pipeline (see {PROG} --list-passes)") from None
                raise UsageError(
                    f"unknown command line argument '--{name}': not an xhlo-opt option "
                    f"or a registered pass (see {PROG} --list-passes)"
                ) from None
            raise UsageError(f"invalid pass pipeline element '{element}':\n{message}") from None


def pipeline_text(elements: list[str]) -> str:
    return "builtin.module(" + ",".join(elements) + ")"


def check_print_names(names: list[str]) -> None:
    """--mlir-print-ir-before/after take pass names: reject typos instead of printing nothing."""
    from xhlo._mlir import passmanager
    from xhlo.passes import REGISTRY

    for name in names:
        if name in REGISTRY:
            continue
        try:
            passmanager.PassManager("any").add(name)
        except ValueError:
            raise UsageError(f"--mlir-print-ir-before/after: '{name}' is not a pass name") from None


# -- reading the input -------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Chunk:
    """A piece of the input; text chunks are newline-padded to keep the file's line numbers."""

    source: str | bytes


def read_input(path: str) -> tuple[bytes, str]:
    """(contents, display name); ``-`` is stdin, shown as <stdin> like mlir-opt."""
    if path == "-":
        return sys.stdin.buffer.read(), "<stdin>"
    try:
        return Path(path).read_bytes(), path
    except OSError as err:
        raise UsageError(f"could not open input file '{path}': {err.strerror}") from None


def split_chunks(text: str, marker: str | None) -> list[Chunk]:
    """The chunks between ``marker`` lines (the whole text when marker is None)."""
    if marker is None:
        return [Chunk(text)]
    chunks, current, start = [], [], 1
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if line.rstrip() == marker:
            chunks.append(Chunk("\n" * (start - 1) + "".join(current)))
            current, start = [], number + 1
        else:
            current.append(line)
    chunks.append(Chunk("\n" * (start - 1) + "".join(current)))
    return chunks


_PARSER_LOCATION = re.compile(r'loc\("-":(\d+):(\d+)\)')


def name_locations(root, name: str) -> None:
    """Replace the parser's "-" file name with ``name`` in op and block-argument locations."""
    from xhlo._mlir import ir

    def renamed(loc):
        m = _PARSER_LOCATION.fullmatch(str(loc))
        return ir.Location.file(name, int(m.group(1)), int(m.group(2))) if m else None

    def visit(op):
        new = renamed(op.location)
        if new is not None:
            op.location = new
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    new = renamed(arg.location)
                    if new is not None:
                        arg.set_location(new)
        return ir.WalkResult.ADVANCE

    root.walk(visit)


def parse_module(source: str | bytes, name: str):
    """An ``ir.Module`` (in the current context); raises ir.MLIRError with the parser's diagnostics.

    Bytecode goes through the same loader as ``xhlo.compile`` (so StableHLO
    portable artifacts are deserialized), text through the MLIR parser.
    """
    from xhlo._mlir import ir

    if isinstance(source, bytes):
        from xhlo.source import load_module

        module, _ = load_module(source, ir.Context.current, name)
        return module
    module = ir.Module.parse(source)
    name_locations(module.operation, name)
    return module


# -- printing diagnostics ----------------------------------------------------------


class DiagnosticPrinter:
    """mlir-opt style diagnostics: ``file:line:col: error: message``, source line and caret."""

    def __init__(self, name: str, text: str, stream):
        self.name = name
        self.lines = text.splitlines()
        self.stream = stream

    def print(self, diag: Diag) -> None:
        self._line(diag.where(self.name), diag.severity, diag.message, diag.file_line_col)
        for note in diag.notes:
            self.print(note)

    def print_problem(self, line: str) -> None:
        """A ready-made ``file:line:col: error: ...`` line (from the verifier)."""
        m = re.match(r"(.*?):(\d+):(\d+): ", line)
        self.stream.write(line + "\n")
        if m:
            self._excerpt(m.group(1), int(m.group(2)), int(m.group(3)))

    def _line(self, where: str, severity: str, message: str, flc) -> None:
        self.stream.write(f"{where}: {severity}: {message}\n")
        if flc is not None:
            self._excerpt(*flc)

    def _excerpt(self, file: str, line: int, col: int) -> None:
        if file == self.name and 1 <= line <= len(self.lines):
            source = self.lines[line - 1]
            self.stream.write(source + "\n" + " " * max(col - 1, 0) + "^\n")


# -- IR printing for chosen passes -------------------------------------------------

_DUMP_HEADER = re.compile(
    r"^// -----// IR Dump (?P<when>Before|After) (?P<pass>.+?)(?: Failed)?: "
    r"(?P<element>.*) //----- //$"
)


def _dump_matches(header: re.Match, before: list[str], after: list[str]) -> bool:
    wanted = before if header.group("when") == "Before" else after
    # "cse", "canonicalize{...}", "unknown<py-pass>", "cse ('func.func' operation: @f)"
    element = re.match(r"(?:unknown<)?([\w.$-]*)", header.group("element")).group(1)
    names = {header.group("pass"), element}
    return any(name in names for name in wanted)


def filter_ir_dumps(text: str, before: list[str], after: list[str]) -> str:
    """Keep only the IR dumps of the passes named (MLIR prints all of them or none)."""
    out, keep = [], True
    for line in text.splitlines(keepends=True):
        header = _DUMP_HEADER.match(line.rstrip("\n"))
        if header is not None:
            keep = _dump_matches(header, before, after)
        if keep:
            out.append(line)
    return "".join(out)


@contextlib.contextmanager
def captured_stderr_fd():
    """Redirect file descriptor 2 (where MLIR's C++ prints IR dumps) into a buffer."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(2)
    buffer = io.BytesIO()
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield buffer
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            buffer.write(tmp.read())


# -- processing one chunk ----------------------------------------------------------


@dataclasses.dataclass
class ChunkResult:
    ok: bool
    output: str | bytes | None  # None when the chunk failed


def process_chunk(chunk: Chunk, name: str, full_text: str, opts: Options) -> ChunkResult:
    """Parse, run the pipeline, verify or print diagnostics and render the result."""
    from xhlo._mlir import ir, new_context

    context = new_context(allow_unregistered=opts.allow_unregistered)
    if opts.prints_ir or opts.disable_threading:
        context.enable_multithreading(False)
    diags: list[Diag] = []
    handler = context.attach_diagnostic_handler(
        lambda d: diags.append(Diag.from_mlir(d, name)) or True
    )
    output = None
    try:
        with context, ir.Location.unknown():
            try:
                module = parse_module(chunk.source, name)
                _run_pipeline(module, opts)
                output = render(module, opts)
            except ir.MLIRError as err:
                diags.extend(Diag.from_mlir(d, name) for d in err.error_diagnostics)
                if not err.error_diagnostics:
                    diags.append(Diag("error", str(err), "loc(unknown)"))
            except CompilerError as err:  # bytecode the loader could not read
                diags.append(Diag("error", str(err), "loc(unknown)"))
    finally:
        handler.detach()
    return _report(chunk, diags, output, name, full_text, opts)


def _report(chunk, diags, output, name, full_text, opts) -> ChunkResult:
    printer = DiagnosticPrinter(name, full_text, sys.stderr)
    if opts.verify_diagnostics is None:
        for diag in diags:
            printer.print(diag)
        failed = output is None or any(d.severity == "error" for d in diags)
        return ChunkResult(not failed, None if failed else output)
    if isinstance(chunk.source, bytes):
        raise UsageError("--verify-diagnostics needs a text input")
    problems = verify(
        diags,
        parse_expectations(chunk.source),
        name,
        only_expected=opts.verify_diagnostics == "only-expected",
    )
    for line in problems:
        printer.print_problem(line)
    return ChunkResult(not problems, output)


def _run_pipeline(module, opts: Options) -> None:
    """Run ``opts.pipeline`` on ``module``; raises ir.MLIRError when a pass fails."""
    if not opts.pipeline:
        return
    pm = pl.build_pass_manager(pipeline_text(opts.pipeline))
    pm.enable_verifier(opts.verify_each)
    if opts.prints_ir:
        pm.enable_ir_printing(
            print_before_all=bool(opts.print_before_all or opts.print_before),
            print_after_all=bool(
                opts.print_after_all or opts.print_after or opts.print_after_failure
            ),
            print_module_scope=opts.print_module_scope,
            print_after_change=opts.print_after_change,
            print_after_failure=opts.print_after_failure,
            large_elements_limit=opts.elide_limit,
            enable_debug_info=opts.print_debuginfo,
            print_generic_op_form=opts.print_op_generic,
        )
    if opts.timing:
        pm.enable_timing()
    if opts.statistics:
        pm.enable_statistics()
    if opts.dump_pass_pipeline:
        sys.stderr.write(f"{pm}\n")
    selective = (opts.print_before or opts.print_after) and not (
        opts.print_before_all or opts.print_after_all
    )
    try:
        if selective:
            _run_printing_selected(pm, module, opts)
        else:
            sys.stdout.flush()
            sys.stderr.flush()
            pm.run(module.operation)
    finally:
        del pm  # timing and statistics reports print when the pass manager dies


def _run_printing_selected(pm, module, opts: Options) -> None:
    """Run with every IR dump captured, then show only those of the passes asked for."""
    dumps = None
    try:
        with captured_stderr_fd() as dumps:
            pm.run(module.operation)
    finally:
        if dumps is not None:
            text = dumps.getvalue().decode(errors="replace")
            sys.stderr.write(filter_ir_dumps(text, opts.print_before, opts.print_after))
            sys.stderr.flush()


def render(module, opts: Options) -> str | bytes:
    """The module as mlir-opt prints it (text ending in a newline), or bytecode."""
    op = module.operation
    if opts.emit_bytecode:
        buffer = io.BytesIO()
        op.write_bytecode(buffer)
        return buffer.getvalue()
    text = op.get_asm(
        large_elements_limit=opts.elide_limit,
        enable_debug_info=opts.print_debuginfo or opts.pretty_debuginfo,
        pretty_debug_info=opts.pretty_debuginfo,
        print_generic_op_form=opts.print_op_generic,
        use_local_scope=opts.print_local_scope,
    )
    return text if text.endswith("\n") else text + "\n"


def join_outputs(outputs: list[str | bytes], marker: str) -> str | bytes:
    if len(outputs) == 1:
        return outputs[0]
    texts = [o if o.endswith("\n") else o + "\n" for o in outputs]
    return f"{marker}\n".join(texts)


def write_output(path: str, data: str | bytes) -> None:
    if path == "-":
        if isinstance(data, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(data)
            sys.stdout.flush()
        return
    try:
        if isinstance(data, bytes):
            Path(path).write_bytes(data)
        else:
            Path(path).write_text(data)
    except OSError as err:
        raise UsageError(f"could not write output file '{path}': {err.strerror}") from None


# -- informational actions ---------------------------------------------------------

# fmt: off
_CANDIDATE_DIALECTS = (
    "acc", "affine", "amdgpu", "amx", "arith", "arm_neon", "arm_sme", "arm_sve", "async",
    "bufferization", "builtin", "cf", "chlo", "complex", "dlti", "emitc", "func", "gpu",
    "index", "irdl", "linalg", "llvm", "math", "memref", "ml_program", "mpi", "nvgpu", "nvvm",
    "omp", "pdl", "pdl_interp", "ptr", "quant", "rocdl", "scf", "sdy", "shape", "shard", "smt",
    "sparse_tensor", "spirv", "stablehlo", "tensor", "tosa", "transform", "ub", "vector",
    "vhlo", "wasmssa", "x86", "x86vector", "xegpu", "xevm"
)
# fmt: on


def available_dialects() -> list[str]:
    """The dialects the context knows, found by asking for each candidate namespace."""
    from xhlo._mlir import new_context

    context = new_context(allow_unregistered=False)
    found = []
    with context:
        for name in _CANDIDATE_DIALECTS:
            try:
                context.get_dialect_descriptor(name)
            except ValueError:
                continue
            found.append(name)
    return found


def _row(flag: str, text: str, width: int = 44) -> str:
    if len(flag) + 2 >= width:
        return f"  {flag}\n{' ' * width}{text}"
    return f"  {flag:<{width - 2}}{text}"


def pass_listing() -> str:
    """Named pipelines, xhlo passes, StableHLO passes and upstream passes with their options."""
    from xhlo._mlir import new_context
    from xhlo.passes import REGISTRY, get_pass_class

    from .upstream_passes import UPSTREAM_PASSES, is_stablehlo_pass, pass_options

    lines = ["Pass pipelines (the stages of xhlo.compile, in order):"]
    lines.append(
        _row(f"--{COMPILE_PIPELINE}", "The whole xhlo.compile pipeline: every stage below")
    )
    for stage in pl.STAGES:
        lines.append(_row(f"--{stage.name}", stage.description))
        lines.append(" " * 6 + "= " + stage.text)
    lines += ["", "xhlo passes:"]
    for name in sorted(REGISTRY):
        cls = get_pass_class(name)
        lines.append(_row(f"--{name}", cls.description()))
        for flag, type_name, default in cls.option_infos():
            shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
            lines.append(" " * 6 + f"{flag}=<{type_name}> (default: {shown})")
    with new_context():
        for title, pick in (("StableHLO passes:", True), ("Upstream MLIR passes:", False)):
            lines += ["", title]
            for name in sorted(n for n in UPSTREAM_PASSES if is_stablehlo_pass(n) == pick):
                lines.append(_row(f"--{name}", UPSTREAM_PASSES[name]))
                options = pass_options(name)
                if options:
                    lines.append(" " * 6 + " ".join(options))
    return "\n".join(lines) + "\n"


def help_text() -> str:
    lines = [
        f"OVERVIEW: {PROG}: run upstream MLIR, StableHLO and xhlo passes on MLIR files",
        "",
        f"USAGE: {PROG} [options] [INPUT|-] [-o OUTPUT]",
        "",
        'Pass flags (--<pass>[="opt=val ..."], --xhlo-<stage>, -p) run in command-line order.',
        "Any upstream pass the provider registers works as --<name>, even if unlisted.",
        "",
        "OPTIONS:",
        _row("-o <file>", "Output file (default: - for stdout)"),
        _row("-p <pipeline>", "Same as --pass-pipeline"),
    ]
    for name, flag in DRIVER_FLAGS.items():
        lines.append(_row(_flag_usage(name, flag), flag.help))
    return "\n".join(lines) + "\n\n" + pass_listing()


def _flag_usage(name: str, flag: Flag) -> str:
    """``--name``, ``--name=<value>`` or ``--name[=<value>]``."""
    if flag.kind == "optional":
        return f"--{name}[=<{flag.metavar}>]"
    if flag.metavar:
        return f"--{name}=<{flag.metavar}>"
    return f"--{name}"


def version_text() -> str:
    from importlib import metadata

    from xhlo._mlir import PROVIDER

    try:
        version = metadata.version("xhlo")
    except metadata.PackageNotFoundError:
        version = "unknown"
    provider_version = ""
    with contextlib.suppress(metadata.PackageNotFoundError):
        provider_version = " " + metadata.version(PROVIDER)
    return f"{PROG} (xhlo {version}, MLIR provider {PROVIDER}{provider_version})\n"


def run_action(action: str) -> int:
    if action == "help":
        sys.stdout.write(help_text())
    elif action == "list-passes":
        sys.stdout.write(pass_listing())
    elif action == "show-dialects":
        sys.stdout.write("Available Dialects: " + ", ".join(available_dialects()) + "\n")
    elif action == "version":
        sys.stdout.write(version_text())
    return 0


# -- main --------------------------------------------------------------------------


def run(opts: Options) -> int:
    from xhlo._mlir import new_context

    if opts.action:
        return run_action(opts.action)
    opts.pipeline = expand_compile_pipeline(opts.pipeline)
    with new_context():
        check_elements(opts.pipeline, opts.from_pipeline_text)
        check_print_names(opts.print_before + opts.print_after)
    data, name = read_input(opts.input)
    if data.startswith(MLIR_BYTECODE_MAGIC):
        chunks, text = [Chunk(data)], ""
    else:
        try:
            text = data.decode()
        except UnicodeDecodeError:
            raise UsageError(f"'{name}' is neither UTF-8 text nor MLIR bytecode") from None
        chunks = split_chunks(text, opts.split_marker)
    results = [process_chunk(chunk, name, text, opts) for chunk in chunks]
    outputs = [r.output for r in results if r.output is not None]
    if outputs:
        write_output(opts.output, join_outputs(outputs, opts.output_split_marker))
    return 0 if all(r.ok for r in results) else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``xhlo-opt`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return run(parse_args(argv))
    except UsageError as err:
        sys.stdout.flush()
        sys.stderr.write(f"{PROG}: error: {err}\n")
        return 1
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
