//! Conversions of the stores this crate reads into the Agent Session Format
//! ([`crate::asf`]): an OpenHands SDK conversation ([`openhands`]) and an
//! OC Chat session ([`occhat`]).
//!
//! A conversion is deterministic (the same input gives the same bytes: the
//! session id comes from the conversation's own id, timestamps from its
//! events), writes through [`crate::asf::Appender`] (canonical, hashed and
//! linked entries; the appender trusts the converter's own entries and does
//! not read each line back, and the tests verify every converted corpus
//! file with the reader), and reports per source event what it became
//! ([`Report`]).

mod chat;
pub mod occhat;
pub mod openhands;

use std::fmt;

/// What one source event became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Mapped to core entries (their types, e.g. `item`, `config`).
    Mapped(Vec<&'static str>),
    /// Kept only as an extension (an `openhands:event` record entry): it
    /// has no core member; the reason says why.
    Extension(String),
    /// Not written at all; the reason says why.
    Dropped(String),
}

impl Outcome {
    /// The stable code: `mapped`, `kept-extension` or `dropped`.
    pub fn code(&self) -> &'static str {
        match self {
            Outcome::Mapped(_) => "mapped",
            Outcome::Extension(_) => "kept-extension",
            Outcome::Dropped(_) => "dropped",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Mapped(t) => write!(f, "mapped to {}", t.join(", ")),
            Outcome::Extension(r) | Outcome::Dropped(r) => f.write_str(r),
        }
    }
}

/// One row of a conversion report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportRow {
    /// The source event's id.
    pub event: String,
    /// The source event's kind.
    pub kind: String,
    /// What it became.
    pub outcome: Outcome,
}

/// The report of one conversion: one row per source event, in order.
pub type Report = Vec<ReportRow>;

/// One converted session.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The session id (the file is `<id>.jsonl`).
    pub session_id: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// What each source event became.
    pub report: Report,
}

/// Why a conversion failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConvertError {
    /// The appender refused an entry (a bug in the mapping, or source data
    /// no normalisation can make I-JSON).
    #[error("writing the session: {0}")]
    Write(#[from] crate::asf::WriteError),
    /// The source has nothing to convert.
    #[error("{0}")]
    Source(String),
}

/// Whether the appender refused a value I-JSON cannot carry even after its
/// normalisation (a NaN, an infinity): the converters then keep the value
/// as its JSON text.
pub(crate) fn not_ijson(e: &crate::asf::WriteError) -> bool {
    matches!(
        e,
        crate::asf::WriteError::NotIJson(_)
            | crate::asf::WriteError::Rule(crate::asf::Problem {
                kind: crate::asf::ProblemKind::NotIJson(_),
                ..
            })
    )
}
