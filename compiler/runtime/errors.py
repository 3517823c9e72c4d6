"""The errors a multi-device run raises when a collective cannot complete."""

from __future__ import annotations


class CollectiveError(RuntimeError):
    """A collective could not complete on some device.

    ``device`` is the device that raised, ``op`` the runtime op it was in (if
    any), and ``errors`` maps every failed device to its own exception when the
    error summarizes a whole run.
    """

    def __init__(self, message: str, *, device: int | None = None, op=None, errors=None):
        super().__init__(message)
        self.device = device
        self.op = op
        self.errors: dict[int, BaseException] = dict(errors or {})


class CollectiveAborted(CollectiveError):
    """A peer failed (or finished) before joining: this device gave up, it did nothing wrong."""


class CollectiveMismatch(CollectiveError):
    """The devices disagree on the collective to run (op, shapes, groups or count)."""


class CollectiveTimeout(CollectiveError):
    """The peers did not arrive within the collective timeout."""


class DeviceArgumentError(CollectiveError, ValueError):
    """Devices' arguments were wrong (count, shape, dtype): a ValueError, as for one device."""


class DeviceError(CollectiveError):
    """A device's own failure (bad input, a runtime bug), wrapped with its device index."""
