"""Type stubs of the package ``agentlog``: the conversation stores of AI
coding agents (OpenHands SDK conversations, OC Chat sessions, Agent Session
Format files), read from Python by the Rust crate of the same name.

Every read releases the GIL; a Rust panic surfaces as
``pyo3_runtime.PanicException`` (never an abort of the interpreter).

>>> import agentlog
>>> store = agentlog.open("examples/store")
>>> conv = next(iter(store))
>>> [e.kind for e in conv.events][:1]
['SystemPromptEvent']
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Optional, Union

from ._errors import (
    AgentlogError as AgentlogError,
    AmbiguousError as AmbiguousError,
    FormatError as FormatError,
    NotFoundError as NotFoundError,
    ReadError as ReadError,
)

_Path = Union[str, "os.PathLike[str]"]
_Json = Any
"""A JSON value as ``json.loads`` gives it."""

__all__: list[str]

def open(path: _Path) -> Store:
    """Opens a store: an OpenHands conversations directory (any directory
    conversations are found under), one conversation directory or a file of
    one, or an OC Chat sessions directory. ``~`` is expanded.

    Raises :class:`ReadError` (``path``, ``reason``) when the path cannot be
    read, nothing of either format is under it, or it is an OC Chat store
    in the flat layout from before session directories.

    >>> agentlog.open("~/.openhands/conversations")      # doctest: +SKIP
    <agentlog.Store openhands (52 conversations) at ...>
    """

def read_asf(path: _Path) -> AsfSession:
    """Reads an Agent Session Format file (RFC 0001, ``agentsession/0.5`` to
    ``0.10``): :class:`ReadError` when it cannot be read,
    :class:`FormatError` when it is not an ASF session file.

    >>> agentlog.read_asf("session.jsonl").verify()      # doctest: +SKIP
    []
    """

class Store:
    """A store: the OpenHands conversations under a path, or an OC Chat
    sessions directory's sessions. Iterating reads one conversation at a
    time; ``len`` counts the top-level ones; ``store[id]`` looks one up by
    its ID or a unique prefix (case ignored).

    >>> store = agentlog.open("examples/store")
    >>> conv = store[store.ids_list()[0][:8]]
    """

    @property
    def format(self) -> Literal["openhands", "occhat"]: ...
    @property
    def path(self) -> Path:
        """The path the store was opened at."""
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Union[Conversation, Session]]:
        """The top-level conversations (or sessions), each read when reached."""
    def __getitem__(self, id: str) -> Union[Conversation, Session]:
        """By ID or unique prefix: :class:`NotFoundError`, :class:`AmbiguousError`."""
    def get(self, id: str, default: Any = None) -> Any:
        """Like ``store[id]``, ``default`` when nothing has that ID (an
        ambiguous prefix still raises)."""
    def ids_list(self) -> list[str]:
        """The top-level IDs (session names), in iteration order."""
    def conversations(self, subagents: bool = True) -> Iterator[Union[Conversation, Session]]:
        """Every conversation, each followed by its sub-agents' (depth first,
        in name order), as ``agentlog export`` walks them.

        >>> [c.depth for c in store.conversations()]          # doctest: +SKIP
        [0, 1, 0, 0]
        """
    def read_all(self) -> list[Union[Conversation, Session]]:
        """Every top-level conversation read at once, in parallel on all
        cores (the GIL released), in iteration order."""
    def table(self, name: Literal["conversations", "events", "messages", "tool_calls", "llm_calls"], json: bool = True) -> Any:
        """The Parquet export's table ``name`` (the columns of
        ``docs/parquet.md``) over every conversation, sub-agents' included:
        a ``pyarrow.RecordBatchReader`` when pyarrow is installed, else an
        :class:`ArrowStream`. Conversations are read as batches are asked
        for. :class:`FormatError` for an unknown name.

        >>> import polars as pl                                   # doctest: +SKIP
        >>> pl.from_arrow(store.events_table().read_all())        # doctest: +SKIP
        """
    def conversations_table(self) -> Any: ...
    def events_table(self, json: bool = True) -> Any:
        """``json=False``: ``event_json`` left null."""
    def messages_table(self) -> Any: ...
    def tool_calls_table(self) -> Any: ...
    def llm_calls_table(self) -> Any: ...
    def changes_since(
        self,
        checkpoint: Union[Checkpoint, SessionsCheckpoint, _Path, None] = None,
        settle: Optional[float] = None,
        verify_files: bool = False,
    ) -> Union[Changes, SessionChanges]:
        """What changed since ``checkpoint`` (a :class:`Checkpoint`, a
        checkpoint file's path — missing or empty is none yet — or ``None``:
        everything), as ``agentlog export --checkpoint`` reads it.
        ``verify_files``: stat every event file already handed out and hand a
        conversation out again (as a rewrite) when one changed in place, as
        ``--verify-files`` does.

        An OC Chat sessions directory gives :class:`SessionChanges` (from a
        :class:`SessionsCheckpoint` or its file); ``settle`` and
        ``verify_files`` are refused there (``ValueError``).

        >>> changes = store.changes_since("store.cp")            # doctest: +SKIP
        >>> for change in changes:                               # doctest: +SKIP
        ...     index(change)
        >>> changes.checkpoint().save("store.cp")                # doctest: +SKIP
        """
    def follow(
        self,
        checkpoint: Union[Checkpoint, SessionsCheckpoint, _Path, None] = None,
        poll: Optional[float] = None,
        settle: float = 2.0,
        idle_timeout: Optional[float] = None,
        verify_files: bool = False,
    ) -> Union[Follow, SessionFollow]:
        """Follows the store live (file-system events, or every ``poll``
        seconds): everything since ``checkpoint`` first, read a conversation
        (or session) at a time as ``changes_since`` reads it, then what was
        written meanwhile and each change as it is written; ends after ``idle_timeout`` seconds without one
        (``None``: never; Ctrl-C stops it). An OC Chat sessions directory
        gives a :class:`SessionFollow` (``verify_files`` refused, ``settle``
        unused).

        >>> for change in store.follow("store.cp"):              # doctest: +SKIP
        ...     print(change.kind, change.id, len(change.events))
        """

class Conversation:
    """One OpenHands conversation directory, read: its metadata (what
    ``agentlog ls --json`` prints), its events, tree, view and usage.

    >>> conv.view()[0]["role"]                                    # doctest: +SKIP
    'system'
    """

    @property
    def id(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def title(self) -> Optional[str]: ...
    @property
    def model(self) -> Optional[str]: ...
    @property
    def created(self) -> Optional[str]: ...
    @property
    def updated(self) -> Optional[str]: ...
    @property
    def execution_status(self) -> Optional[str]: ...
    @property
    def parent_id(self) -> Optional[str]: ...
    @property
    def depth(self) -> int: ...
    @property
    def state(self) -> Optional[dict[str, _Json]]:
        """``base_state.json`` as a dict."""
    @property
    def meta(self) -> Optional[dict[str, _Json]]:
        """``meta.json`` as a dict."""
    @property
    def events(self) -> Events: ...
    @property
    def subagents(self) -> list[Conversation]: ...
    @property
    def sdk_version(self) -> str:
        """The SDK release whose view rules apply, inferred (``"1.31.2"``)."""
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Event]: ...
    def event(self, id: str) -> Event:
        """By file ID or unique prefix."""
    def view(
        self, branch: Optional[str] = None, sdk_version: Optional[str] = None, sdk_messages: bool = False
    ) -> list[dict[str, _Json]]:
        """The messages the model is sent next, as the SDK's chat-completions
        wire dicts (``agentlog view --json``)."""
    def view_event_ids(self, branch: Optional[str] = None, sdk_version: Optional[str] = None) -> list[str]: ...
    def tree(self) -> dict[str, _Json]:
        """``agentlog tree --json`` without ``path`` and ``subagents``, each
        branch also with ``event_ids``."""
    def usage(self) -> dict[str, dict[str, Union[int, float]]]:
        """Tokens and cost by model: ``calls``, ``prompt_tokens``,
        ``completion_tokens``, ``cache_read_tokens``, ``cache_write_tokens``,
        ``reasoning_tokens``, ``cost``."""
    def total_usage(self) -> dict[str, Union[int, float]]: ...
    def ls_row(self) -> dict[str, _Json]: ...
    def to_asf(self) -> Converted:
        """The conversation as an ASF session file, as ``agentlog asf convert``
        writes it.

        >>> conv.to_asf().save("sessions/")                      # doctest: +SKIP
        """

class Events:
    """A conversation's events in read order, each made when asked for:
    ``len``, indexing (negative too), iteration; slice ``list(events)``."""

    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Event: ...
    def __iter__(self) -> Iterator[Event]: ...
    def kinds(self) -> list[Optional[str]]:
        """Every event's kind in one call (no event objects made)."""

class Event:
    """One event: envelope attributes; members decoded on access.

    >>> e = conv.events[1]                                        # doctest: +SKIP
    >>> e.kind, e["llm_message"]["role"]                          # doctest: +SKIP
    ('MessageEvent', 'user')
    """

    @property
    def kind(self) -> Optional[str]: ...
    @property
    def id(self) -> Optional[str]: ...
    @property
    def file_id(self) -> str: ...
    @property
    def timestamp(self) -> Optional[str]: ...
    @property
    def source(self) -> Optional[str]: ...
    @property
    def parent_id(self) -> Optional[str]: ...
    @property
    def index(self) -> int: ...
    @property
    def file(self) -> str: ...
    @property
    def error(self) -> Optional[str]:
        """Why the file did not read as an event."""
    @property
    def raw(self) -> bytes:
        """The file's bytes, as written."""
    def __getitem__(self, key: str) -> _Json: ...
    def __contains__(self, key: str) -> bool: ...
    def get(self, key: str, default: Any = None) -> _Json: ...
    def keys(self) -> list[str]: ...
    def to_dict(self) -> dict[str, _Json]:
        """``json.loads(event.raw)``."""

class Session:
    """One OC Chat session, loaded as OC Chat's ``persistence.py`` loads it."""

    @property
    def name(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def meta_path(self) -> Path: ...
    @property
    def model(self) -> str: ...
    @property
    def created(self) -> Optional[str]: ...
    @property
    def updated(self) -> str: ...
    @property
    def entry(self) -> dict[str, _Json]: ...
    @property
    def messages(self) -> list[dict[str, _Json]]: ...
    def __len__(self) -> int: ...
    def ls_row(self) -> dict[str, _Json]: ...
    def to_asf(self) -> Converted: ...

class ArrowStream:
    """An Arrow C stream of one table (``__arrow_c_stream__``), consumed once."""

    @property
    def table(self) -> str: ...
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...

class Checkpoint:
    """What a store was read to; saved once the changes are durable.

    >>> cp = store.changes_since(None).checkpoint()               # doctest: +SKIP
    >>> cp.save("store.cp")                                        # doctest: +SKIP
    """

    @staticmethod
    def load(path: _Path) -> Checkpoint: ...
    @staticmethod
    def from_bytes(data: bytes) -> Checkpoint: ...
    def save(self, path: _Path) -> None:
        """Atomically: the old file or the new one, never a part."""
    def to_bytes(self) -> bytes: ...
    @property
    def root(self) -> Path: ...
    @property
    def events(self) -> int:
        """How many events it records as handed out."""
    def __len__(self) -> int: ...

class Change:
    """One changed conversation and the events to hand out."""

    @property
    def kind(self) -> Literal["new", "updated", "rewrite", "removed"]: ...
    @property
    def id(self) -> str: ...
    @property
    def parent_id(self) -> Optional[str]: ...
    @property
    def depth(self) -> int: ...
    @property
    def path(self) -> Path: ...
    @property
    def rel(self) -> Path: ...
    @property
    def state_changed(self) -> bool: ...
    @property
    def meta_changed(self) -> bool: ...
    @property
    def gap_filled(self) -> bool: ...
    @property
    def repaired(self) -> list[int]: ...
    @property
    def from_index(self) -> int: ...
    @property
    def to_index(self) -> int: ...
    @property
    def again(self) -> bool: ...
    @property
    def state(self) -> Optional[dict[str, _Json]]: ...
    @property
    def meta(self) -> Optional[dict[str, _Json]]: ...
    @property
    def events(self) -> list[Event]: ...

class Changes(Iterator[Change]):
    """One changes-since scan."""

    def __iter__(self) -> Changes: ...
    def __next__(self) -> Change: ...
    def checkpoint(self) -> Checkpoint:
        """What was handed out so far (at the end: the store as read)."""
    @property
    def errors(self) -> list[ReadError]: ...
    @property
    def finished(self) -> bool: ...

class Follow(Iterator[Change]):
    """Following a store live."""

    def __iter__(self) -> Follow: ...
    def __next__(self) -> Change: ...
    def checkpoint(self) -> Optional[Checkpoint]:
        """What was handed out so far: each scan's changes are read as the
        iterator reaches them, and recorded when handed out."""
    @property
    def pending(self) -> int:
        """Changes found and not handed out yet: always 0, since none is
        held (kept for code that waits for 0 before saving a checkpoint)."""
    @property
    def polling(self) -> Optional[str]: ...
    @property
    def errors(self) -> list[ReadError]:
        """The conversations that could not be read. Each scan tries such
        a conversation again; an error is listed once, however many scans
        met it."""

class Converted:
    """A conversation or session converted to an ASF session file."""

    @property
    def session_id(self) -> str: ...
    @property
    def data(self) -> bytes: ...
    @property
    def report(self) -> list[dict[str, str]]:
        """``asf convert --report``'s rows: ``session``, ``event``, ``kind``,
        ``outcome``, ``detail``."""
    def session(self) -> AsfSession: ...
    def save(self, directory: _Path) -> Path:
        """Writes ``<directory>/<session_id>.jsonl`` atomically; its path."""

class AsfSession:
    """An ASF session file, read.

    >>> s = agentlog.read_asf("session.jsonl")                  # doctest: +SKIP
    >>> s.context().chat_messages()                              # doctest: +SKIP
    """

    @staticmethod
    def from_bytes(data: bytes) -> AsfSession: ...
    @property
    def path(self) -> Optional[Path]: ...
    @property
    def id(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def data(self) -> bytes: ...
    @property
    def header(self) -> dict[str, _Json]: ...
    @property
    def entries(self) -> list[dict[str, _Json]]: ...
    @property
    def leaf(self) -> Optional[str]: ...
    def __len__(self) -> int: ...
    def verify(self, request_hashes: bool = True) -> list[dict[str, Union[str, int]]]:
        """``asf check --json``'s rows: ``path``, ``line``, ``problem``, ``detail``."""
    def context(self, leaf: Optional[str] = None) -> AsfContext: ...

class AsfContext:
    """The request at an entry, as the context algorithm builds it."""

    @property
    def leaf(self) -> str: ...
    @property
    def settings(self) -> dict[str, _Json]: ...
    @property
    def items(self) -> list[dict[str, _Json]]: ...
    @property
    def entries(self) -> list[str]: ...
    @property
    def item_entries(self) -> list[str]: ...
    @property
    def request_hash(self) -> str: ...
    def chat_messages(self) -> list[dict[str, _Json]]: ...
    def to_dict(self) -> dict[str, _Json]:
        """``asf context --json``'s object."""

class SessionsCheckpoint:
    """What an OC Chat sessions directory was read to (per session: its
    meta file, how many messages were handed out, a digest of them);
    saved once the changes are durable.

    >>> cp = store.changes_since(None).checkpoint()               # doctest: +SKIP
    >>> cp.save("sessions.cp")                                     # doctest: +SKIP
    """

    @staticmethod
    def load(path: _Path) -> SessionsCheckpoint: ...
    @staticmethod
    def from_bytes(data: bytes) -> SessionsCheckpoint: ...
    def save(self, path: _Path) -> None:
        """Atomically: the old file or the new one, never a part."""
    def to_bytes(self) -> bytes: ...
    @property
    def root(self) -> Path: ...
    @property
    def messages(self) -> int:
        """How many messages it records as handed out, over every session."""
    def __len__(self) -> int: ...

class SessionChange:
    """One changed OC Chat session and the messages to hand out (indexes
    ``range(from_index, to_index)`` of its chat log; every message for a
    ``rewrite``)."""

    @property
    def kind(self) -> Literal["new", "updated", "rewrite", "removed"]: ...
    @property
    def id(self) -> str:
        """The session's name (``Session.id``)."""
    @property
    def from_index(self) -> int: ...
    @property
    def to_index(self) -> int: ...
    @property
    def messages(self) -> list[dict[str, _Json]]: ...

class SessionChanges(Iterator[SessionChange]):
    """One changes-since pass over an OC Chat sessions directory, a session
    loaded at a time."""

    def __iter__(self) -> SessionChanges: ...
    def __next__(self) -> SessionChange: ...
    def checkpoint(self) -> SessionsCheckpoint:
        """What was handed out so far (at the end: the directory as read)."""
    @property
    def finished(self) -> bool: ...

class SessionFollow(Iterator[SessionChange]):
    """Following an OC Chat sessions directory live."""

    def __iter__(self) -> SessionFollow: ...
    def __next__(self) -> SessionChange: ...
    def checkpoint(self) -> SessionsCheckpoint:
        """What was handed out so far: each scan's changes are read as the
        iterator reaches them, and recorded when handed out."""
    @property
    def pending(self) -> int:
        """Changes found and not handed out yet: always 0, since none is
        held (kept for code that waits for 0 before saving a checkpoint)."""
    @property
    def polling(self) -> Optional[str]: ...
