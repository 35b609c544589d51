//! A checkpoint as JSON: its value and back, each member checked.

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

    pub(super) fn from_value(v: &OwnedValue) -> Result<Checkpoint, String> {
        let o = v.as_object().ok_or("the body is not an object")?;
        let root_id = o
            .get("root_id")
            .and_then(OwnedValue::as_array)
            .ok_or("no root_id")?;
        let (Some(dev), Some(ino)) = (
            root_id.first().and_then(as_u64),
            root_id.get(1).and_then(as_u64),
        ) else {
            return Err("bad root_id".into());
        };
        let pattern = match o.get("pattern").and_then(OwnedValue::as_str) {
            Some("five") => NamePattern::FiveDigits,
            Some("five-or-more") => NamePattern::FiveOrMoreDigits,
            _ => return Err("bad pattern".into()),
        };
        let taken = o
            .get("taken")
            .and_then(OwnedValue::as_str)
            .and_then(|s| s.parse::<i128>().ok())
            .ok_or("bad taken")?;
        let mut dirs = BTreeMap::new();
        for d in o
            .get("dirs")
            .and_then(OwnedValue::as_array)
            .ok_or("no dirs")?
        {
            let path = d.get("path").ok_or("a dir without path")?;
            let path = value_path(path).ok_or("bad dir path")?;
            let stamp = match d.get("stamp") {
                Some(OwnedValue::Null) | None => None,
                Some(s) => Some(value_stamp(s).ok_or("bad dir stamp")?),
            };
            let children = strings(d.get("children")).ok_or("bad dir children")?;
            dirs.insert(path, DirMark { stamp, children });
        }
        let mut conversations = Marks::default();
        for c in o
            .get("conversations")
            .and_then(OwnedValue::as_array)
            .ok_or("no conversations")?
        {
            let (p, m) = value_conv(c).ok_or("bad conversation")?;
            conversations.insert(p, &m);
        }
        Ok(Checkpoint {
            root: value_path(o.get("root").ok_or("no root")?).ok_or("bad root")?,
            canonical: value_path(o.get("canonical").ok_or("no canonical")?)
                .ok_or("bad canonical")?,
            root_id: (dev, ino),
            pattern,
            taken,
            dirs,
            conversations,
        })
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

fn strings(v: Option<&OwnedValue>) -> Option<Vec<String>> {
    v?.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
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

fn value_path(v: &OwnedValue) -> Option<PathBuf> {
    if let Some(s) = v.as_str() {
        return Some(PathBuf::from(s));
    }
    let bytes = unhex(v.get("bytes")?.as_str()?)?;
    Some(PathBuf::from(os_from_bytes(bytes)))
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

/// A SHA-256 digest written as 64 hex digits.
fn digest(v: &OwnedValue) -> Option<[u8; 32]> {
    unhex(v.as_str()?)?.try_into().ok()
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

#[cfg(unix)]
fn os_from_bytes(b: Vec<u8>) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(b)
}

#[cfg(not(unix))]
fn os_from_bytes(b: Vec<u8>) -> OsString {
    OsString::from(String::from_utf8_lossy(&b).into_owned())
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

fn value_opt_stamp(v: Option<&OwnedValue>) -> Option<Option<Stamp>> {
    match v {
        None | Some(OwnedValue::Null) => Some(None),
        Some(s) => value_stamp(s).map(Some),
    }
}

fn file_value(f: &FileMark) -> OwnedValue {
    obj(vec![
        ("index", uint(f.index)),
        ("name", OwnedValue::string(&*f.name)),
        ("stamp", stamp_value(&f.stamp)),
    ])
}

fn value_file(v: &OwnedValue) -> Option<FileMark> {
    Some(FileMark {
        index: as_u64(v.get("index")?)?,
        name: v.get("name")?.as_str()?.to_owned(),
        stamp: value_stamp(v.get("stamp")?)?,
    })
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

fn value_json(v: Option<&OwnedValue>) -> Option<Option<JsonMark>> {
    match v {
        None | Some(OwnedValue::Null) => Some(None),
        Some(j) => Some(Some(JsonMark {
            stamp: value_stamp(j.get("stamp")?)?,
            sha256: digest(j.get("sha256")?)?,
        })),
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

fn value_conv(v: &OwnedValue) -> Option<(PathBuf, ConversationMark)> {
    let last = match v.get("last")? {
        OwnedValue::Null => None,
        f => Some(value_file(f)?),
    };
    let retry: Option<Vec<FileMark>> = v.get("retry")?.as_array()?.iter().map(value_file).collect();
    let m = ConversationMark {
        id: v.get("id")?.as_str()?.to_owned(),
        depth: usize::try_from(as_u64(v.get("depth")?)?).ok()?,
        dir: value_stamp(v.get("dir")?)?,
        events_dir: value_opt_stamp(v.get("events_dir"))?,
        subagents_dir: value_opt_stamp(v.get("subagents_dir"))?,
        subagents: strings(v.get("subagents"))?,
        next: as_u64(v.get("next")?)?,
        last,
        last_sha256: match v.get("last_sha256") {
            None | Some(OwnedValue::Null) => None,
            Some(d) => Some(digest(d)?),
        },
        names: digest(v.get("names")?)?,
        retry: retry?,
        stamps: match v.get("stamps") {
            None | Some(OwnedValue::Null) => None,
            Some(d) => Some(digest(d)?),
        },
        unsettled: v.get("unsettled")?.as_bool()?,
        gap: match v.get("gap")? {
            OwnedValue::Null => None,
            g => Some(as_u64(g)?),
        },
        state: value_json(v.get("state"))?,
        meta: value_json(v.get("meta"))?,
    };
    // A mark that says events were read names the last one.
    if (m.next == 0) != m.last.is_none() {
        return None;
    }
    Some((value_path(v.get("path")?)?, m))
}
