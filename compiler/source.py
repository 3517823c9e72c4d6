"""Turning what a user hands to xhlo into an ``ir.Module`` in xhlo's context."""

from __future__ import annotations

import os
from pathlib import Path

from . import check_syntax
from ._mlir import ir, stablehlo_api
from .errors import CompilerError, format_diagnostics

SourceLike = "str | bytes | os.PathLike | ir.Module"


def _looks_like_path(text: str) -> bool:
    return "\n" not in text and text.endswith((".mlir", ".mlirbc")) and "{" not in text


def load_module(source, context: ir.Context, name: str | None = None) -> tuple[ir.Module, str]:
    """(module, display name). Accepts MLIR text, a path, bytecode/portable bytes, or a Module.

    ``name`` is the file name diagnostics show for text and bytes sources.
    """
    from . import jax_interop  # imports JAX only for JAX artifacts

    if jax_interop.is_jax_export(source):  # Exported or its serialize() bytes
        return jax_interop.exported_module(source, context)
    if isinstance(source, ir.Module):
        # Round-trip through bytecode: the caller's module may live in another context.
        import io

        buf = io.BytesIO()
        source.operation.write_bytecode(buf)
        return _parse(buf.getvalue(), context, "<module>"), "<module>"
    if hasattr(source, "as_mlir_text"):  # builder computations and similar
        return _parse(source.as_mlir_text(), context, "<builder>"), "<builder>"
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"no such MLIR file: {path}")
        data = path.read_bytes()
        return _parse(data, context, str(path)), str(path)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _parse(bytes(source), context, name or "<bytes>"), name or "<bytes>"
    if isinstance(source, str):
        return _parse(source, context, name or "<string>"), name or "<string>"
    raise TypeError(
        f"cannot compile a {type(source).__name__}: expected MLIR text, a path, bytes or an ir.Module"
    )


MLIR_BYTECODE_MAGIC = b"ML\xefR"  # the first bytes of every MLIR bytecode file


def _text(data: bytes, name: str) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise CompilerError(f"{name}: neither UTF-8 text nor MLIR bytecode", stage="parse") from None


def _is_binary(data: bytes) -> bool:
    return data.startswith(MLIR_BYTECODE_MAGIC)


def _parse(data: str | bytes, context: ir.Context, name: str) -> ir.Module:
    with context:
        if isinstance(data, bytes) and _is_binary(data):
            quiet = context.attach_diagnostic_handler(lambda diagnostic: True)  # failures fall through
            try:  # a StableHLO portable artifact (VHLO bytecode) first
                return stablehlo_api.deserialize_portable_artifact(context, data)
            except Exception:
                pass
            finally:
                quiet.detach()
            try:
                return ir.Module.parse(data)
            except ir.MLIRError as err:
                from .jax_interop import artifact_text_via_jax

                text = artifact_text_via_jax(data)  # Shardy attributes need JAX's dialects
                if text is not None:
                    return _parse(text, context, name)
                raise CompilerError(
                    f"{name}: not valid MLIR bytecode or a StableHLO portable artifact: "
                    + format_diagnostics(err, name)
                ) from None
        if isinstance(data, bytes):
            data = _text(data, name)
        try:
            data = check_syntax.to_generic(data)
        except check_syntax.CheckSyntaxError as err:
            raise CompilerError(f"{name}: {err}", stage="parse") from None
        try:
            return ir.Module.parse(data)
        except ir.MLIRError as err:
            raise CompilerError(format_diagnostics(err, name), stage="parse") from None
