"""xhlo-run's npz files: named arguments in, named results out.

Arguments are ``arg0, arg1, ...`` (``arg{i}_dev{d}`` for one device); the names
are checked here, so a misspelt or unknown entry is an error that names it
instead of an argument silently missing.
"""

from __future__ import annotations

import re
import zipfile

import numpy as np

ARGUMENT = re.compile(r"arg(0|[1-9]\d*)(?:_dev(0|[1-9]\d*))?")


def load_arguments(path: str) -> dict[tuple[int, int | None], np.ndarray]:
    """``{(argument, device or None): array}`` of an npz file of arguments."""
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path}: not an npz archive (numpy.savez writes one, entries arg0, arg1, ...)")
    with np.load(path) as data:
        arrays = {}
        for name in data.files:
            match = ARGUMENT.fullmatch(name)
            if match is None:
                raise ValueError(f"{path}: unknown entry '{name}' (arguments are arg0, arg1, ..., "
                                 "or arg{i}_dev{d} for device d)")
            device = match.group(2)
            arrays[int(match.group(1)), None if device is None else int(device)] = data[name]
        return arrays


def save_results(path: str, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` to ``path`` itself (``numpy.savez`` given a name appends '.npz')."""
    with open(path, "wb") as file:
        np.savez(file, **arrays)
