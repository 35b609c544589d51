//! `base_state.json` and `meta.json` as read ([`JsonFile`]: their bytes and
//! their own error), and a parsed file ready for decoding ([`Doc`]).
//!
//! Both files are rewritten in place by their writers, so they are always
//! read into memory, never mapped.

use std::ffi::OsStr;
use std::path::Path;

use crate::json::{Document, FieldValue, JsonError, JsonType, Parser, Value};
use crate::source::dir::Dir;
use crate::source::{self, SourceError};

use super::error::{DecodeError, FileError};
use super::state::{Meta, State};
use super::stored::{
    ActionEvent, AgentErrorEvent, Condensation, MessageEvent, ObservationEvent, SystemPromptEvent,
    UserRejectObservation,
};
use super::{FILE_BASE_STATE, MAX_SIZE};

/// A parsed JSON object of a conversation (an event, the state, the meta),
/// whose members the typed views decode on demand, borrowing it.
#[derive(Debug)]
pub struct Doc<'p> {
    doc: Document<'p>,
}

impl<'p> Doc<'p> {
    /// Parses `bytes`, which must hold a JSON object.
    pub fn open(parser: &'p mut Parser, bytes: &'p [u8]) -> Result<Doc<'p>, DecodeError> {
        let doc = parser.parse(bytes)?;
        let t = doc.root().json_type();
        if t != JsonType::Object {
            return Err(DecodeError::NotAnObject(t));
        }
        Ok(Doc { doc })
    }

    /// The parsed document.
    pub fn document(&self) -> &Document<'p> {
        &self.doc
    }

    /// The root object, as a value.
    pub fn root(&self) -> Value<'_> {
        self.doc.root()
    }

    /// Decodes the root object as any lossless type (a
    /// [`json_object!`](crate::json_object) type, or one implementing
    /// [`FieldValue`]).
    pub fn decode<'s, T: FieldValue<'s>>(&'s self) -> Option<T> {
        T::decode_field(self.doc.root())
    }

    /// Decodes a `MessageEvent` (whatever the `kind`: check it first).
    pub fn message(&self) -> MessageEvent<'_> {
        MessageEvent::decode(self.root()).unwrap_or_default()
    }

    /// Decodes an `ActionEvent`.
    pub fn action(&self) -> ActionEvent<'_> {
        ActionEvent::decode(self.root()).unwrap_or_default()
    }

    /// Decodes an `ObservationEvent`.
    pub fn observation(&self) -> ObservationEvent<'_> {
        ObservationEvent::decode(self.root()).unwrap_or_default()
    }

    /// Decodes an `AgentErrorEvent`.
    pub fn agent_error(&self) -> AgentErrorEvent<'_> {
        AgentErrorEvent::decode(self.root()).unwrap_or_default()
    }

    /// Decodes a `Condensation`.
    pub fn condensation(&self) -> Condensation<'_> {
        Condensation::decode(self.root()).unwrap_or_default()
    }

    /// Decodes a `SystemPromptEvent`.
    pub fn system_prompt(&self) -> SystemPromptEvent<'_> {
        SystemPromptEvent::decode(self.root()).unwrap_or_default()
    }

    /// Decodes a `UserRejectObservation`.
    pub fn user_reject(&self) -> UserRejectObservation<'_> {
        UserRejectObservation::decode(self.root()).unwrap_or_default()
    }

    /// Decodes `base_state.json`.
    pub fn state(&self) -> State<'_> {
        State::decode(self.root()).unwrap_or_default()
    }

    /// Decodes `meta.json`.
    pub fn meta(&self) -> Meta<'_> {
        Meta::decode(self.root()).unwrap_or_default()
    }
}

/// `base_state.json` or `meta.json` as read: its raw bytes, and why it did
/// not read as a JSON object.
#[derive(Debug, Default)]
pub struct JsonFile {
    pub(super) raw: Vec<u8>,
    pub(super) error: Option<FileError>,
    pub(super) present: bool,
}

impl JsonFile {
    /// The bytes as read (empty when the file could not be read).
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// Why the file did not read as a JSON object.
    pub fn error(&self) -> Option<&FileError> {
        self.error.as_ref()
    }

    /// Whether the file read as a JSON object.
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }

    /// Parses the file for decoding ([`Doc::state`], [`Doc::meta`]).
    pub fn open<'p>(&'p self, parser: &'p mut Parser) -> Result<Doc<'p>, DecodeError> {
        if let Some(e) = &self.error {
            return Err(DecodeError::from_file_error(e));
        }
        Doc::open(parser, &self.raw)
    }

    pub(super) fn clear(&mut self) {
        self.raw.clear();
        self.error = None;
        self.present = false;
    }

    /// Reads and checks a file (always read, never mapped).
    pub(super) fn read(&mut self, path: &Path, parser: &mut Parser) {
        self.present = true;
        if let Err(e) = source::read_into(path, &mut self.raw) {
            self.error = Some(e.into());
            return;
        }
        self.error = check_object(parser, &self.raw).err().map(|b| b.at(path));
    }

    /// Reads and checks the file `name` of the open directory `dir`,
    /// whose path is `dir_path` (always read, never mapped).
    pub(super) fn read_at(
        &mut self,
        dir: &Dir,
        name: &str,
        dir_path: &Path,
        parser: &mut Parser,
        visit: &mut dyn FnMut(&Document<'_>),
    ) {
        self.present = true;
        if let Err(f) = dir.read_file(OsStr::new(name), &mut self.raw) {
            self.error = Some(f.at(&dir_path.join(name)).into());
            return;
        }
        self.error = check_object_with(parser, &self.raw, visit)
            .err()
            .map(|b| b.at(&dir_path.join(name)));
    }

    /// Records a path that is there but is not a file (a directory).
    pub(super) fn not_a_file(&mut self, path: &Path) {
        self.present = true;
        self.error = Some(
            SourceError::NotAFile {
                path: path.to_path_buf(),
            }
            .into(),
        );
    }

    /// Takes a file's contents.
    pub(super) fn set(&mut self, path: &Path, bytes: &[u8], parser: &mut Parser) {
        self.present = true;
        if let Err(e) = in_memory_check(path, bytes) {
            self.error = Some(e.into());
            return;
        }
        self.raw.extend_from_slice(bytes);
        self.error = check_object(parser, &self.raw).err().map(|b| b.at(path));
    }
}

/// Reads the `base_state.json` of `dir`: `Ok` only when it is a JSON object.
pub fn read_state(dir: &Path) -> Result<JsonFile, FileError> {
    let mut f = JsonFile::default();
    f.read(&dir.join(FILE_BASE_STATE), &mut Parser::new());
    match f.error.take() {
        Some(e) => Err(e),
        None => Ok(f),
    }
}

/// A fault found parsing a file, before its path is attached.
pub(super) enum Bad {
    Json(JsonError),
    NotAnObject(JsonType),
}

impl Bad {
    pub(super) fn at(self, path: &Path) -> FileError {
        match self {
            Bad::Json(source) => FileError::Json {
                path: path.to_path_buf(),
                source,
            },
            Bad::NotAnObject(found) => FileError::NotAnObject {
                path: path.to_path_buf(),
                found,
            },
        }
    }
}

pub(super) fn check_object(parser: &mut Parser, bytes: &[u8]) -> Result<(), Bad> {
    check_object_with(parser, bytes, &mut |_| {})
}

/// [`check_object`], handing the parsed object to `visit`.
pub(super) fn check_object_with(
    parser: &mut Parser,
    bytes: &[u8],
    visit: &mut dyn FnMut(&Document<'_>),
) -> Result<(), Bad> {
    let doc = parser.parse(bytes).map_err(Bad::Json)?;
    match doc.root().json_type() {
        JsonType::Object => {
            visit(&doc);
            Ok(())
        }
        t => Err(Bad::NotAnObject(t)),
    }
}

/// The limits `source::read_into` applies to a file, for contents given in
/// memory.
pub(super) fn in_memory_check(path: &Path, bytes: &[u8]) -> Result<(), SourceError> {
    if bytes.len() as u64 > MAX_SIZE {
        return Err(SourceError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
        });
    }
    if bytes.is_empty() {
        return Err(SourceError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}
