"""The exceptions iosched raises, each carrying the message the CLI prints.

Every one is an :class:`IoschedError`; those about an input file say which file and line.
They pickle whole, so an error raised on a Dask worker reaches the caller as itself.
"""

from __future__ import annotations


class IoschedError(Exception):
    """Anything iosched refuses or fails to do."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line

    def __reduce__(self) -> tuple[type[IoschedError], tuple[str, str | None, int | None]]:
        return (type(self), (self.message, self.file, self.line))

    def __str__(self) -> str:
        return self.message


class JobFileError(IoschedError):
    """A job file that does not parse: ``.file`` and ``.line`` (None for the whole file)."""


class SpecError(IoschedError):
    """A run description (``--save-spec`` JSON) or a sweep spec that cannot be used."""


class DeviceError(IoschedError):
    """A device that is no preset, or a model file that does not read."""


class SettingError(IoschedError):
    """A tunable or knob (``set=``) the scheduler or machine refuses, or an unknown scheduler."""


class RunFailed(IoschedError):
    """A run that started but failed (the CLI's exit status 1)."""


class InternalError(IoschedError):
    """A bug in iosched (a Rust panic, caught before it reached Python)."""
