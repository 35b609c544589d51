//! Helpers shared by the integration tests: the `it` crate (`tests/it/`) and
//! the binaries that must run alone (`tests/alloc/`, `tests/process/`).
#![allow(dead_code)]

pub mod asf;
pub mod occhat;
pub mod occhat_writes;
pub mod openhands;
pub mod unprivileged;

use std::fs;
use std::path::{Path, PathBuf};

/// The test data the repository carries, `tests/data/` (its README says
/// where each part comes from): the SDK-written corpus with its oracles
/// (`corpus/`), the ASF reference fixtures (`asf/`), JSONTestSuite
/// (`JSONTestSuite/`) and the goldens. Found relative to the crate, so a
/// clone with nothing beside it runs every test.
pub fn data_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"))
}

/// Says that a part of a test cannot run on this machine and why (printed),
/// so the caller returns without checking it. Under CI (`CI` set, as
/// `.ci/run` runs) nothing may be skipped for want of a facility the
/// project's CI machine has (root, a tmpfs mount, `mknod`, FIFOs,
/// `setpriv`, file-system events): it panics instead, so a missing
/// facility fails the run rather than passing it silently.
pub fn skip_unless_ci(test: &str, why: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("{test}: cannot run here ({why}), and CI skips nothing");
    }
    eprintln!("note: {test}: skipped: {why}");
}

/// What an incremental consumer holds (by conversation ID, by event index)
/// against what a full read gives (at each, the values of every directory
/// holding the ID): the same IDs, the same indexes, and at each index a
/// value one of those directories holds. `Err` says the first difference.
pub fn held_is_full<T: PartialEq + std::fmt::Debug>(
    held: &std::collections::BTreeMap<String, std::collections::BTreeMap<u64, T>>,
    full: &std::collections::BTreeMap<String, std::collections::BTreeMap<u64, Vec<T>>>,
) -> Result<(), String> {
    if !held.keys().eq(full.keys()) {
        return Err(format!(
            "conversations: held {:?}, full {:?}",
            held.keys().collect::<Vec<_>>(),
            full.keys().collect::<Vec<_>>()
        ));
    }
    for (id, evs) in full {
        let h = &held[id];
        if !h.keys().eq(evs.keys()) {
            return Err(format!(
                "{id}: held indexes {:?}, full {:?}",
                h.keys().collect::<Vec<_>>(),
                evs.keys().collect::<Vec<_>>()
            ));
        }
        for (i, values) in evs {
            if !values.contains(&h[i]) {
                return Err(format!("{id} {i}: held {:?}, full {values:?}", h[i]));
            }
        }
    }
    Ok(())
}

/// The name the test harness gives the test function `name` of the module
/// `module` (the caller's `module_path!()`): the module path without the
/// crate's name, for running one test of this binary again in a child
/// process (`--exact`).
pub fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_, inner)) => format!("{inner}::{name}"),
        None => name.to_owned(),
    }
}

/// `tests/data/corpus`: the SDK-written conversations and the OC Chat
/// stores, with their oracles.
pub fn corpus_dir() -> PathBuf {
    data_dir().join("corpus")
}

/// Copies the directory tree `from` to `to` (created as needed): regular
/// files by content, directories recursively. Test data holds nothing else;
/// anything else (a link, a device) fails the test.
pub fn copy_tree(from: &Path, to: &Path) {
    copy(from, to, false);
}

/// [`copy_tree`], each copied file given its source's modification time
/// (directories get the time of the copy).
pub fn copy_tree_keeping_mtimes(from: &Path, to: &Path) {
    copy(from, to, true);
}

fn copy(from: &Path, to: &Path, mtimes: bool) {
    fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for e in fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        let kind = e.file_type().unwrap();
        if kind.is_dir() {
            copy(&e.path(), &t, mtimes);
        } else if kind.is_file() {
            fs::copy(e.path(), &t).unwrap_or_else(|e| panic!("{}: {e}", t.display()));
            if mtimes {
                let m = e.metadata().unwrap().modified().unwrap();
                let f = fs::File::options().write(true).open(&t).unwrap();
                f.set_modified(m).unwrap();
            }
        } else {
            panic!("{}: neither a file nor a directory", e.path().display());
        }
    }
}
