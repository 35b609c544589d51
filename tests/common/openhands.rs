//! The OpenHands corpus with the SDK's own oracles
//! (`tests/data/corpus/openhands/<version>/<scenario>.oracle.json`): what the
//! SDK saw for every conversation, and how to tell two message lists apart.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use agentlog::json::{OwnedValue, Style};

/// One conversation of the corpus with its oracle.
pub struct OracleCase {
    /// The oracle file.
    pub file: PathBuf,
    /// The SDK version that wrote the scenario (`sdk_version`).
    pub sdk: String,
    /// The scenario's name (`scenario`), its folder beside the oracle file.
    pub scenario: String,
    /// The conversation's path relative to the scenario folder.
    pub rel: String,
    /// The conversation's directory.
    pub dir: PathBuf,
    /// The oracle's record for this conversation (`view_event_ids`,
    /// `active_branch`, `next_messages`…).
    pub oracle: OwnedValue,
}

impl OracleCase {
    /// A name for messages: the oracle file and the conversation.
    pub fn name(&self) -> String {
        format!("{} {}", self.file.display(), self.rel)
    }
}

/// The oracle files of every SDK version of the corpus, sorted.
pub fn oracle_files() -> Vec<PathBuf> {
    let root = super::corpus_dir().join("openhands");
    let mut out = Vec::new();
    for v in std::fs::read_dir(&root).expect("corpus") {
        let v = v.expect("entry").path();
        if !v.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&v).expect("version dir") {
            let f = f.expect("entry").path();
            if f.to_string_lossy().ends_with(".oracle.json") {
                out.push(f);
            }
        }
    }
    out.sort();
    assert!(!out.is_empty(), "no oracle files found");
    out
}

/// Every conversation of every oracle file, in order.
pub fn oracle_cases() -> Vec<OracleCase> {
    let mut out = Vec::new();
    for file in oracle_files() {
        let bytes = std::fs::read(&file).expect("oracle");
        let oracle = OwnedValue::parse(&bytes).expect("oracle json");
        let text = |key: &str| {
            oracle
                .get(key)
                .and_then(OwnedValue::as_str)
                .unwrap_or_else(|| panic!("{}: no {key}", file.display()))
                .to_owned()
        };
        let (sdk, scenario) = (text("sdk_version"), text("scenario"));
        let scenario_dir = file.parent().expect("parent").join(&scenario);
        for conv in oracle
            .get("conversations")
            .and_then(OwnedValue::as_array)
            .expect("conversations")
        {
            let rel = conv
                .get("path")
                .and_then(OwnedValue::as_str)
                .expect("path")
                .to_owned();
            out.push(OracleCase {
                file: file.clone(),
                sdk: sdk.clone(),
                scenario: scenario.clone(),
                dir: scenario_dir.join(&rel),
                rel,
                oracle: conv.clone(),
            });
        }
    }
    out
}

/// The compact serialization of a value.
pub fn compact(v: &OwnedValue) -> String {
    v.to_string_styled(Style::COMPACT)
}

/// Where two message lists first differ as JSON values (their lengths, or
/// the first unequal message), `None` when they are equal.
pub fn first_difference(ours: &[OwnedValue], theirs: &[OwnedValue]) -> Option<String> {
    if ours.len() != theirs.len() {
        return Some(format!(
            "{} messages, oracle {}; ours: {}",
            ours.len(),
            theirs.len(),
            ours.iter()
                .map(|m| m.get("role").and_then(OwnedValue::as_str).unwrap_or("?"))
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        if a != b {
            let (a, b) = (compact(a), compact(b));
            let cut = |s: &str| s.chars().take(1500).collect::<String>();
            return Some(format!(
                "message {i}:\n  ours   {}\n  oracle {}",
                cut(&a),
                cut(&b)
            ));
        }
    }
    None
}

/// The names of a conversation's event files (`events/event-*`), sorted.
pub fn event_file_names(conversation: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(conversation.join("events"))
        .unwrap_or_else(|e| panic!("{}: {e}", conversation.display()))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("event-"))
        .collect();
    v.sort();
    v
}

/// Sets every modification time under `dir` (itself included) an hour
/// back, so that no stamp is within the racy margin of a scan.
pub fn backdate(dir: &Path) {
    let t = SystemTime::now() - Duration::from_secs(3600);
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            backdate(&p);
        } else {
            std::fs::File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
    }
    std::fs::File::open(dir).unwrap().set_modified(t).unwrap();
}
