//! Errors of the JSON layer.

use std::fmt;

/// What went wrong while parsing a JSON document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// The input holds no bytes at all (or only white space).
    Empty,
    /// The input starts with a UTF-8 byte-order mark. Python's `json.loads`
    /// refuses one too; callers that strip it (OC Chat) do so before parsing.
    Bom,
    /// The input is not valid UTF-8.
    InvalidUtf8,
    /// The input is not JSON: an unexpected byte, an unterminated value, a bad
    /// escape or literal, trailing data.
    Syntax,
    /// Arrays and objects are nested deeper than [`MAX_DEPTH`](super::MAX_DEPTH).
    TooDeep,
    /// The input is larger than the parser accepts (`u32` offsets).
    TooLarge,
}

impl JsonErrorKind {
    /// A short lowercase description.
    pub fn as_str(self) -> &'static str {
        match self {
            JsonErrorKind::Empty => "empty input",
            JsonErrorKind::Bom => "unexpected UTF-8 byte-order mark",
            JsonErrorKind::InvalidUtf8 => "invalid UTF-8",
            JsonErrorKind::Syntax => "invalid JSON",
            JsonErrorKind::TooDeep => "nesting too deep",
            JsonErrorKind::TooLarge => "input too large",
        }
    }
}

/// A JSON document that could not be parsed: the kind of fault and the byte
/// offset in the input where it was found, when known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct JsonError {
    kind: JsonErrorKind,
    offset: Option<usize>,
    detail: &'static str,
}

impl JsonError {
    /// A new error.
    pub fn new(kind: JsonErrorKind, offset: Option<usize>, detail: &'static str) -> Self {
        JsonError {
            kind,
            offset,
            detail,
        }
    }

    /// The category of the fault.
    pub fn kind(&self) -> JsonErrorKind {
        self.kind
    }

    /// The byte offset of the fault in the input, when known.
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// A short detail beyond the kind (may be empty).
    pub fn detail(&self) -> &'static str {
        self.detail
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.as_str())?;
        if !self.detail.is_empty() {
            write!(f, " ({})", self.detail)?;
        }
        if let Some(off) = self.offset {
            write!(f, " at byte {off}")?;
        }
        Ok(())
    }
}
