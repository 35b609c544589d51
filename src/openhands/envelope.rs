//! The lazy event envelope.
//!
//! When the reader parses an event file it walks the root object's members
//! once and keeps only where the envelope's strings are: `kind`, `id`,
//! `timestamp`, `source` and `parent_id` (the last occurrence of a repeated
//! name, as pydantic reads it). The strings are copied into one buffer the
//! conversation owns (about 150 bytes an event; simpler than telling apart
//! the strings that had escapes, and small next to reading the file), the
//! file's bytes stay in the conversation's byte
//! buffer, and nothing else is decoded: an [`Event`] is a handle on those
//! ranges. The kind's members are decoded on demand from the raw bytes
//! ([`Event::open`]).

use std::fmt;

use crate::json::{Document, JsonError, Parser};

use super::conversation::Conversation;
use super::error::{DecodeError, FileError};
use super::event_files::File;
use super::json_file::Doc;
use super::kind::Kind;

/// A string range in the conversation's string buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Txt {
    pub(crate) start: usize,
    pub(crate) len: u32,
}

/// One event as read: file position, index, bytes and envelope ranges.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventRec {
    pub(crate) file: u32,
    pub(crate) index: u64,
    pub(crate) raw: (usize, usize),
    pub(crate) kind: Option<Txt>,
    pub(crate) id: Option<Txt>,
    pub(crate) timestamp: Option<Txt>,
    pub(crate) source: Option<Txt>,
    pub(crate) parent_id: Option<Txt>,
    pub(crate) has_parent: bool,
    pub(crate) ok: bool,
}

/// One event of a conversation: its envelope, decoded leniently when the
/// file was read, and the event object's raw bytes. The kind's members are
/// decoded on demand ([`open`](Self::open)), so an event of a kind this
/// module does not know, or one whose members do not fit its kind, is still
/// an event.
///
/// An event whose file did not read as a JSON object has an
/// [`error`](Self::error); only its index, file and raw bytes (what could be
/// read) are then set.
#[derive(Clone, Copy)]
pub struct Event<'c> {
    pub(crate) conv: &'c Conversation,
    pub(crate) rec: &'c EventRec,
}

impl fmt::Debug for Event<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("index", &self.index())
            .field("file", &self.file_name())
            .field("kind", &self.kind())
            .field("id", &self.id())
            .field("source", &self.source())
            .field("parent_id", &self.parent_id())
            .field("error", &self.error())
            .finish()
    }
}

impl<'c> Event<'c> {
    fn txt(&self, t: Option<Txt>) -> Option<&'c str> {
        let t = t?;
        let end = t.start.checked_add(t.len as usize)?;
        self.conv.strings.get(t.start..end)
    }

    /// The event's position, from its file name.
    pub fn index(&self) -> u64 {
        self.rec.index
    }

    /// The file name.
    pub fn file_name(&self) -> &'c str {
        self.conv.files.name_of(self.rec.file)
    }

    /// The event ID the file name holds, by which OpenHands indexes the
    /// event and resolves `parent_id` and the legacy parent.
    pub fn file_id(&self) -> &'c str {
        self.conv.files.id_of(self.rec.file)
    }

    /// The file, with its status.
    pub fn file(&self) -> Option<File<'c>> {
        self.conv.files.file(self.rec.file as usize)
    }

    /// The `kind` member: the event's Python class. `None` when absent or
    /// not a string.
    pub fn kind(&self) -> Option<Kind<'c>> {
        self.kind_name().map(Kind::parse)
    }

    /// The `kind` member's text, unescaped (what [`kind`](Self::kind)
    /// parses). `None` when absent or not a string.
    pub fn kind_name(&self) -> Option<&'c str> {
        self.txt(self.rec.kind)
    }

    /// The `id` member (the JSON ID, which may differ from the
    /// [`file_id`](Self::file_id)).
    pub fn id(&self) -> Option<&'c str> {
        self.txt(self.rec.id)
    }

    /// The `timestamp` member, as written (see
    /// [`parse_time`](super::parse_time)).
    pub fn timestamp(&self) -> Option<&'c str> {
        self.txt(self.rec.timestamp)
    }

    /// The `source` member.
    pub fn source(&self) -> Option<&'c str> {
        self.txt(self.rec.source)
    }

    /// The `parent_id` member when it is a string (1.31.0+; absent on roots
    /// and on every event written before).
    pub fn parent_id(&self) -> Option<&'c str> {
        self.txt(self.rec.parent_id)
    }

    /// Whether the event carried a `parent_id` (present and not `null`, of
    /// any type): such an event is not a legacy one, whose parent is the
    /// previous index.
    pub fn has_parent(&self) -> bool {
        self.rec.has_parent
    }

    /// The file's bytes as read (empty when the file could not be read).
    pub fn raw(&self) -> &'c [u8] {
        let (a, b) = self.rec.raw;
        self.conv.blob.get(a..b).unwrap_or(&[])
    }

    /// Why the file did not read as a JSON object.
    pub fn error(&self) -> Option<&'c FileError> {
        if self.rec.ok {
            None
        } else {
            self.conv.files.error_of(self.rec.file)
        }
    }

    /// Whether the file read as a JSON object.
    pub fn is_ok(&self) -> bool {
        self.rec.ok
    }

    /// Parses the raw bytes with `parser` (whatever they are).
    pub fn parse<'p>(&self, parser: &'p mut Parser) -> Result<Document<'p>, JsonError>
    where
        'c: 'p,
    {
        parser.parse(self.raw())
    }

    /// Parses the event for its kind's members: [`Doc::message`],
    /// [`Doc::action`] and the like decode them, borrowing the document.
    /// Fails for an event that did not read as an object.
    pub fn open<'p>(&self, parser: &'p mut Parser) -> Result<Doc<'p>, DecodeError>
    where
        'c: 'p,
    {
        if let Some(e) = self.error() {
            return Err(DecodeError::from_file_error(e));
        }
        Doc::open(parser, self.raw())
    }
}

/// The events of a conversation, in index order.
#[derive(Clone)]
pub struct Events<'c> {
    pub(crate) conv: &'c Conversation,
    pub(crate) iter: std::slice::Iter<'c, EventRec>,
}

impl<'c> Iterator for Events<'c> {
    type Item = Event<'c>;
    fn next(&mut self) -> Option<Event<'c>> {
        let rec = self.iter.next()?;
        Some(Event {
            conv: self.conv,
            rec,
        })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter.size_hint()
    }
}

impl DoubleEndedIterator for Events<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let rec = self.iter.next_back()?;
        Some(Event {
            conv: self.conv,
            rec,
        })
    }
}

impl ExactSizeIterator for Events<'_> {}
