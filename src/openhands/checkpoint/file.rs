//! A checkpoint file of either kind the crate writes (an OpenHands
//! store's, an OC Chat sessions directory's): the header line
//! `{"format":…,"version":…,"sha256":…}` and the body it guards, written,
//! read and checked in one place.

use super::*;

/// What a checkpoint file is of, told by its header's `format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// An OpenHands store's ([`Checkpoint`]).
    OpenHands,
    /// An OC Chat sessions directory's (the follower's
    /// `SessionsCheckpoint`).
    OcChatSessions,
}

/// The `format` member of an OC Chat sessions checkpoint's header.
pub(crate) const OCCHAT_FORMAT: &str = "agentlog-occhat-checkpoint";

impl FileKind {
    /// The header's `format` member.
    fn format(self) -> &'static str {
        match self {
            FileKind::OpenHands => FORMAT,
            FileKind::OcChatSessions => OCCHAT_FORMAT,
        }
    }

    /// The kind whose header says `format`.
    fn of_format(format: &str) -> Option<FileKind> {
        [FileKind::OpenHands, FileKind::OcChatSessions]
            .into_iter()
            .find(|k| k.format() == format)
    }

    /// What it is a checkpoint of, in an error.
    fn what(self) -> &'static str {
        match self {
            FileKind::OpenHands => "an OpenHands store",
            FileKind::OcChatSessions => "an OC Chat sessions directory",
        }
    }
}

impl CheckpointError {
    /// A damaged checkpoint at `path`.
    pub(crate) fn corrupt(path: &Path, reason: &str) -> CheckpointError {
        CheckpointError::Corrupt {
            path: path.to_path_buf(),
            reason: reason.to_owned(),
        }
    }
}

/// The file's bytes: the header of `kind` (format version
/// [`CHECKPOINT_VERSION`]) and `body` compact, each on its own line.
pub(crate) fn to_file_bytes(kind: FileKind, body: &OwnedValue, capacity: usize) -> Vec<u8> {
    let mut body_bytes = Vec::with_capacity(capacity);
    body.write_to(&mut body_bytes, Style::COMPACT);
    let header = obj(vec![
        ("format", OwnedValue::string(kind.format())),
        ("version", uint(CHECKPOINT_VERSION)),
        ("sha256", OwnedValue::string(sha256_hex(&body_bytes))),
    ]);
    let mut out = Vec::with_capacity(body_bytes.len() + 128);
    header.write_to(&mut out, Style::COMPACT);
    out.push(b'\n');
    out.extend_from_slice(&body_bytes);
    out.push(b'\n');
    out
}

/// The body of a checkpoint file of `kind`, its header checked: refuses a
/// file that is not a checkpoint, one of another kind, of a newer format
/// version, or whose body does not match its digest or is not JSON.
/// `path` is only reported in errors.
#[cfg(feature = "follow")]
pub(crate) fn parse_file_bytes(
    bytes: &[u8],
    path: &Path,
    kind: FileKind,
) -> Result<OwnedValue, CheckpointError> {
    let body = checked_body(bytes, path, kind)?;
    OwnedValue::parse(body).map_err(|e| CheckpointError::corrupt(path, &format!("body: {e}")))
}

/// The body of a checkpoint file of `kind`, its header checked as
/// [`parse_file_bytes`] checks it, not yet parsed.
pub(crate) fn checked_body<'b>(
    bytes: &'b [u8],
    path: &Path,
    kind: FileKind,
) -> Result<&'b [u8], CheckpointError> {
    let not = || CheckpointError::NotACheckpoint {
        path: path.to_path_buf(),
    };
    let corrupt = |reason: &str| CheckpointError::corrupt(path, reason);
    let nl = bytes.iter().position(|&b| b == b'\n').ok_or_else(not)?;
    let (head, rest) = bytes.split_at(nl);
    let header = OwnedValue::parse(head).map_err(|_| not())?;
    let found = header
        .get("format")
        .and_then(OwnedValue::as_str)
        .and_then(FileKind::of_format)
        .ok_or_else(not)?;
    if found != kind {
        return Err(CheckpointError::OtherKind {
            path: path.to_path_buf(),
            found: found.what(),
            wanted: kind.what(),
        });
    }
    let version = header
        .get("version")
        .and_then(as_u64)
        .ok_or_else(|| corrupt("the header has no version"))?;
    if version > CHECKPOINT_VERSION {
        return Err(CheckpointError::Version {
            path: path.to_path_buf(),
            found: version,
        });
    }
    if version == 0 {
        return Err(corrupt("unknown format version"));
    }
    let body = rest.get(1..).unwrap_or(&[]);
    let body = body.strip_suffix(b"\n").unwrap_or(body);
    let digest = header
        .get("sha256")
        .and_then(OwnedValue::as_str)
        .ok_or_else(|| corrupt("the header has no digest"))?;
    if sha256_hex(body) != digest {
        return Err(corrupt("the body does not match its digest"));
    }
    Ok(body)
}

/// The bytes of the checkpoint file at `path`; refuses anything there but
/// a regular file (an empty one is not a checkpoint), a symbolic link
/// included ([`CheckpointError::Link`]).
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, CheckpointError> {
    let meta = fs::symlink_metadata(path).map_err(|source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if meta.file_type().is_symlink() {
        return Err(CheckpointError::Link {
            path: path.to_path_buf(),
        });
    }
    if !meta.is_file() {
        return Err(CheckpointError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mut bytes = Vec::new();
    crate::source::read_into(path, &mut bytes).map_err(|e| match e {
        crate::source::SourceError::Empty { .. } => CheckpointError::NotACheckpoint {
            path: path.to_path_buf(),
        },
        crate::source::SourceError::NotAFile { .. } => CheckpointError::NotAFile {
            path: path.to_path_buf(),
        },
        other => CheckpointError::Io {
            path: path.to_path_buf(),
            source: io::Error::other(other.to_string()),
        },
    })?;
    Ok(bytes)
}

/// Whether there is no checkpoint at `path` yet (a first run): nothing
/// there, or an empty regular file (`touch CP`: a file made ready for the
/// checkpoint, which no save of ours leaves — a save writes the whole file
/// under another name first). A symbolic link, even a dangling one, is not
/// "nothing": [`read_file`] refuses it.
pub(crate) fn no_file_yet(path: &Path) -> bool {
    match fs::symlink_metadata(path) {
        Err(e) => e.kind() == io::ErrorKind::NotFound,
        Ok(m) => m.is_file() && m.len() == 0,
    }
}
