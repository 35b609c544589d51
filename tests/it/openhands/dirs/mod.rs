//! The OpenHands reader on hand-made directories: every file status, every
//! malformed shape, unknown kinds, members of the wrong type, sub-agents,
//! forks, partial conversations, discovery.

mod decode;
mod discovery;
mod layout;
mod listed;
mod reader;

use crate::common::unprivileged;

use std::fs;
use std::path::{Path, PathBuf};

use crate::fuzz_checks::same::assert_same;
use agentlog::json::{Item, JsonErrorKind, JsonType, OwnedValue, Parser};
use agentlog::openhands::{
    self, Contents, DecodeError, FileError, FileStatus, NameError, NamePattern, ReadError, Reader,
    Reason, read_conversation,
};
use agentlog::source::SourceError;

const ID0: &str = "00000000-0000-4000-8000-000000000000";
const ID1: &str = "11111111-1111-4111-8111-111111111111";
const ID2: &str = "22222222-2222-4222-8222-222222222222";
const ID3: &str = "33333333-3333-4333-8333-333333333333";
const CONV: &str = "0123456789abcdef0123456789abcdef";

fn event(kind: &str, id: &str, parent: Option<&str>) -> String {
    let p = parent.map_or(String::new(), |p| format!(r#","parent_id":"{p}""#));
    format!(
        r#"{{"id":"{id}","timestamp":"2026-05-04T16:30:28.123456","source":"user"{p},"llm_message":{{"role":"user","content":[{{"cache_prompt":false,"type":"text","text":"hi"}}],"thinking_blocks":[]}},"activated_skills":[],"extended_content":[],"kind":"{kind}"}}"#
    )
}

fn state(id: &str) -> String {
    format!(
        r#"{{"id":"{id}","agent":{{"llm":{{"model":"m","usage_id":"agent"}},"kind":"Agent"}},"workspace":{{"working_dir":"/w","kind":"LocalWorkspace"}},"execution_status":"idle","head_is_empty":false,"stats":{{"usage_to_metrics":{{}}}}}}"#
    )
}

fn name(i: u64, id: &str) -> String {
    format!("event-{i:05}-{id}.json")
}

/// A conversation directory under `root` with `files` (relative path,
/// contents).
fn make(root: &Path, dir: &str, files: &[(&str, &[u8])]) -> PathBuf {
    let d = root.join(dir);
    fs::create_dir_all(&d).unwrap();
    for (p, b) in files {
        let p = d.join(p);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, b).unwrap();
    }
    d
}

/// Every file under `dir` by relative path.
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(rel) = p.strip_prefix(dir).unwrap().to_str() {
                let bytes = fs::read(&p).unwrap_or_default();
                out.push((rel.to_owned(), bytes));
            }
        }
    }
    out
}
