//! Agent Session Format (ASF): RFC 0001 "Agent Session Format", draft 0.10
//! (header `format: "agentsession/0.10"`, payload profile
//! `openresponses/2026-04-24`): one append-only JSONL file per session,
//! whose entries form a tree named by hashes.
//!
//! - [`Session::read`] reads a file line by line on the crate's JSON layer:
//!   the header, then the entries, each borrowing its line. A file whose
//!   first line is not a session header, or whose `format` is not
//!   `agentsession/0.5` to `agentsession/0.10`, is refused with a
//!   [`HeaderError`] naming the format; anything else is read, a last line
//!   that does not parse tolerated and reported.
//! - [`Session::verify`] reports every rule this reader checks as a typed
//!   [`Problem`] with its line: header and envelope members, the `ts`
//!   spelling, the I-JSON test, each `id` equal to its hash (content hash of
//!   the body, then the envelope hash over it), parents earlier in the file,
//!   unique ids, `parents` references, the prefix of a file with a `base`,
//!   `first_kept` and `target` on the path, `from` in the file, unique
//!   non-empty call ids, the members each core type requires, the
//!   `records` promise, each call's decision order, `run` entries, the
//!   `config` rules (those against the settings in force included), and
//!   each `response`'s `request_hash` against the request its path
//!   rebuilds. An id seen twice is one entry, reported. The conformance
//!   table (`docs/asf-conformance.md`) lists every rule.
//! - [`Session::context`] runs the normative context algorithm at the leaf
//!   the resume rule gives ([`Session::leaf`]) or at a given entry; the
//!   [`Context`] gives the settings and items, the request and its
//!   `request_hash`, and the request as chat-completions messages
//!   ([`Context::chat_messages`]).
//! - Entries borrow their line from the caller's bytes; a line is parsed
//!   once to be checked (its hashes computed on the parsed tape, nothing
//!   decoded into owned values) and again only when a context needs its
//!   members. The envelope's strings and the few members the tree needs
//!   are copied out.
//! - [`canon`] is RFC 8785 canonical JSON, written on the JSON layer (member
//!   order by UTF-16 code units, ECMAScript number spelling, the I-JSON
//!   test); [`hash`] the format's one hash.
//! - [`Appender`] writes a session: it canonicalises each entry, refuses
//!   what has no canonical form, hashes and links it under the leaf, so
//!   whatever it writes verifies.
//! - [`Session::write_canonical`] writes a read file back, each line as its
//!   canonical form: unknown members and namespaced entries are kept, and a
//!   file written canonically (as every writer of the format writes) comes
//!   back byte for byte.
//!
//! What this reader does not check is listed in the README ("Limitations").

pub mod canon;
mod chat;
mod context;
mod detect;
pub mod hash;
mod lifecycle;
mod problem;
mod read;
mod request;
mod runs;
pub mod ts;
mod verify;
mod write;

pub use context::{Context, ContextError, Part, Settings};
pub use detect::{is_session_file, session_files};
pub use problem::{Problem, ProblemKind};
pub use read::{
    CORE_TYPES, ENVELOPE, Entry, FORMAT, Header, HeaderError, NEWEST_MINOR, OLDEST_MINOR, PAYLOAD,
    ParentRef, RunFacts, Session,
};
pub use request::RequestHasher;
pub use write::{Appender, WriteError};
