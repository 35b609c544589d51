//! What a reader reports about an ASF file: one [`Problem`] per failed
//! rule, with the 1-based line it is on and a stable code.

use std::fmt;

/// One rule a line breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The 1-based line number (the header is line 1).
    pub line: usize,
    /// What is wrong.
    pub kind: ProblemKind,
}

/// The rules a reader checks. [`ProblemKind::code`] names each one stably.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemKind {
    /// The last line does not parse: tolerated (the rest is read) and
    /// reported, as the file section requires.
    TruncatedLastLine,
    /// A line before the last does not parse as JSON.
    BadJson(String),
    /// A line is JSON but not an object.
    NotObject,
    /// A line ends in CR LF, or the file's last line has no LF.
    LineEnding,
    /// A header member is missing or malformed.
    Header(String),
    /// An envelope member (`type`, `id`, `parent`, `parents`, `ts`) is
    /// missing or malformed.
    Envelope(String),
    /// `ts` is not spelled the one accepted way.
    TsSpelling(String),
    /// The line is not I-JSON, so it has no canonical form and no hash.
    NotIJson(String),
    /// The body carries a top-level member by a reserved envelope name.
    ReservedMember(String),
    /// The `id` is not the hash the line's members give.
    HashMismatch {
        /// The recorded `id`.
        recorded: String,
        /// The hash computed from the line.
        computed: String,
    },
    /// An `id` met a second time; the line is the same entry and is not
    /// counted again.
    DuplicateId(String),
    /// `parent` names no earlier entry of the file.
    UnknownParent(String),
    /// A `parents` reference is malformed, repeats, names the `parent`,
    /// is out of order, or (without `session`) names no earlier entry.
    Parents(String),
    /// The type is neither core nor namespaced (`ns:name`).
    UnknownType(String),
    /// A member the entry type requires is missing or malformed.
    Member(String),
    /// A member naming an entry (`first_kept`, `target`, `from`,
    /// `queued_from`) names none where the rule requires one.
    Reference(String),
    /// The header's `base` and the file's prefix disagree.
    Prefix(String),
    /// A `function_call`'s `call_id` is empty or repeats another's.
    CallId(String),
    /// A record type the header's `records` promises is missing where its
    /// event happened (a call with an output and no `dispatch`, a model call
    /// outside any run), on the session's own entries (never the prefix).
    Records(String),
    /// A `dispatch`, `decision` or output in an order the decision section
    /// forbids for its call (after a `reject`, an `answer` or the output;
    /// an output straight after a `hold`).
    CallOrder(String),
    /// A `run` entry without its pair: an end with no start of its own on
    /// the path, or a start while another run is open on it.
    RunPairing(String),
    /// An item of a run before the run's `start` on the path: an output
    /// item of a model call whose `response` lies inside the run.
    RunOrder(String),
    /// A run start's `source` is not the shape its segment has.
    RunSource {
        /// The recorded `source`.
        written: String,
        /// The shape of the segment.
        computed: String,
    },
    /// A run end's computable `reason` is not the one its segment gives.
    RunReason {
        /// The recorded `reason`.
        written: String,
        /// The reason the segment computes.
        computed: String,
    },
    /// A run end's `pending` is not the list of the run's calls without an
    /// output.
    RunPending {
        /// The recorded list.
        written: Vec<String>,
        /// The run's calls with no output on the path.
        computed: Vec<String>,
    },
    /// An `item` of a model call written after that call's `response` on
    /// its path (the `response` is the last entry written for its call).
    ResponseOrder(String),
    /// A `config` (or a compaction's checkpoint) breaks a rule of its
    /// members: `instructions` not the join of inline parts, a `replace`
    /// with parts it cannot rebuild, a `keep` with other members or in a
    /// replace, a checkpoint holding delta members or a null in `extra`.
    Config(String),
    /// A `response`'s `request_hash` is not the hash of the request its
    /// path rebuilds.
    RequestHash {
        /// The recorded hash.
        recorded: String,
        /// The hash of the rebuilt request.
        rebuilt: String,
    },
}

impl ProblemKind {
    /// A stable short name for the rule.
    pub fn code(&self) -> &'static str {
        match self {
            ProblemKind::TruncatedLastLine => "truncated-last-line",
            ProblemKind::BadJson(_) => "bad-json",
            ProblemKind::NotObject => "not-object",
            ProblemKind::LineEnding => "line-ending",
            ProblemKind::Header(_) => "header",
            ProblemKind::Envelope(_) => "envelope",
            ProblemKind::TsSpelling(_) => "ts-spelling",
            ProblemKind::NotIJson(_) => "not-i-json",
            ProblemKind::ReservedMember(_) => "reserved-member",
            ProblemKind::HashMismatch { .. } => "hash-mismatch",
            ProblemKind::DuplicateId(_) => "duplicate-id",
            ProblemKind::UnknownParent(_) => "unknown-parent",
            ProblemKind::Parents(_) => "parents",
            ProblemKind::UnknownType(_) => "unknown-type",
            ProblemKind::Member(_) => "member",
            ProblemKind::Reference(_) => "reference",
            ProblemKind::Prefix(_) => "prefix",
            ProblemKind::CallId(_) => "call-id",
            ProblemKind::Records(_) => "records",
            ProblemKind::CallOrder(_) => "call-order",
            ProblemKind::RunPairing(_) => "run-pairing",
            ProblemKind::RunOrder(_) => "run-order",
            ProblemKind::RunSource { .. } => "run-source",
            ProblemKind::RunReason { .. } => "run-reason",
            ProblemKind::RunPending { .. } => "run-pending",
            ProblemKind::ResponseOrder(_) => "response-order",
            ProblemKind::Config(_) => "config",
            ProblemKind::RequestHash { .. } => "request-hash",
        }
    }
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProblemKind::TruncatedLastLine => {
                f.write_str("the last line does not parse (truncated)")
            }
            ProblemKind::BadJson(e) => write!(f, "not JSON: {e}"),
            ProblemKind::NotObject => f.write_str("not a JSON object"),
            ProblemKind::LineEnding => f.write_str("line not terminated by a lone LF"),
            ProblemKind::Header(m)
            | ProblemKind::Envelope(m)
            | ProblemKind::Member(m)
            | ProblemKind::Reference(m)
            | ProblemKind::Prefix(m)
            | ProblemKind::CallId(m)
            | ProblemKind::Parents(m)
            | ProblemKind::Records(m)
            | ProblemKind::CallOrder(m)
            | ProblemKind::RunPairing(m)
            | ProblemKind::RunOrder(m)
            | ProblemKind::ResponseOrder(m)
            | ProblemKind::Config(m) => f.write_str(m),
            ProblemKind::RunSource { written, computed } => write!(
                f,
                "run start says source {written:?} but its segment has the shape {computed:?}"
            ),
            ProblemKind::RunReason { written, computed } => write!(
                f,
                "run end says reason {written:?} but its segment computes {computed:?}"
            ),
            ProblemKind::RunPending { written, computed } => write!(
                f,
                "run end says pending {written:?} but the run's calls without an output are {computed:?}"
            ),
            ProblemKind::TsSpelling(t) => write!(f, "ts {t:?} is not in the one accepted spelling"),
            ProblemKind::NotIJson(e) => write!(f, "not I-JSON: {e}"),
            ProblemKind::ReservedMember(n) => {
                write!(f, "the body carries the reserved member {n:?}")
            }
            ProblemKind::HashMismatch { recorded, computed } => {
                write!(f, "id {recorded} is not the entry's hash {computed}")
            }
            ProblemKind::DuplicateId(id) => write!(f, "id {id} repeated"),
            ProblemKind::UnknownParent(p) => write!(f, "parent {p} names no earlier entry"),
            ProblemKind::UnknownType(t) => write!(f, "unknown entry type {t:?}"),
            ProblemKind::RequestHash { recorded, rebuilt } => {
                write!(f, "request_hash {recorded} but the path rebuilds {rebuilt}")
            }
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.kind.code(), self.kind)
    }
}
