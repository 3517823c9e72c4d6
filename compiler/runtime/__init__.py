"""xhlo.runtime: what compiled programs call to talk to other devices.

Collectives are compiled into byte-moving runtime calls (see
``xhlo.passes.lower_collectives``); this package implements those calls.
A device runs as a thread of this process (``Executable.run_replicated``,
transport ``inprocess``) or as an MPI rank (``mpiexec -n N xhlo-run ...``,
transport ``mpi``); the compiled program is the same for both.
"""

from .errors import (
    CollectiveAborted,
    CollectiveError,
    CollectiveMismatch,
    CollectiveTimeout,
    DeviceArgumentError,
    DeviceError,
)
from .program import DEFAULT_TIMEOUT, RuntimeBinding, RuntimeOp, bind, record_device_counts

__all__ = [
    "DEFAULT_TIMEOUT",
    "CollectiveAborted",
    "CollectiveError",
    "CollectiveMismatch",
    "CollectiveTimeout",
    "DeviceArgumentError",
    "DeviceError",
    "RuntimeBinding",
    "RuntimeOp",
    "bind",
    "record_device_counts",
]
