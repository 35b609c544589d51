"""The exceptions the package raises (re-exported by :mod:`agentlog`)."""

from __future__ import annotations

from typing import Optional, Sequence


class AgentlogError(Exception):
    """Something could not be read or done.

    ``path`` is the file or directory it is about (``None`` when there is
    none), ``reason`` why, in one line; ``str(error)`` is ``"PATH: REASON"``.

    >>> import agentlog
    >>> try:
    ...     agentlog.open("/no/such/store")
    ... except agentlog.AgentlogError as e:
    ...     print(e.path, "|", e.reason)
    /no/such/store | No such file or directory (os error 2)
    """

    def __init__(self, path: Optional[str], reason: str) -> None:
        super().__init__(path, reason)
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path is not None else self.reason


class ReadError(AgentlogError):
    """A store, conversation or file could not be read at all (the
    operating system's error, or not what was expected at that path)."""


class NotFoundError(AgentlogError, KeyError):
    """No conversation, session or event has that ID (or ID prefix)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return AgentlogError.__str__(self)


class AmbiguousError(NotFoundError):
    """An ID prefix names several conversations or events; ``candidates``
    lists their full IDs."""

    def __init__(self, path: Optional[str], reason: str, candidates: Sequence[str] = ()) -> None:
        super().__init__(path, reason)
        self.candidates = list(candidates)


class FormatError(AgentlogError, ValueError):
    """A file is not of the format asked for (an ASF file that is not one,
    an unknown SDK version, a damaged checkpoint)."""

    def __str__(self) -> str:
        return AgentlogError.__str__(self)
