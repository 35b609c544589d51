//! What the index keeps besides its documents: per store, the checkpoint
//! of what was indexed, in a file named by its SHA-256, and the commit
//! payload naming those files (see the [module docs](super)).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::hash::sha256_hex;
use crate::json::{OwnedValue, Style};
use crate::output::Output;

use super::update::StoreKind;
use super::{CHECKPOINT_PREFIX, SCHEMA_VERSION, SearchError, SearchIndex};

/// The payload's `format`.
const FORMAT: &str = "agentlog-search-index";

/// One store the index holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoreEntry {
    /// What kind of store.
    pub kind: StoreKind,
    /// Its canonical root.
    pub root: String,
    /// The checkpoint file's name in the index directory.
    pub checkpoint: String,
}

/// The commit payload: the stores and their checkpoint files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Payload {
    pub stores: Vec<StoreEntry>,
}

impl Payload {
    pub(crate) fn to_json(&self) -> String {
        let stores = self
            .stores
            .iter()
            .map(|s| {
                OwnedValue::Object(
                    [
                        ("kind".to_owned(), OwnedValue::string(s.kind.as_str())),
                        ("root".to_owned(), OwnedValue::string(s.root.as_str())),
                        (
                            "checkpoint".to_owned(),
                            OwnedValue::string(s.checkpoint.as_str()),
                        ),
                    ]
                    .into_iter()
                    .collect(),
                )
            })
            .collect();
        let v = OwnedValue::Object(
            [
                ("format".to_owned(), OwnedValue::string(FORMAT)),
                ("version".to_owned(), OwnedValue::int(SCHEMA_VERSION as i64)),
                ("stores".to_owned(), OwnedValue::Array(stores)),
            ]
            .into_iter()
            .collect(),
        );
        let mut out = Vec::new();
        v.write_to(&mut out, Style::COMPACT);
        String::from_utf8(out).unwrap_or_default()
    }

    fn from_json(s: &str, dir: &Path) -> Result<Payload, SearchError> {
        let bad = |what: &str| SearchError::Format {
            path: dir.to_path_buf(),
            what: format!("the commit payload {what}"),
        };
        let v = OwnedValue::parse(s.as_bytes()).map_err(|_| bad("is not JSON"))?;
        if v.get("format").and_then(OwnedValue::as_str) != Some(FORMAT) {
            return Err(bad("is not an agentlog index's"));
        }
        let version = v
            .get("version")
            .and_then(OwnedValue::as_number)
            .and_then(|n| n.as_i64());
        if version != Some(SCHEMA_VERSION as i64) {
            return Err(bad(&format!(
                "is of index version {version:?}; this agentlog reads {SCHEMA_VERSION}"
            )));
        }
        let mut stores = Vec::new();
        for s in v
            .get("stores")
            .and_then(OwnedValue::as_array)
            .ok_or_else(|| bad("has no stores"))?
        {
            let get = |k: &str| s.get(k).and_then(OwnedValue::as_str);
            let (Some(kind), Some(root), Some(cp)) = (get("kind"), get("root"), get("checkpoint"))
            else {
                return Err(bad("has a store without kind, root or checkpoint"));
            };
            let kind = StoreKind::parse(kind).ok_or_else(|| bad("has a store of unknown kind"))?;
            stores.push(StoreEntry {
                kind,
                root: root.to_owned(),
                checkpoint: cp.to_owned(),
            });
        }
        Ok(Payload { stores })
    }
}

/// The name of a checkpoint file holding `bytes`.
pub(crate) fn checkpoint_name(bytes: &[u8]) -> String {
    format!("{CHECKPOINT_PREFIX}{}.cp", sha256_hex(bytes))
}

impl SearchIndex {
    /// The last commit's payload; empty for a new index.
    pub(crate) fn payload(&self) -> Result<Payload, SearchError> {
        let metas = self.index.load_metas().map_err(|e| self.tv(e))?;
        match metas.payload {
            None => Ok(Payload::default()),
            Some(p) => Payload::from_json(&p, &self.dir),
        }
    }

    /// The bytes of the checkpoint file `name`, when it is there and its
    /// bytes are those its name promises.
    pub(crate) fn read_checkpoint(&self, name: &str) -> Option<Vec<u8>> {
        if !name.starts_with(CHECKPOINT_PREFIX) || name.contains('/') {
            return None;
        }
        let bytes = fs::read(self.dir.join(name)).ok()?;
        (checkpoint_name(&bytes) == name).then_some(bytes)
    }

    /// Writes a checkpoint file (atomically; an existing file of that name
    /// holds these bytes already) and gives its name.
    pub(crate) fn write_checkpoint(&self, bytes: &[u8]) -> Result<String, SearchError> {
        let name = checkpoint_name(bytes);
        if self.read_checkpoint(&name).is_some() {
            return Ok(name);
        }
        let path = self.dir.join(&name);
        let out_err = |e: crate::output::OutputError| SearchError::Io {
            path: path.clone(),
            source: std::io::Error::other(e.to_string()),
        };
        // The directory holds no link (checked when opened), and the name
        // is new: the temporary file and the rename stay in it.
        let mut out = Output::create(&path).map_err(out_err)?;
        out.write_all(bytes)
            .map_err(|e| SearchError::io(&path, e))?;
        out.commit().map_err(out_err)?;
        Ok(name)
    }

    /// Removes the checkpoint files `keep` does not name (those of older
    /// commits), and the temporary files of checkpoint writes a killed run
    /// left; called with the writer's lock held. A file that cannot be
    /// removed is left for the next run.
    pub(crate) fn remove_old_checkpoints(&self, keep: &Payload) {
        let Ok(rd) = fs::read_dir(&self.dir) else {
            return;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            let old = name.starts_with(CHECKPOINT_PREFIX)
                && name.ends_with(".cp")
                && !keep.stores.iter().any(|s| s.checkpoint == name);
            // The temporary file of a checkpoint write a killed run left
            // (see `output`): no other writer runs (tantivy's lock is held).
            let stale =
                crate::output::is_temporary_name(name) && name[1..].starts_with(CHECKPOINT_PREFIX);
            if (old || stale) && e.file_type().is_ok_and(|t| t.is_file()) {
                let _ = fs::remove_file(self.dir.join(name));
            }
        }
    }

    /// The path of a file in the index directory.
    #[allow(dead_code)]
    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}
