//! Hostile stores: what crashing agents, half-synced laptops and other
//! people leave behind. Every case must read without a panic, a hang or
//! unbounded memory, record each problem with a typed error where it
//! happened, and read everything else.
//!
//! Unix only (symbolic links, permissions, byte file names).

mod documents;
mod files;
mod scale;
mod shapes;

use crate::common::unprivileged;
use crate::fuzz_checks;

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::Instant;

use agentlog::json::{JsonErrorKind, JsonType, OwnedValue, Parser};
use agentlog::occhat::{LoadError, SessionStore};
use agentlog::openhands::view::{View, ViewIssue, ViewOptions};
use agentlog::openhands::{
    self, Conversation, FileError, FileStatus, MessageEvent, NameError, ReadError, Reader, Reason,
    read_conversation,
};
use agentlog::source::SourceError;
use agentlog::{MAX_SIZE, json::Style};
use fuzz_checks::view_input;

const CONV: &str = "0123456789abcdef0123456789abcdef";
const ID0: &str = "00000000-0000-4000-8000-000000000000";
const ID1: &str = "11111111-1111-4111-8111-111111111111";
const ID2: &str = "22222222-2222-4222-8222-222222222222";

fn name(i: u64, id: &str) -> String {
    format!("event-{i:05}-{id}.json")
}

fn event(kind: &str, id: &str, parent: Option<&str>) -> String {
    let p = parent.map_or(String::new(), |p| format!(r#","parent_id":"{p}""#));
    format!(
        r#"{{"id":"{id}","timestamp":"2026-05-04T16:30:28.123456","source":"user"{p},"llm_message":{{"role":"user","content":[{{"type":"text","text":"hi"}}]}},"kind":"{kind}"}}"#
    )
}

const STATE: &str = r#"{"id":"01234567-89ab-cdef-0123-456789abcdef","agent":{"kind":"Agent","llm":{"model":"m"}},"execution_status":"idle"}"#;

/// A conversation directory: a good state and three good events.
fn conversation(root: &Path) -> PathBuf {
    let dir = root.join(CONV);
    fs::create_dir_all(dir.join("events")).unwrap();
    fs::write(dir.join("base_state.json"), STATE).unwrap();
    for (i, id) in [ID0, ID1, ID2].iter().enumerate() {
        fs::write(
            dir.join("events").join(name(i as u64, id)),
            event("MessageEvent", id, None),
        )
        .unwrap();
    }
    dir
}

fn status_of(conv: &Conversation, file: &str) -> FileStatus {
    conv.files()
        .find(|f| f.name() == file)
        .unwrap_or_else(|| panic!("{file} is not listed"))
        .status()
}

fn view_of(conv: &Conversation) -> Vec<ViewIssue> {
    let view = View::build(&view_input(conv), &ViewOptions::default());
    let _ = (view.sdk_messages(), view.wire_messages());
    view.issues().to_vec()
}

// ---------------------------------------------------------------- shapes
