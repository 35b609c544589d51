//! Finding things without their whole path: the store a command reads when
//! it is given no PATH, and a conversation by its ID (or a unique prefix of
//! it) under a store.
//!
//! The default store is the first of:
//!
//! 1. `$AGENTLOG_STORE`;
//! 2. `$OPENHANDS_CONVERSATIONS_DIR`, then `$OPENHANDS_PERSISTENCE_DIR/conversations`,
//!    then `~/.openhands/conversations`: where the OpenHands CLI keeps its
//!    SDK conversations (the OpenHands CLI's `openhands_cli/locations.py`;
//!    the SDK itself has no default, `persistence_dir` is the caller's).
//!
//! A conversation ID is looked for among the top-level conversations the
//! store's discovery finds (sub-agents are reached through their parent),
//! by the directory's name taken as an ID (32 hex digits; dashes and ASCII
//! case ignored, so a UUID as printed works too), whole or by a unique
//! prefix ([`crate::ids::by_prefix`]: a prefix that names several is an
//! error listing them).

use std::path::{Path, PathBuf};

use agentlog::openhands::{self, hex_id};

use crate::out::{Fail, Res};

/// The environment variable naming the default store.
pub const ENV_STORE: &str = "AGENTLOG_STORE";

/// `--store DIR`, for the commands that take one conversation.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct StoreArg {
    /// Where to look PATH up when it is a conversation ID or a unique
    /// prefix of one (default: $AGENTLOG_STORE, else
    /// ~/.openhands/conversations).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
}

/// The default store and what named it (for messages): see the module docs.
/// `None` when no variable is set and there is no home directory.
pub fn default_store() -> Option<(PathBuf, String)> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(v) = var(ENV_STORE) {
        return Some((PathBuf::from(v), format!("${ENV_STORE}")));
    }
    if let Some(v) = var("OPENHANDS_CONVERSATIONS_DIR") {
        return Some((PathBuf::from(v), "$OPENHANDS_CONVERSATIONS_DIR".into()));
    }
    if let Some(v) = var("OPENHANDS_PERSISTENCE_DIR") {
        return Some((
            PathBuf::from(v).join("conversations"),
            "$OPENHANDS_PERSISTENCE_DIR/conversations".into(),
        ));
    }
    let home = var("HOME")?;
    Some((
        PathBuf::from(home).join(".openhands").join("conversations"),
        "the default store".into(),
    ))
}

/// The PATHs a multi-PATH command reads: those given, else the default
/// store, which must then be a directory (status 2 otherwise, saying where
/// it was looked for and how to name another).
pub fn paths_or_default(given: &[PathBuf]) -> Res<Vec<PathBuf>> {
    if !given.is_empty() {
        return Ok(given.to_vec());
    }
    let Some((store, what)) = default_store() else {
        return Err(Fail::Fatal(format!(
            "no PATH given, and no default store (set ${ENV_STORE} or give a PATH)"
        )));
    };
    if !store.is_dir() {
        return Err(Fail::Fatal(format!(
            "no PATH given, and {what} {} is not a directory (give a PATH or set ${ENV_STORE})",
            store.display()
        )));
    }
    Ok(vec![store])
}

/// Whether `s` can be a conversation ID or a prefix of one: hex digits and
/// dashes, at least one digit.
fn looks_like_id(s: &str) -> bool {
    s.chars().any(|c| c.is_ascii_hexdigit()) && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// The path of the conversation `given` names: `given` itself when it
/// exists (and no `--store` was given, or it is no ID), else the
/// conversation of `store` (or the default store) whose ID is `given` or
/// starts with it. No such conversation, or a prefix naming several, is
/// [`Fail::Problem`] (status 1); a store that is not there is fatal.
pub fn conversation(given: &Path, store: &StoreArg) -> Res<PathBuf> {
    let text = given.to_string_lossy();
    let id_like = looks_like_id(&text);
    if !id_like || (store.store.is_none() && given.exists()) {
        return Ok(given.to_path_buf());
    }
    let (root, what) = match &store.store {
        Some(s) => (s.clone(), "--store".to_owned()),
        None => match default_store() {
            Some(d) => d,
            // Reported as the missing path it also is.
            None => return Ok(given.to_path_buf()),
        },
    };
    if !root.is_dir() {
        if store.store.is_none() {
            // No store to look in: the PATH is reported as missing.
            return Ok(given.to_path_buf());
        }
        return Err(Fail::Fatal(format!(
            "{}: not a directory ({what})",
            root.display()
        )));
    }
    let found = openhands::discover(&root).map_err(|e| Fail::Fatal(e.to_string()))?;
    let ids: Vec<(String, &PathBuf)> = found
        .conversations
        .iter()
        .filter_map(|d| Some((hex_id(&d.file_name()?.to_string_lossy()), d)))
        .collect();
    let want = hex_id(&text);
    let place = root.display().to_string();
    let full = crate::ids::by_prefix(
        &want,
        ids.iter().map(|(id, _)| id.as_str()),
        "conversation",
        &place,
    )?;
    let dir = ids
        .iter()
        .find(|(id, _)| id == full)
        .map(|(_, d)| (*d).clone())
        .unwrap_or_else(|| root.join(full));
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::looks_like_id;

    #[test]
    fn ids_and_paths_told_apart() {
        assert!(looks_like_id("3e806943"));
        assert!(looks_like_id("3E806943-aa"));
        assert!(!looks_like_id("store/3e806943"));
        assert!(!looks_like_id("-"));
        assert!(!looks_like_id("examples"));
    }
}
