"""agentlog: the conversation stores of AI coding agents, read from Python.

OpenHands SDK conversations (every SDK release from 1.0), their sub-agents,
and OC Chat session stores, read lazily and losslessly by the Rust crate
of the same name::

    import agentlog

    store = agentlog.open("~/.openhands/conversations")   # or one conversation
    for conv in store:                                     # read one at a time
        print(conv.id, conv.title, len(conv.events))
        for event in conv.events:                          # envelopes only
            if event.kind == "MessageEvent":
                print(event.source, event["llm_message"]["role"])
        messages = conv.view()                             # the next request's messages

    events = store.events_table().read_all()               # a pyarrow.Table
    changes = store.changes_since("store.cp")              # what changed since
    for change in changes:
        ...
    changes.checkpoint().save("store.cp")

An OC Chat sessions directory opens the same way; its ``changes_since`` and
``follow`` hand out ``SessionChange`` objects (the messages each save added)
and its checkpoint is a ``SessionsCheckpoint``.

See the README's "Python" section and ``help(agentlog.Store)``.
"""

from __future__ import annotations

import os as _os

from ._agentlog import (  # noqa: F401
    ArrowStream,
    AsfContext,
    AsfSession,
    Change,
    Changes,
    Checkpoint,
    Conversation,
    Converted,
    Event,
    Events,
    Follow,
    Session,
    SessionChange,
    SessionChanges,
    SessionFollow,
    SessionsCheckpoint,
    Store,
    open as _open,
    read_asf as _read_asf,
)
from ._errors import (  # noqa: F401
    AgentlogError,
    AmbiguousError,
    FormatError,
    NotFoundError,
    ReadError,
)

__all__ = [
    "open",
    "read_asf",
    "Store",
    "Conversation",
    "Event",
    "Events",
    "Session",
    "ArrowStream",
    "Checkpoint",
    "Change",
    "Changes",
    "Follow",
    "SessionsCheckpoint",
    "SessionChange",
    "SessionChanges",
    "SessionFollow",
    "AsfSession",
    "AsfContext",
    "Converted",
    "AgentlogError",
    "AmbiguousError",
    "FormatError",
    "NotFoundError",
    "ReadError",
]


def open(path: "str | _os.PathLike[str]") -> Store:
    """Opens a store: an OpenHands conversations directory (any directory
    conversations are found under), one conversation directory or a file
    of one, or an OC Chat sessions directory. ``~`` is expanded.

    Raises :class:`ReadError` (``path``, ``reason``) when the path cannot be
    read or nothing of either format is under it.

    >>> import agentlog
    >>> agentlog.open("examples/store").format
    'openhands'
    """
    return _open(_os.path.expanduser(_os.fspath(path)))


def read_asf(path: "str | _os.PathLike[str]") -> AsfSession:
    """Reads an Agent Session Format file (RFC 0001, ``agentsession/0.5``
    to ``0.10``). ``~`` is expanded.

    Raises :class:`ReadError` when the file cannot be read,
    :class:`FormatError` when it is not an ASF session file.

    >>> import agentlog
    >>> s = agentlog.read_asf("tests/data/asf/sessions/basic.jsonl")
    >>> s.verify()
    []
    """
    return _read_asf(_os.path.expanduser(_os.fspath(path)))
