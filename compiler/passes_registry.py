"""Lazy access to xhlo's pass registry (``xhlo.passes``), kept out of import time."""

from __future__ import annotations


def is_xhlo_pass(name: str) -> bool:
    from xhlo.passes import REGISTRY

    return name in REGISTRY


def create_pass(name: str, options: dict[str, str]):
    from xhlo.passes import get_pass_class

    return get_pass_class(name).from_options(options)
