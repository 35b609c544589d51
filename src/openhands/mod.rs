//! The OpenHands software-agent SDK's conversation directories (SDK 1.0.0 to
//! 1.58.2): the format the OpenHands CLI, the agent server and Agent Canvas
//! write.
//!
//! One directory per conversation, named by the conversation ID as 32
//! lowercase hex digits, holds `base_state.json` (the conversation's state,
//! rewritten in place on every change), `events/event-<index>-<event id>.json`
//! (one event per file, written once), and, from the agent server,
//! `meta.json`. Sub-agents' conversations nest under `subagents/<hex>/` in
//! the same layout. No file records a format version; shapes are told apart
//! by their members.
//!
//! # Reading
//!
//! - [`read_conversation`] (or a [`Reader`], which keeps its buffers from one
//!   conversation to the next) reads a directory; [`parse`] reads the same
//!   from in-memory file contents and gives the same [`Conversation`].
//! - Events are read as the SDK reads them: the names of `events/` are
//!   matched against the SDK's own pattern ([`NamePattern`], by version), and
//!   the events are the files of indexes 0, 1, 2… up to the first missing
//!   index. Every file of `events/` is accounted for with a [`FileStatus`]:
//!   an event, malformed, after a gap, a duplicate, or a bad name — with the
//!   reason ([`Reason`]). See [`events`](self::EventFiles) for the rules.
//! - Each event file is read into one byte buffer the conversation owns,
//!   parsed once, and only its envelope (kind, id, timestamp, source,
//!   parent_id) is taken from it ([`Event`]). Its kind's members are decoded
//!   on demand and without copying: [`Event::open`] gives a [`Doc`], whose
//!   decoders ([`Doc::message`], [`Doc::action`]…) return borrowed views
//!   made with [`json_object!`](crate::json_object). An event of a kind
//!   this module does not know, or whose members do not fit its kind, is
//!   still an event.
//! - Every decoded object keeps the members it does not declare, and those
//!   of another JSON type than declared, and writes them back byte for byte:
//!   decoding then encoding gives the same JSON value.
//! - A file that cannot be read or parsed is recorded with a typed
//!   [`FileError`] (path, and byte offset where known) and the rest is read.
//!   Reading fails ([`ReadError`]) only when the directory cannot be listed
//!   or holds no conversation.
//! - Answers that need only file names — the event count, the event IDs,
//!   the index order, gaps — come from [`EventFiles::scan`] and
//!   [`event_ids`], which open no event file.
//! - A whole store: [`Store`] streams its conversations (sub-agents
//!   included) one at a time through one reused reader, in parallel with
//!   the results in order (feature `parallel`), and [`list`] lists them
//!   from names alone (see [`store`]). [`Reader::read_into_with`] hands a
//!   visitor each parsed file, for members beyond the envelope without a
//!   second parse.
//!
//! # Where this follows the SDK rather than the reference
//!
//! The reference for this module is the documentation of a Go package that
//! reads the same directories (SDK 1.0 to 1.55); the facts about the format
//! come from the SDK's source. Where they differ:
//!
//! - [`KNOWN_KINDS`]: the SDK writes no new event kind between 1.55 and
//!   1.58.2 (the `openhands-sdk` 1.55.1 and 1.58.2 wheels declare the same
//!   `Event` subclasses), so the list is the reference's twenty.
//! - [`Kind::is_artifact`] keeps the reference's two kinds, which the SDK itself
//!   calls "non-tree artifacts" when it picks a leaf; but the SDK does make a
//!   `ConversationErrorEvent` the head when it appends one (1.31–1.58), which
//!   [`Kind::becomes_head`] tells.
//! - File names: the reference reads the 1.30+ pattern; here the pattern is
//!   chosen by version ([`NamePattern`]), and matched as Python's `re` does
//!   (`\d` is any Unicode decimal digit, `$` also matches before a final
//!   newline).
//! - Duplicate indexes: the SDK keeps whichever file `os.listdir` yields last,
//!   which no reader can reproduce; here the name that sorts first (by bytes)
//!   wins, and the others are [`FileStatus::Duplicate`].
//! - An event file is read by the name it is listed under; the SDK rebuilds
//!   the name from the index padded to five digits, so a hand-made
//!   over-padded name (`event-000007-….json`) is read here but not by the SDK
//!   1.30+.
//! - [`parse_time`] takes a fixed UTC offset rather than a time-zone database
//!   (the standard library has none); callers that need daylight-saving
//!   rules resolve the offset themselves.

//!
//! # Hostile stores and resource bounds
//!
//! Stores come from crashing agents, half-synced laptops and other people;
//! `tests/it/hostile/`, `tests/it/openhands/live_writer.rs` and the fuzz targets
//! (`fuzz/`) hold the reader to this:
//!
//! - A path that is not a regular file where a file is expected (a
//!   directory, a FIFO, a device, a link to one) is
//!   [`SourceError::NotAFile`](crate::source::SourceError::NotAFile), found
//!   before it is opened (opening a FIFO would wait forever). Unreadable
//!   files, link loops, files over [`MAX_SIZE`] (refused from their size,
//!   unread), files that vanish between listing and reading, torn files of a
//!   live writer: each is recorded on its file with a typed [`FileError`],
//!   and the rest is read; a torn file is read whole by the next read once
//!   its writer finishes. Symbolic links are followed, as the SDK follows
//!   them, except that [`find_sessions`] does not walk through a link to a
//!   directory that is not a conversation (it could lead to `/`), and a link
//!   under `subagents/` back to the conversation or above it is no
//!   sub-agent (it is recorded: [`Conversation::subagent_loops`]). Names that are not UTF-8 are listed lossily and still
//!   reached by their real bytes.
//! - Memory: reading a conversation holds its event files' bytes once (one
//!   byte per byte), never more than the reader's budget for one
//!   conversation ([`EVENT_BUDGET`], 1 GiB, unless
//!   [`Reader::set_event_budget`] says otherwise: an event file past it is
//!   not read and is [`FileStatus::Unreadable`] with a typed
//!   [`SourceError::OverBudget`](crate::source::SourceError::OverBudget)),
//!   plus its state and meta (each at most [`MAX_SIZE`]); sub-agents are
//!   read one at a time, each a conversation with a budget of its own.
//!   About 600 bytes per event file besides (name, records,
//!   envelope strings, vector growth; measured on 10,000 events), and, one
//!   file at a time, the parse of that file: up
//!   to 34 bytes per byte of the file for the densest JSON, 2.6 for a
//!   typical event (see [`json`](crate::json#resource-bounds) for the
//!   breakdown). Decoders borrow. Measured peaks, per input byte, for one
//!   event (`tests/alloc/resources.rs`): reader and decoders 37, view 34.
//! - Time and termination: every loop over input ends. The directory walk
//!   of [`find_sessions`] visits each directory once (by device and inode)
//!   and never through a link; parent walks stop at the first repeated event
//!   and cycles are found in one pass; events are sorted once; the view
//!   applies condensations in a blocked list (offsets clamped; about
//!   `n * sqrt(n)` for `n` events) and reaches its properties' fixed point
//!   with counters, each event dropped once (`benches/README.md` times it on
//!   crafted stores of 100,000 events). Nothing recurses over input; JSON
//!   nesting is capped at
//!   [`MAX_DEPTH`](crate::json::MAX_DEPTH).

pub mod changes;
pub mod checkpoint;
mod conversation;
mod discover;
mod envelope;
mod error;
mod event_files;
#[cfg(feature = "html")]
pub mod html;
mod json_file;
mod kind;
mod listed;
mod reader;
mod state;
pub mod store;
mod stored;
#[cfg(test)]
pub(crate) mod test_corpus;
mod time;
mod usage;
pub mod view;

pub use changes::{Change, ChangeKind, Changes, ChangesError, ScanOptions};
pub use checkpoint::{Checkpoint, CheckpointError};
pub use conversation::Conversation;
pub use discover::{
    Discovery, LIST_AHEAD_MIN, conversation_dir, discover, discover_with, event_ids, find_sessions,
    is_conversation_dir, is_conversation_file, state_id, subagent_parent,
};
pub use envelope::{Event, Events};
pub use error::{DecodeError, FileError, ReadError};
pub use event_files::{
    EventFiles, EventName, File, FileStatus, NameError, NamePattern, Reason, parse_event_name,
};
pub use json_file::{Doc, JsonFile, read_state};
pub use kind::{
    KIND_ACP_TOOL_CALL, KIND_ACTION, KIND_AGENT_ERROR, KIND_COMPLETION_LOG, KIND_CONDENSATION,
    KIND_CONDENSATION_REQUEST, KIND_CONDENSATION_SUMMARY, KIND_CONVERSATION_ERROR,
    KIND_HOOK_EXECUTION, KIND_INTERRUPT, KIND_MESSAGE, KIND_OBSERVATION, KIND_PAUSE,
    KIND_SECURITY_ANALYSIS, KIND_SERVER_ERROR, KIND_STATE_UPDATE, KIND_STREAMING_DELTA,
    KIND_SYSTEM_PROMPT, KIND_TOKEN, KIND_USER_REJECT, KNOWN_KINDS, Kind,
};
pub use listed::{EventsListing, LISTED_BUDGET, ListedDiscovery, discover_listed};
pub use reader::{EVENT_BUDGET, FileEntry, Parsed, Reader, parse, read_conversation};
pub use state::{AgentInfo, Cost, Latency, Meta, Metrics, MetricsMap, State, Stats, TokenUsage};
pub use store::{
    Conversations, Listed, Listing, Store, StoreConversation, StoreError, StoreItem, Stream, list,
    list_with,
};
pub use stored::{
    Action, ActionEvent, AgentErrorEvent, Condensation, Contents, MessageEvent, Observation,
    ObservationEvent, StoredContent, StoredMessage, StoredReasoningItem, StoredThinkingBlock,
    StoredToolCall, StrMap, SystemPromptEvent, TerminalMetadata, UserRejectObservation,
};
pub use time::{ParsedTime, Timestamp, UtcOffset, parse_time};
#[cfg(feature = "parquet")]
pub(crate) use usage::model_of;
pub use usage::{StateUsage, Usage, UsageByModel, UsageEntry, is_subagent_copy};

pub use crate::MAX_SIZE;
/// The bookkeeping every decoded object carries: its members in order, the
/// raw undeclared and mistyped ones, and which declared ones were `null`.
pub use crate::json::Members;

use crate::json::{Int, Value};

/// The conversation's state, rewritten on every change.
pub const FILE_BASE_STATE: &str = "base_state.json";
/// The agent server's stored conversation (`StoredConversation`).
pub const FILE_META: &str = "meta.json";
/// The directory of event files.
pub const DIR_EVENTS: &str = "events";
/// The directory of sub-agents' conversations (1.13.0+).
pub const DIR_SUBAGENTS: &str = "subagents";
/// The directory of tools' full outputs and screenshots (1.4.0+).
pub const DIR_OBSERVATIONS: &str = "observations";

/// An event the agent emitted.
pub const SOURCE_AGENT: &str = "agent";
/// An event from the user.
pub const SOURCE_USER: &str = "user";
/// An event from the environment (tools, condenser, hooks' feedback).
pub const SOURCE_ENVIRONMENT: &str = "environment";
/// An event from a hook (1.13.0+).
pub const SOURCE_HOOK: &str = "hook";

/// The `type` of a `TextContent`.
pub const CONTENT_TEXT: &str = "text";
/// The `type` of an `ImageContent`.
pub const CONTENT_IMAGE: &str = "image";

/// The `type` of an Anthropic thinking block.
pub const BLOCK_THINKING: &str = "thinking";
/// The `type` of an Anthropic redacted thinking block.
pub const BLOCK_REDACTED_THINKING: &str = "redacted_thinking";

/// The task tool's action kind (1.12.0+).
pub const ACTION_TASK: &str = "TaskAction";
/// The delegate tool's action kind.
pub const ACTION_DELEGATE: &str = "DelegateAction";

/// The kind of an agent that drives an external ACP agent, such as Claude
/// Code, and records its tool calls rather than a model context (1.12.0+).
pub const AGENT_KIND_ACP: &str = "ACPAgent";

/// The reason OpenHands writes when a rejection gave none.
pub const DEFAULT_REJECTION_REASON: &str = "User rejected the action";

/// The start of an `AgentErrorEvent`'s error that answers a call a pause or
/// an interrupt cut (1.23.0+).
pub const INTERRUPTED_PREFIX: &str = "Tool call interrupted before completion.";

/// The `parent_id` that marks an event a new root of the event tree (1.31.0+).
pub const ROOT_PARENT: &str = "__root__";

/// The largest token count [`count`] accepts: a billion billion.
pub const MAX_COUNT: u64 = 1_000_000_000_000_000_000;

/// Reads a token count: 0 for one that is absent, `null`, not a number,
/// negative, not a whole number, or over a billion billion ([`MAX_COUNT`]).
/// A whole number written with a fraction (`12.0`) counts.
pub fn count(v: Option<Value<'_>>) -> u64 {
    match v.and_then(|v| v.as_int()) {
        Some(Int { value, exact: true }) if value >= 0 && value as u64 <= MAX_COUNT => value as u64,
        _ => 0,
    }
}

/// Reads an integer written as a number, possibly `12.0`; `exact` is false
/// when a fraction was dropped. `None` for an absent value, another type,
/// `NaN`, infinities, and numbers outside `i64`.
pub fn int(v: Option<Value<'_>>) -> Option<Int> {
    v.and_then(|v| v.as_int())
}

/// Reads a number written as a number (Python's `NaN` and `Infinity`
/// included); `None` for an absent value or another type.
pub fn float(v: Option<Value<'_>>) -> Option<f64> {
    v.and_then(|v| v.as_f64())
}

/// Whether `v` is absent or `null` (the SDK writes neither for `None`: it
/// leaves the member out).
pub fn is_null(v: Option<Value<'_>>) -> bool {
    v.is_none_or(|v| v.is_null())
}

/// The ID OpenHands (1.10.0+) gives the summary a condensation inserts,
/// which a later condensation forgets it by: `<condensation id>-summary`.
pub fn summary_id(condensation_id: &str) -> String {
    let mut s = String::with_capacity(condensation_id.len() + 8);
    s.push_str(condensation_id);
    s.push_str("-summary");
    s
}

/// A conversation ID as its directory names it: the dashes removed and the
/// hex digits lowercased (`uuid.hex`), so that `base_state.json`'s dashed
/// `id`, `meta.json`'s hex `id` and a directory name compare equal. Braces
/// and a `urn:uuid:` prefix, which Python's `uuid.UUID` also accepts, are
/// removed. A string that is not a UUID is returned with the same changes.
pub fn hex_id(id: &str) -> String {
    let mut s = id.trim();
    if let Some(rest) = s.strip_prefix("urn:uuid:") {
        s = rest;
    }
    if let Some(rest) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        s = rest;
    }
    s.chars()
        .filter(|&c| c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether `name` is a conversation ID as a directory names it: 32 hex
/// digits, lowercase.
pub fn is_hex_id(name: &str) -> bool {
    name.len() == 32
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
