//! The `events/` directory: file names, index order, and the status of
//! every file.
//!
//! # The rules (SDK `EventLog._scan_and_build_index`, all versions)
//!
//! 1. Names starting with `.` are the SDK's sidecars (`.eventlog.lock`,
//!    `.eventlog-len-N.marker`, atomic writers' temp files): never events,
//!    and not listed as files (kept apart, [`EventFiles::sidecars`]).
//! 2. Every other name is matched against the SDK's pattern
//!    ([`NamePattern`]); a name that does not match is
//!    [`FileStatus::BadName`], with the reason ([`NameError`]).
//! 3. Two files for one index: the SDK keeps the one `os.listdir` lists
//!    last, an order no reader can reproduce. Here the name that sorts first
//!    (by bytes) wins; the others are [`FileStatus::Duplicate`].
//! 4. The events are the files of indexes 0, 1, 2… up to the first missing
//!    index; every file of a larger index is [`FileStatus::Gap`] (the SDK
//!    logs "Event index gap detected" and does not read it). An index too
//!    large for a `u64` can never be reached and is a gap too.
//! 5. The files in that sequence are [`FileStatus::Event`] until read: the
//!    reader marks one that is empty, over [`MAX_SIZE`](crate::MAX_SIZE),
//!    not a regular file, not JSON or not an object
//!    [`FileStatus::Malformed`], and one whose bytes could not be had (the
//!    operating system refused to open or read it, or it is over what is
//!    left of the reader's budget for the conversation)
//!    [`FileStatus::Unreadable`], each with its [`FileError`]. It stays in
//!    the sequence (later events' parents and the legacy chain refer to its
//!    index and file ID).
//!
//! Nothing here opens a file: [`EventFiles::scan`] lists the directory, and
//! the count, IDs, order and gaps follow from the names alone.
//!
//! An entry of `events/` that is a directory is listed like a file, as the
//! SDK 1.30+ lists it (the SDK strips the `/` it appends to directory names
//! before matching); if its name puts it in the sequence, reading it fails
//! and it is malformed.

use std::fmt;
use std::io;
use std::path::Path;

use super::error::FileError;
use crate::source::dir::{Dir, ListBuf};

/// A list of names whose strings keep their allocations when the list is
/// cleared, so that reading one more directory of the same shape costs no
/// allocation.
#[derive(Debug, Default, Clone)]
pub(crate) struct NameList {
    items: Vec<String>,
    len: usize,
}

impl NameList {
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    pub(crate) fn push(&mut self, s: &str) {
        match self.items.get_mut(self.len) {
            Some(x) => {
                x.clear();
                x.push_str(s);
            }
            None => self.items.push(s.to_owned()),
        }
        self.len += 1;
    }

    pub(crate) fn as_slice(&self) -> &[String] {
        self.items.get(..self.len).unwrap_or(&[])
    }

    pub(crate) fn sort(&mut self) {
        if let Some(s) = self.items.get_mut(..self.len) {
            s.sort_unstable();
        }
    }

    pub(crate) fn last(&self) -> Option<&str> {
        self.as_slice().last().map(String::as_str)
    }

    /// Removes consecutive repeats.
    pub(crate) fn dedup(&mut self) {
        let Some(s) = self.items.get_mut(..self.len) else {
            return;
        };
        let mut w = 0usize;
        for r in 0..s.len() {
            if w == 0 || s.get(w - 1) != s.get(r) {
                s.swap(w, r);
                w += 1;
            }
        }
        self.len = w;
    }
}

/// Which version of the SDK's file-name pattern to match (`EVENT_NAME_RE`).
///
/// Matching follows Python's `re`: `\d` is any Unicode decimal digit (its
/// value is what `int()` gives), and `$` also matches before one final
/// `\n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NamePattern {
    /// SDK 1.0.0 to 1.29.3: `^event-(\d{5})-([0-9a-fA-F\-]{8,})\.json$`.
    /// An index of 100000 or more (which the writer still writes) is not
    /// recognised: those files are bad names and the events stop at 99999.
    FiveDigits,
    /// SDK 1.30.0 to 1.58.2: `^event-(\d{5,})-([0-9a-fA-F\-]{8,})\.json$`.
    #[default]
    FiveOrMoreDigits,
}

impl NamePattern {
    /// The pattern of a given SDK version (`major.minor`).
    pub fn of_sdk(major: u32, minor: u32) -> NamePattern {
        if (major, minor) < (1, 30) {
            NamePattern::FiveDigits
        } else {
            NamePattern::FiveOrMoreDigits
        }
    }
}

/// An event file's name, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventName<'a> {
    /// The index; `None` when it does not fit a `u64`.
    pub index: Option<u64>,
    /// The index as written (five digits or more, possibly not ASCII).
    pub digits: &'a str,
    /// The event ID the name holds (the file ID), by which the SDK indexes
    /// the event.
    pub id: &'a str,
}

/// Why a name of `events/` is not an event file's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The name is not valid UTF-8.
    #[error("the name is not valid UTF-8")]
    NotUtf8,
    /// The name does not start with `event-`.
    #[error("the name does not start with \"event-\"")]
    Prefix,
    /// The name does not end with `.json`.
    #[error("the name does not end with \".json\"")]
    Suffix,
    /// The index is not five digits (or, from SDK 1.30, five or more)
    /// followed by `-`.
    #[error("the index is not {} digits followed by \"-\"", if *.five_or_more { "five or more" } else { "five" })]
    Index {
        /// Whether five or more digits were allowed.
        five_or_more: bool,
    },
    /// The event ID is not eight or more hex digits and dashes.
    #[error("the event ID is not 8 or more hex digits and dashes")]
    Id,
}

/// Parses an event file's name as the SDK's pattern does.
pub fn parse_event_name(name: &str, pattern: NamePattern) -> Result<EventName<'_>, NameError> {
    // `$` matches at the end and before a final newline.
    let s = name.strip_suffix('\n').unwrap_or(name);
    let s = s.strip_prefix("event-").ok_or(NameError::Prefix)?;
    let s = s.strip_suffix(".json").ok_or(NameError::Suffix)?;
    let five_or_more = pattern == NamePattern::FiveOrMoreDigits;
    let bad_index = NameError::Index { five_or_more };
    let mut n = 0usize;
    let mut end = 0usize;
    let mut value: Option<u64> = Some(0);
    let bytes = s.as_bytes();
    loop {
        let d = match bytes.get(end) {
            Some(&b) if b.is_ascii_digit() => {
                end += 1;
                u32::from(b - b'0')
            }
            // A non-ASCII character: a Unicode decimal digit or the end.
            Some(&b) if b >= 0x80 => {
                let Some(c) = s.get(end..).and_then(|r| r.chars().next()) else {
                    break;
                };
                let Some(d) = decimal_value(c) else { break };
                end += c.len_utf8();
                d
            }
            _ => break,
        };
        n += 1;
        value = value
            .and_then(|v| v.checked_mul(10))
            .and_then(|v| v.checked_add(u64::from(d)));
    }
    if n < 5 || (!five_or_more && n != 5) {
        return Err(bad_index);
    }
    let digits = s.get(..end).ok_or(bad_index)?;
    let id = s
        .get(end..)
        .and_then(|r| r.strip_prefix('-'))
        .ok_or(bad_index)?;
    // No short circuit: the common case is a valid ID, checked faster
    // without a branch per byte.
    if id.len() < 8 || !id.bytes().fold(true, |ok, b| ok & ID_BYTE[b as usize]) {
        return Err(NameError::Id);
    }
    Ok(EventName {
        index: value,
        digits,
        id,
    })
}

/// [`parse_event_name`] for the common name, all ASCII, that matches:
/// `event-`, ASCII digits, `-`, the ID, `.json`, in one pass; `None` for
/// anything else, which the full parser then reads (a name this accepts
/// reads the same there).
fn parse_ascii_event_name(name: &str, pattern: NamePattern) -> Option<EventName<'_>> {
    let body = name.strip_prefix("event-")?.strip_suffix(".json")?;
    let bytes = body.as_bytes();
    let mut end = 0usize;
    let mut value: Option<u64> = Some(0);
    while let Some(&b) = bytes.get(end)
        && b.is_ascii_digit()
    {
        value = value
            .and_then(|v| v.checked_mul(10))
            .and_then(|v| v.checked_add(u64::from(b - b'0')));
        end += 1;
    }
    let five_or_more = pattern == NamePattern::FiveOrMoreDigits;
    if end < 5 || (!five_or_more && end != 5) || bytes.get(end) != Some(&b'-') {
        return None;
    }
    let id = body.get(end + 1..)?;
    if id.len() < 8 || !id.bytes().fold(true, |ok, b| ok & ID_BYTE[b as usize]) {
        return None;
    }
    Some(EventName {
        index: value,
        digits: body.get(..end)?,
        id,
    })
}

/// The bytes of the ID group, `[0-9a-fA-F\-]`.
const ID_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_hexdigit() || c == b'-';
        b += 1;
    }
    t
};

/// The first code point of every run of ten Unicode decimal digits
/// (category Nd) of Unicode 15.0, the version of Python 3.12's `re` and
/// `int()`. Every run is the digits 0 to 9 in order.
const DIGIT_ZEROS: [u32; 68] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x11F50, 0x16A60, 0x16AC0,
    0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950,
    0x1FBF0,
];

/// The value of a Unicode decimal digit, as Python's `\d` and `int()` read it.
fn decimal_value(c: char) -> Option<u32> {
    if let Some(d) = c.to_digit(10) {
        return Some(d);
    }
    let c = u32::from(c);
    let i = DIGIT_ZEROS.partition_point(|&z| z <= c);
    let zero = *DIGIT_ZEROS.get(i.checked_sub(1)?)?;
    let d = c - zero;
    (d < 10).then_some(d)
}

/// What a file of `events/` is to the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileStatus {
    /// An event in the conversation's sequence.
    Event,
    /// An event file in the sequence that is empty, is over
    /// [`MAX_SIZE`](crate::MAX_SIZE), is not a regular file, is not JSON or
    /// not an object. The SDK skips an empty one when it iterates, and fails
    /// on the others.
    Malformed,
    /// An event file in the sequence whose bytes could not be had: the
    /// operating system refused to open or read it (its error is kept), or
    /// it is over what is left of the reader's budget for one conversation
    /// ([`Reader::set_event_budget`](super::Reader::set_event_budget)).
    Unreadable,
    /// An event file after a missing index, which the SDK does not read.
    Gap,
    /// A second file for an index already taken (see the module docs for
    /// which one wins).
    Duplicate,
    /// A file whose name is not an event file's.
    BadName,
}

impl FileStatus {
    /// The status as the reference names it: `event`, `malformed`, `gap`,
    /// `duplicate`, `bad-name`; and `unreadable`, which the reference does
    /// not tell apart from `malformed`.
    pub fn as_str(self) -> &'static str {
        match self {
            FileStatus::Event => "event",
            FileStatus::Malformed => "malformed",
            FileStatus::Unreadable => "unreadable",
            FileStatus::Gap => "gap",
            FileStatus::Duplicate => "duplicate",
            FileStatus::BadName => "bad-name",
        }
    }
}

impl fmt::Display for FileStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a file of `events/` is not an event of the sequence.
#[derive(Debug, Clone, Copy)]
pub enum Reason<'a> {
    /// The file did not read as a JSON object.
    Malformed(&'a FileError),
    /// The file's bytes could not be had.
    Unreadable(&'a FileError),
    /// The file's index comes after `missing`, the first index no file has.
    Gap {
        /// The first missing index.
        missing: u64,
    },
    /// The file's index is taken by the file `taken_by`.
    Duplicate {
        /// The name of the file that has the index.
        taken_by: &'a str,
    },
    /// The name is not an event file's.
    BadName(NameError),
}

impl fmt::Display for Reason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Malformed(e) | Reason::Unreadable(e) => write!(f, "{e}"),
            Reason::Gap { missing } => write!(
                f,
                "comes after index {missing}, which no file has: the SDK does not read it"
            ),
            Reason::Duplicate { taken_by } => {
                write!(
                    f,
                    "its index is taken by {taken_by}, whose name sorts first"
                )
            }
            Reason::BadName(e) => write!(f, "not an event file's name: {e}"),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Detail {
    None,
    BadName(NameError),
    Gap,
    Duplicate(u32),
    Malformed(u32),
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct FileRec {
    /// The name's first 16 bytes, big-endian and zero-padded: comparing
    /// keys orders names as comparing them does, up to ties.
    key: u128,
    name: (usize, usize),
    id: (usize, usize),
    index: Option<u64>,
    matched: bool,
    status: FileStatus,
    detail: Detail,
}

/// The files of an `events/` directory, by name, with their status; and
/// the sequence of events they make, in index order.
#[derive(Debug, Default)]
pub struct EventFiles {
    pattern: NamePattern,
    names: String,
    files: Vec<FileRec>,
    sequence: Vec<u32>,
    missing: Option<u64>,
    sidecars: NameList,
    glob: usize,
    errors: Vec<FileError>,
    /// Scratch for `finish`, kept for its allocation.
    by_index: Vec<(u64, u32)>,
    /// Scratch for `finish`: the files' keys and positions, sorted (a sort
    /// moves these, not the records), then the records in that order.
    order: Vec<(u128, usize)>,
    sorted: Vec<FileRec>,
}

impl EventFiles {
    /// Lists `events_dir` and sorts its files out, opening none of them.
    /// A directory that does not exist has no files (as the SDK reads it);
    /// one that cannot be listed is an error.
    pub fn scan(events_dir: &Path, pattern: NamePattern) -> io::Result<EventFiles> {
        let mut out = EventFiles::default();
        out.rescan(events_dir, pattern)?;
        Ok(out)
    }

    /// Sorts out the files of a directory given by their names (in any
    /// order; names starting with `.` are sidecars).
    pub fn from_names<I, S>(names: I, pattern: NamePattern) -> EventFiles
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut out = EventFiles::default();
        out.reset(pattern);
        for n in names {
            out.add(n.as_ref(), false);
        }
        out.finish();
        out
    }

    /// Like [`scan`](Self::scan), reusing this value's buffers.
    pub fn rescan(&mut self, events_dir: &Path, pattern: NamePattern) -> io::Result<()> {
        self.rescan_with(events_dir, &mut ListBuf::default(), pattern)
    }

    /// Like [`rescan`](Self::rescan), listing with a reused buffer.
    pub(crate) fn rescan_with(
        &mut self,
        events_dir: &Path,
        listing: &mut ListBuf,
        pattern: NamePattern,
    ) -> io::Result<()> {
        match Dir::open(events_dir) {
            Ok(d) => self.rescan_dir(&d, listing, pattern),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.reset(pattern);
                self.finish();
                Ok(())
            }
            Err(e) => {
                self.reset(pattern);
                Err(e)
            }
        }
    }

    /// Lists the open directory `dir` and sorts its files out. On error
    /// the names listed so far are kept, unsorted: reset before use.
    pub(crate) fn rescan_dir(
        &mut self,
        dir: &Dir,
        listing: &mut ListBuf,
        pattern: NamePattern,
    ) -> io::Result<()> {
        self.reset(pattern);
        dir.for_each(listing, |name, _| match name.to_str() {
            Some(s) => self.add(s, false),
            None => self.add(&name.to_string_lossy(), true),
        })?;
        self.finish();
        Ok(())
    }

    pub(crate) fn reset(&mut self, pattern: NamePattern) {
        self.pattern = pattern;
        self.names.clear();
        self.files.clear();
        self.sequence.clear();
        self.missing = None;
        self.sidecars.clear();
        self.glob = 0;
        self.errors.clear();
    }

    pub(crate) fn add(&mut self, name: &str, not_utf8: bool) {
        if name.starts_with('.') {
            self.sidecars.push(name);
            return;
        }
        if name.starts_with("event-") && name.ends_with(".json") {
            self.glob += 1;
        }
        let start = self.names.len();
        self.names.push_str(name);
        let end = self.names.len();
        let mut head = [0u8; 16];
        for (h, b) in head.iter_mut().zip(name.bytes()) {
            *h = b;
        }
        let mut rec = FileRec {
            key: u128::from_be_bytes(head),
            name: (start, end),
            id: (end, end),
            index: None,
            matched: false,
            status: FileStatus::BadName,
            detail: Detail::None,
        };
        let parsed = if not_utf8 {
            Err(NameError::NotUtf8)
        } else {
            parse_ascii_event_name(name, self.pattern)
                .map_or_else(|| parse_event_name(name, self.pattern), Ok)
        };
        match parsed {
            Ok(n) => {
                // `n.id` is a subslice of `name`; find its offset.
                let off = (n.id.as_ptr() as usize).saturating_sub(name.as_ptr() as usize);
                rec.id = (start + off, start + off + n.id.len());
                rec.index = n.index;
                rec.matched = true;
                rec.status = FileStatus::Event;
            }
            Err(e) => rec.detail = Detail::BadName(e),
        }
        self.files.push(rec);
    }

    pub(crate) fn finish(&mut self) {
        self.sort_files();
        self.sidecars.sort();
        // Matched files with an index, by (index, name).
        let mut by_index = std::mem::take(&mut self.by_index);
        by_index.clear();
        by_index.extend(
            self.files
                .iter()
                .enumerate()
                .filter_map(|(pos, f)| Some((f.index?, u32::try_from(pos).ok()?))),
        );
        by_index.sort_unstable();
        let mut next = 0u64;
        let mut contiguous = true;
        let mut prev: Option<(u64, u32)> = None;
        for &(idx, pos) in &by_index {
            if let Some((pidx, winner)) = prev
                && pidx == idx
            {
                if let Some(f) = self.files.get_mut(pos as usize) {
                    f.status = FileStatus::Duplicate;
                    f.detail = Detail::Duplicate(winner);
                }
                continue;
            }
            prev = Some((idx, pos));
            if contiguous && idx == next {
                self.sequence.push(pos);
                next = next.saturating_add(1);
            } else {
                contiguous = false;
                if let Some(f) = self.files.get_mut(pos as usize) {
                    f.status = FileStatus::Gap;
                    f.detail = Detail::Gap;
                }
            }
        }
        // Indexes too large for a u64 are beyond any sequence.
        for f in self.files.iter_mut() {
            if f.matched && f.index.is_none() {
                f.status = FileStatus::Gap;
                f.detail = Detail::Gap;
                contiguous = false;
            }
        }
        self.missing = (!contiguous).then_some(next);
        self.by_index = by_index;
    }

    /// Sorts the files by name: their keys and positions are sorted (names
    /// compared only where keys tie), then the records put in that order.
    fn sort_files(&mut self) {
        let names = &self.names;
        let files = &self.files;
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend(files.iter().enumerate().map(|(pos, f)| (f.key, pos)));
        let name_at = |pos: usize| files.get(pos).map_or("", |f| slice(names, f.name));
        order.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| name_at(a.1).cmp(name_at(b.1))));
        let mut sorted = std::mem::take(&mut self.sorted);
        sorted.clear();
        sorted.extend(order.iter().filter_map(|&(_, pos)| files.get(pos).copied()));
        self.sorted = std::mem::replace(&mut self.files, sorted);
        self.order = order;
    }

    /// Marks a file of the sequence that did not read as a JSON object:
    /// [`FileStatus::Unreadable`] when its bytes could not be had,
    /// [`FileStatus::Malformed`] otherwise.
    pub(crate) fn mark_bad(&mut self, pos: u32, err: FileError) {
        let e = u32::try_from(self.errors.len()).unwrap_or(u32::MAX);
        if let Some(f) = self.files.get_mut(pos as usize) {
            f.status = if err.is_unreadable() {
                FileStatus::Unreadable
            } else {
                FileStatus::Malformed
            };
            self.errors.push(err);
            f.detail = Detail::Malformed(e);
        }
    }

    /// The pattern names were matched with.
    pub fn pattern(&self) -> NamePattern {
        self.pattern
    }

    /// Every file of the directory but the sidecars, sorted by name.
    pub fn files(&self) -> impl ExactSizeIterator<Item = File<'_>> + DoubleEndedIterator {
        self.files.iter().map(|rec| File { set: self, rec })
    }

    /// The file at `pos` in name order.
    pub fn file(&self, pos: usize) -> Option<File<'_>> {
        self.files.get(pos).map(|rec| File { set: self, rec })
    }

    /// The files of the sequence (indexes 0 to [`len`](Self::len) − 1), in
    /// index order.
    pub fn sequence(&self) -> impl DoubleEndedIterator<Item = File<'_>> {
        self.sequence.iter().filter_map(|&p| self.file(p as usize))
    }

    /// How many events the sequence has: the first index no file has.
    pub fn len(&self) -> usize {
        self.sequence.len()
    }

    /// Whether the sequence is empty.
    pub fn is_empty(&self) -> bool {
        self.sequence.is_empty()
    }

    /// The file IDs of the sequence, in index order (the same ID may occur
    /// at two indexes; the SDK looks an ID up at its first).
    pub fn ids(&self) -> impl ExactSizeIterator<Item = &str> + DoubleEndedIterator {
        self.sequence.iter().map(|&p| {
            self.files
                .get(p as usize)
                .map_or("", |f| slice(&self.names, f.id))
        })
    }

    /// The first missing index when files of larger indexes exist (a gap);
    /// `None` when there is no gap.
    pub fn gap(&self) -> Option<u64> {
        self.missing
    }

    /// The names starting with `.` (the SDK's lock file, length marker and
    /// temp files), sorted.
    pub fn sidecars(&self) -> &[String] {
        self.sidecars.as_slice()
    }

    /// How many names are `event-*.json` (what the SDK 1.8.2+ writer counts
    /// before appending, whether or not they match the pattern).
    pub fn event_file_count(&self) -> usize {
        self.glob
    }

    pub(crate) fn sequence_positions(&self) -> &[u32] {
        &self.sequence
    }

    pub(crate) fn name_of(&self, pos: u32) -> &str {
        self.files
            .get(pos as usize)
            .map_or("", |f| slice(&self.names, f.name))
    }

    pub(crate) fn id_of(&self, pos: u32) -> &str {
        self.files
            .get(pos as usize)
            .map_or("", |f| slice(&self.names, f.id))
    }

    pub(crate) fn error_of(&self, pos: u32) -> Option<&FileError> {
        match self.files.get(pos as usize)?.detail {
            Detail::Malformed(e) => self.errors.get(e as usize),
            _ => None,
        }
    }
}

fn slice(names: &str, (a, b): (usize, usize)) -> &str {
    names.get(a..b).unwrap_or("")
}

/// One file of an `events/` directory.
#[derive(Clone, Copy)]
pub struct File<'a> {
    set: &'a EventFiles,
    rec: &'a FileRec,
}

impl fmt::Debug for File<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("File")
            .field("name", &self.name())
            .field("index", &self.index())
            .field("id", &self.id())
            .field("status", &self.status())
            .finish()
    }
}

impl<'a> File<'a> {
    /// The file name.
    pub fn name(&self) -> &'a str {
        slice(&self.set.names, self.rec.name)
    }

    /// The index the name holds; `None` for a bad name, or an index too large
    /// for a `u64`.
    pub fn index(&self) -> Option<u64> {
        self.rec.index
    }

    /// The event ID the name holds; `None` for a bad name.
    pub fn id(&self) -> Option<&'a str> {
        self.rec
            .matched
            .then(|| slice(&self.set.names, self.rec.id))
    }

    /// What the file is to the reader.
    pub fn status(&self) -> FileStatus {
        self.rec.status
    }

    /// Why a malformed or unreadable file did not read.
    pub fn error(&self) -> Option<&'a FileError> {
        match self.rec.detail {
            Detail::Malformed(e) => self.set.errors.get(e as usize),
            _ => None,
        }
    }

    /// Why the file is not an event of the sequence; `None` for an event.
    pub fn reason(&self) -> Option<Reason<'a>> {
        match self.rec.detail {
            Detail::None => None,
            Detail::BadName(e) => Some(Reason::BadName(e)),
            Detail::Gap => Some(Reason::Gap {
                missing: self.set.missing.unwrap_or(0),
            }),
            Detail::Duplicate(w) => Some(Reason::Duplicate {
                taken_by: self.set.name_of(w),
            }),
            Detail::Malformed(e) => {
                let err = self.set.errors.get(e as usize)?;
                Some(match self.rec.status {
                    FileStatus::Unreadable => Reason::Unreadable(err),
                    _ => Reason::Malformed(err),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ascii_path_reads_as_the_full_parser() {
        let names = [
            "event-00042-0b9f1c3e-5d2a.json",
            "event-123456-abcdef12.json",
            "event-99999999999999999999999-abcdef12.json",
            "event-00000-abcdef12.json\n",
            "event-٠٠٠٠٣-abcdef12.json",
            "event-0000٣-abcdef12.json",
            "event-00003٣-abcdef12.json",
            "event-0000-abcdef12.json",
            "event-00000-abcdefgh.json",
            "event-00000-abcdef1.json",
            "event-00000abcdef12.json",
            "event-00000-abcdef12.jsonx",
            "event-00000-ABCDEF12-.json",
            "Event-00000-abcdef12.json",
            "event--abcdef12.json",
            "event-00000-.json",
            "event-.json",
        ];
        let mut accepted = 0;
        for p in [NamePattern::FiveDigits, NamePattern::FiveOrMoreDigits] {
            for n in names {
                if let Some(fast) = parse_ascii_event_name(n, p) {
                    accepted += 1;
                    assert_eq!(Ok(fast), parse_event_name(n, p), "{n:?}");
                }
            }
        }
        assert_eq!(accepted, 6);
        let p = NamePattern::FiveOrMoreDigits;
        assert!(parse_ascii_event_name("event-00042-0b9f1c3e-5d2a.json", p).is_some());
        assert!(parse_ascii_event_name("event-٠٠٠٠٣-abcdef12.json", p).is_none());
    }

    #[test]
    fn names() {
        let p = NamePattern::FiveOrMoreDigits;
        let n = parse_event_name("event-00042-0b9f1c3e-5d2a.json", p).unwrap();
        assert_eq!(
            (n.index, n.id, n.digits),
            (Some(42), "0b9f1c3e-5d2a", "00042")
        );
        assert_eq!(
            parse_event_name("event-123456-abcdef12.json", p)
                .unwrap()
                .index,
            Some(123_456)
        );
        assert_eq!(
            parse_event_name("event-123456-abcdef12.json", NamePattern::FiveDigits),
            Err(NameError::Index {
                five_or_more: false
            })
        );
        assert!(parse_event_name("event-00000-abcdef12.json\n", p).is_ok());
        assert!(parse_event_name("event-00000-abcdef12.json\n\n", p).is_err());
        // Arabic-Indic digits are `\d` to Python.
        let n = parse_event_name("event-٠٠٠٠٣-abcdef12.json", p).unwrap();
        assert_eq!(n.index, Some(3));
        assert_eq!(
            parse_event_name("event-0000-abcdef12.json", p),
            Err(NameError::Index { five_or_more: true })
        );
        assert_eq!(
            parse_event_name("event-00000-abcdefgh.json", p),
            Err(NameError::Id)
        );
        assert_eq!(
            parse_event_name("event-00000-abcdef1.json", p),
            Err(NameError::Id)
        );
        assert_eq!(
            parse_event_name("event-00000-abcdef12.JSON", p),
            Err(NameError::Suffix)
        );
        assert_eq!(
            parse_event_name("Event-00000-abcdef12.json", p),
            Err(NameError::Prefix)
        );
        assert_eq!(
            parse_event_name("event-00000_abcdef12.json", p),
            Err(NameError::Index { five_or_more: true })
        );
        let big = "event-99999999999999999999999-abcdef12.json";
        assert_eq!(parse_event_name(big, p).unwrap().index, None);
        assert_eq!(decimal_value('\u{1E4F9}'), Some(9));
        assert_eq!(decimal_value('\u{1E4FA}'), None);
        assert_eq!(decimal_value('a'), None);
        assert_eq!(decimal_value('\u{FF15}'), Some(5));
    }
}
