//! A checkpoint's body read back from simd-json's tape: each member
//! checked as [`encode`](super::encode) wrote it, nothing built that the
//! checkpoint does not keep (no owned JSON tree in between), the
//! conversations' marks packed as they are read.

use super::encode::unhex;
use super::*;
use crate::json::{Parser, Value};

impl Checkpoint {
    /// The checkpoint a body of the file holds (the header already
    /// checked); the reason when it does not hold one.
    pub(super) fn from_body(body: &[u8]) -> Result<Checkpoint, String> {
        let mut parser = Parser::with_capacity(body.len());
        let doc = parser.parse(body).map_err(|e| format!("body: {e}"))?;
        let o = doc.root().as_object().ok_or("the body is not an object")?;
        let [
            root,
            canonical,
            root_id,
            pattern,
            taken,
            dirs,
            conversations,
        ] = o.get_many([
            "root",
            "canonical",
            "root_id",
            "pattern",
            "taken",
            "dirs",
            "conversations",
        ]);
        let root_id = root_id.and_then(Value::as_array).ok_or("no root_id")?;
        let mut ids = root_id.iter().map(Value::as_u64);
        let (Some(Some(dev)), Some(Some(ino))) = (ids.next(), ids.next()) else {
            return Err("bad root_id".into());
        };
        let pattern = match pattern.and_then(Value::as_str) {
            Some("five") => NamePattern::FiveDigits,
            Some("five-or-more") => NamePattern::FiveOrMoreDigits,
            _ => return Err("bad pattern".into()),
        };
        let taken = taken
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<i128>().ok())
            .ok_or("bad taken")?;
        let dirs = dirs.and_then(Value::as_array).ok_or("no dirs")?;
        let mut dir_marks = Vec::with_capacity(dirs.len());
        for d in dirs {
            let [path, stamp, children] = d
                .as_object()
                .ok_or("a dir that is not an object")?
                .get_many(["path", "stamp", "children"]);
            let path = path.ok_or("a dir without path")?;
            let path = tape_path(path).ok_or("bad dir path")?;
            let stamp = match stamp {
                None => None,
                Some(s) if s.is_null() => None,
                Some(s) => Some(tape_stamp(s).ok_or("bad dir stamp")?),
            };
            let children = strings(children).ok_or("bad dir children")?;
            dir_marks.push((path, DirMark { stamp, children }));
        }
        let convs = conversations
            .and_then(Value::as_array)
            .ok_or("no conversations")?;
        let mut marks = Vec::with_capacity(convs.len());
        for c in convs {
            marks.push(tape_conv(c).ok_or("bad conversation")?);
        }
        Ok(Checkpoint {
            root: tape_path(root.ok_or("no root")?).ok_or("bad root")?,
            canonical: tape_path(canonical.ok_or("no canonical")?).ok_or("bad canonical")?,
            root_id: (dev, ino),
            pattern,
            taken,
            // The file lists both in path order: built in bulk, not by one
            // search each (a repeated path keeps its last mark, as
            // inserting each in turn would).
            dirs: dir_marks.into_iter().collect(),
            conversations: marks.into_iter().collect(),
        })
    }
}

/// A list of strings.
fn strings(v: Option<Value<'_>>) -> Option<Vec<String>> {
    v?.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// What `encode`'s path value wrote: a string, or `{"bytes": "<hex>"}`.
fn tape_path(v: Value<'_>) -> Option<PathBuf> {
    if let Some(s) = v.as_str() {
        return Some(PathBuf::from(s));
    }
    let bytes = unhex(v.get("bytes")?.as_str()?)?;
    Some(PathBuf::from(os_from_bytes(bytes)))
}

/// A SHA-256 digest written as 64 hex digits.
fn digest(v: Value<'_>) -> Option<[u8; 32]> {
    unhex(v.as_str()?)?.try_into().ok()
}

/// A digest or `null` (absent is `null`).
fn opt_digest(v: Option<Value<'_>>) -> Option<Option<[u8; 32]>> {
    match v {
        None => Some(None),
        Some(d) if d.is_null() => Some(None),
        Some(d) => digest(d).map(Some),
    }
}

/// What `encode::stamp_value` wrote; five members (format version 1) are
/// a stamp without a change time.
fn tape_stamp(v: Value<'_>) -> Option<Stamp> {
    let a = v.as_array()?;
    let nsec = |v: Value<'_>| {
        u32::try_from(v.as_u64()?)
            .ok()
            .filter(|n| *n < 1_000_000_000)
    };
    let mut it = a.iter();
    let (dev, ino, size, mtime, mtime_nsec) = (
        it.next()?.as_u64()?,
        it.next()?.as_u64()?,
        it.next()?.as_u64()?,
        it.next()?.as_i64()?,
        nsec(it.next()?)?,
    );
    let ctime = match a.len() {
        5 => None,
        7 => Some((it.next()?.as_i64()?, nsec(it.next()?)?)),
        _ => return None,
    };
    Some(Stamp {
        dev,
        ino,
        size,
        mtime,
        mtime_nsec,
        ctime,
    })
}

/// A stamp or `null` (absent is `null`).
fn opt_stamp(v: Option<Value<'_>>) -> Option<Option<Stamp>> {
    match v {
        None => Some(None),
        Some(s) if s.is_null() => Some(None),
        Some(s) => tape_stamp(s).map(Some),
    }
}

/// A file's mark: `{"index", "name", "stamp"}`.
fn tape_file(v: Value<'_>) -> Option<FileMark> {
    let [index, name, stamp] = v.as_object()?.get_many(["index", "name", "stamp"]);
    Some(FileMark {
        index: index?.as_u64()?,
        name: name?.as_str()?.to_owned(),
        stamp: tape_stamp(stamp?)?,
    })
}

/// A JSON file's mark (`{"stamp", "sha256"}`) or `null` (absent is
/// `null`).
fn tape_json(v: Option<Value<'_>>) -> Option<Option<JsonMark>> {
    match v {
        None => Some(None),
        Some(j) if j.is_null() => Some(None),
        Some(j) => {
            let [stamp, sha256] = j.as_object()?.get_many(["stamp", "sha256"]);
            Some(Some(JsonMark {
                stamp: tape_stamp(stamp?)?,
                sha256: digest(sha256?)?,
            }))
        }
    }
}

/// A conversation's path and mark, as `encode::conv_value` wrote them.
fn tape_conv(v: Value<'_>) -> Option<(PathBuf, ConversationMark)> {
    let [
        path,
        id,
        depth,
        dir,
        events_dir,
        subagents_dir,
        subagents,
        next,
        last,
        last_sha256,
        names,
        retry,
        stamps,
        unsettled,
        gap,
        state,
        meta,
    ] = v.as_object()?.get_many([
        "path",
        "id",
        "depth",
        "dir",
        "events_dir",
        "subagents_dir",
        "subagents",
        "next",
        "last",
        "last_sha256",
        "names",
        "retry",
        "stamps",
        "unsettled",
        "gap",
        "state",
        "meta",
    ]);
    let last = match last? {
        f if f.is_null() => None,
        f => Some(tape_file(f)?),
    };
    let retry: Option<Vec<FileMark>> = retry?.as_array()?.iter().map(tape_file).collect();
    let m = ConversationMark {
        id: id?.as_str()?.to_owned(),
        depth: usize::try_from(depth?.as_u64()?).ok()?,
        dir: tape_stamp(dir?)?,
        events_dir: opt_stamp(events_dir)?,
        subagents_dir: opt_stamp(subagents_dir)?,
        subagents: strings(subagents)?,
        next: next?.as_u64()?,
        last,
        last_sha256: opt_digest(last_sha256)?,
        names: digest(names?)?,
        retry: retry?,
        stamps: opt_digest(stamps)?,
        unsettled: unsettled?.as_bool()?,
        gap: match gap? {
            g if g.is_null() => None,
            g => Some(g.as_u64()?),
        },
        state: tape_json(state)?,
        meta: tape_json(meta)?,
    };
    // A mark that says events were read names the last one.
    if (m.next == 0) != m.last.is_none() {
        return None;
    }
    Some((tape_path(path?)?, m))
}

#[cfg(unix)]
fn os_from_bytes(b: Vec<u8>) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(b)
}

#[cfg(not(unix))]
fn os_from_bytes(b: Vec<u8>) -> OsString {
    OsString::from(String::from_utf8_lossy(&b).into_owned())
}
