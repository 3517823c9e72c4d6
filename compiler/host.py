"""The CPU the JIT generates code for: LLVM targets the host's own features."""

from __future__ import annotations

import functools
import platform
from pathlib import Path


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The feature flags the kernel reports (``/proc/cpuinfo``); empty where it reports none,
    so code that needs a feature takes its portable path."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def describe() -> str:
    """The machine, OS and CPU features: what object code compiled here depends on."""
    return f"{platform.machine()} {platform.system()} {' '.join(sorted(cpu_flags()))}"


def avx512() -> bool:
    """512-bit vectors in 32 registers, with cheap masked loads and stores."""
    return "avx512f" in cpu_flags()


def wide_vector_registers() -> int:
    """How many 512-bit vectors (the width xhlo's kernels are written for) the register file
    holds at once: 32 zmm with AVX-512; 8, as pairs of the 16 ymm, without it."""
    return 32 if avx512() else 8
