//! A checkpoint as JSON: the value [`Checkpoint::save`] writes (read back
//! by [`decode`](super::decode)).

use super::*;

impl Checkpoint {
    pub(super) fn to_value(&self) -> OwnedValue {
        let dirs = self
            .dirs
            .iter()
            .map(|(p, d)| {
                obj(vec![
                    ("path", path_value(p)),
                    (
                        "stamp",
                        d.stamp.as_ref().map_or(OwnedValue::Null, stamp_value),
                    ),
                    (
                        "children",
                        OwnedValue::Array(d.children.iter().map(OwnedValue::string).collect()),
                    ),
                ])
            })
            .collect();
        let convs = self
            .conversations
            .iter()
            .map(|(p, m)| conv_value(p, &m))
            .collect();
        obj(vec![
            ("root", path_value(&self.root)),
            ("canonical", path_value(&self.canonical)),
            (
                "root_id",
                OwnedValue::Array(vec![uint(self.root_id.0), uint(self.root_id.1)]),
            ),
            (
                "pattern",
                OwnedValue::string(match self.pattern {
                    NamePattern::FiveDigits => "five",
                    NamePattern::FiveOrMoreDigits => "five-or-more",
                }),
            ),
            ("taken", OwnedValue::string(self.taken.to_string())),
            ("dirs", OwnedValue::Array(dirs)),
            ("conversations", OwnedValue::Array(convs)),
        ])
    }
}

pub(crate) fn obj(members: Vec<(&str, OwnedValue)>) -> OwnedValue {
    let mut m = Map::new();
    for (k, v) in members {
        m.entries_mut().push((k.to_owned(), v));
    }
    OwnedValue::Object(m)
}

pub(crate) fn uint(v: u64) -> OwnedValue {
    OwnedValue::Number(Number::from(v))
}

pub(crate) fn as_u64(v: &OwnedValue) -> Option<u64> {
    v.as_number()?.as_str().parse().ok()
}

/// A path: a string when it is UTF-8, else `{"bytes": "<hex>"}`.
fn path_value(p: &Path) -> OwnedValue {
    match p.to_str() {
        Some(s) => OwnedValue::string(s),
        None => obj(vec![(
            "bytes",
            OwnedValue::string(hex(&os_bytes(p.as_os_str()))),
        )]),
    }
}

/// `bytes` as lowercase hex digits, two a byte.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes that hex digits (either case, two a byte) spell; `None` when
/// `s` is not that.
pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(unix)]
fn os_bytes(s: &std::ffi::OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    s.as_bytes().to_vec()
}

#[cfg(not(unix))]
fn os_bytes(s: &std::ffi::OsStr) -> Vec<u8> {
    s.to_string_lossy().into_owned().into_bytes()
}

/// A stamp as `[dev, ino, size, mtime, mtime_nsec, ctime, ctime_nsec]`
/// (the last two left out when no change time is recorded).
pub(crate) fn stamp_value(s: &Stamp) -> OwnedValue {
    let mut a = vec![
        uint(s.dev),
        uint(s.ino),
        uint(s.size),
        OwnedValue::int(s.mtime),
        uint(u64::from(s.mtime_nsec)),
    ];
    if let Some((c, n)) = s.ctime {
        a.push(OwnedValue::int(c));
        a.push(uint(u64::from(n)));
    }
    OwnedValue::Array(a)
}

/// What [`stamp_value`] wrote; five members (format version 1) are a stamp
/// without a change time.
#[cfg(feature = "follow")]
pub(crate) fn value_stamp(v: &OwnedValue) -> Option<Stamp> {
    let a = v.as_array()?;
    let nsec = |v: &OwnedValue| {
        u32::try_from(as_u64(v)?)
            .ok()
            .filter(|n| *n < 1_000_000_000)
    };
    let ctime = match a.len() {
        5 => None,
        7 => Some((a.get(5)?.as_number()?.as_i64()?, nsec(a.get(6)?)?)),
        _ => return None,
    };
    Some(Stamp {
        dev: as_u64(a.first()?)?,
        ino: as_u64(a.get(1)?)?,
        size: as_u64(a.get(2)?)?,
        mtime: a.get(3)?.as_number()?.as_i64()?,
        mtime_nsec: nsec(a.get(4)?)?,
        ctime,
    })
}

fn opt_stamp(v: Option<&Stamp>) -> OwnedValue {
    v.map_or(OwnedValue::Null, stamp_value)
}

fn file_value(f: &FileMark) -> OwnedValue {
    obj(vec![
        ("index", uint(f.index)),
        ("name", OwnedValue::string(&*f.name)),
        ("stamp", stamp_value(&f.stamp)),
    ])
}

fn json_value(j: Option<&JsonMark>) -> OwnedValue {
    match j {
        None => OwnedValue::Null,
        Some(j) => obj(vec![
            ("stamp", stamp_value(&j.stamp)),
            ("sha256", OwnedValue::string(hex(&j.sha256))),
        ]),
    }
}

fn conv_value(p: &Path, m: &ConversationMark) -> OwnedValue {
    obj(vec![
        ("path", path_value(p)),
        ("id", OwnedValue::string(&*m.id)),
        ("depth", uint(m.depth as u64)),
        ("dir", stamp_value(&m.dir)),
        ("events_dir", opt_stamp(m.events_dir.as_ref())),
        ("subagents_dir", opt_stamp(m.subagents_dir.as_ref())),
        (
            "subagents",
            OwnedValue::Array(m.subagents.iter().map(OwnedValue::string).collect()),
        ),
        ("next", uint(m.next)),
        ("last", m.last.as_ref().map_or(OwnedValue::Null, file_value)),
        (
            "last_sha256",
            m.last_sha256
                .map_or(OwnedValue::Null, |d| OwnedValue::string(hex(&d))),
        ),
        ("names", OwnedValue::string(hex(&m.names))),
        (
            "retry",
            OwnedValue::Array(m.retry.iter().map(file_value).collect()),
        ),
        (
            "stamps",
            m.stamps
                .map_or(OwnedValue::Null, |d| OwnedValue::string(hex(&d))),
        ),
        ("unsettled", OwnedValue::Bool(m.unsettled)),
        ("gap", m.gap.map_or(OwnedValue::Null, uint)),
        ("state", json_value(m.state.as_ref())),
        ("meta", json_value(m.meta.as_ref())),
    ])
}
