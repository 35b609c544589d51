//! `export --checkpoint` as a consumer applies it: every incremental output
//! of a sequence of store changes, applied by the documented rule, gives
//! what one full export gives — for conversation directories renamed,
//! copied and removed, event files rewritten in place with their size and
//! modification time put back, and runs killed before they saved their
//! checkpoint (their output never committed).
//!
//! The rule (README, "Incremental export"): what a consumer holds is kept
//! by conversation ID and event index; an event line sets that event; a
//! `rewrite` record drops everything held of the ID (its events follow); a
//! `removed` record drops it.

use crate::common;
use crate::common::openhands::event_file_names;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentlog"))
}

pub(super) fn template() -> PathBuf {
    let chat = common::corpus_dir().join("openhands/1.31.2/chat");
    fs::read_dir(&chat)
        .unwrap()
        .flatten()
        .find(|e| e.path().join("events").is_dir())
        .unwrap()
        .path()
}

/// What a consumer holds: by conversation, by index, the line.
pub(super) type Held = BTreeMap<String, BTreeMap<u64, String>>;

/// Applies one run's output to `held` (the rule of the module docs).
pub(super) fn apply(held: &mut Held, text: &str) {
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let conv = v["conversation"].as_str().unwrap().to_owned();
        match v.get("record").and_then(|r| r.as_str()) {
            Some("rewrite") | Some("removed") => {
                held.remove(&conv);
            }
            Some(other) => panic!("unknown record {other}"),
            None => {
                let i = v["index"].as_u64().unwrap();
                held.entry(conv).or_default().insert(i, l.to_owned());
            }
        }
    }
}

/// Every line a full export gives, by conversation and index (several for
/// an (ID, index) that directories sharing the ID both hold).
fn full(root: &Path) -> BTreeMap<String, BTreeMap<u64, Vec<String>>> {
    let out = bin()
        .args(["export", "--jsonl"])
        .arg(root)
        .output()
        .unwrap();
    let mut m: BTreeMap<String, BTreeMap<u64, Vec<String>>> = BTreeMap::new();
    for l in String::from_utf8(out.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let conv = v["conversation"].as_str().unwrap().to_owned();
        let i = v["index"].as_u64().unwrap();
        m.entry(conv)
            .or_default()
            .entry(i)
            .or_default()
            .push(l.to_owned());
    }
    m
}

/// `held` is what applying the full export gives: the same IDs and
/// indexes, and for each a line of the full export (the only one, but
/// where directories sharing an ID hold different bytes at one index).
pub(super) fn same_as_full(held: &Held, root: &Path) -> Result<(), String> {
    let want = full(root);
    common::held_is_full(held, &want)
}

/// A store change, or a run.
#[derive(Debug, Clone)]
pub(super) enum Step {
    /// A new conversation of its own ID with the template's first `n` events.
    New(usize),
    /// The template's next `n` events into conversation `k`.
    Grow(usize, usize),
    /// Conversation `k`'s last event file rewritten in place, same size,
    /// its modification time put back; into invalid JSON when `bad`.
    Rewrite(usize, bool),
    /// Conversation `k`'s directory renamed.
    Rename(usize),
    /// Conversation `k`'s directory copied (the copy shares its ID).
    Copy(usize),
    /// Conversation `k`'s directory removed.
    Remove(usize),
    /// New events (one or two, into conversation `ms`), then a run killed
    /// before it saved its checkpoint, so the killed run had something to
    /// write. Here (JSONL) the checkpoint stays as it was and the run's
    /// output is dropped when `ms` is even, or reached the consumer when
    /// odd (a kill after the lines were read, before the save: the next
    /// run hands them out again); a Parquet export is sent SIGKILL `ms`
    /// milliseconds after it started (`incremental_parquet.rs`).
    Killed(u64),
}

pub(super) fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1usize..6).prop_map(Step::New),
        (0usize..8, 1usize..4).prop_map(|(k, n)| Step::Grow(k, n)),
        (0usize..8, any::<bool>()).prop_map(|(k, b)| Step::Rewrite(k, b)),
        (0usize..8).prop_map(Step::Rename),
        (0usize..8).prop_map(Step::Copy),
        (0usize..8).prop_map(Step::Remove),
        (0u64..60).prop_map(Step::Killed),
    ]
}

/// A store the steps change.
pub(super) struct World {
    pub(super) root: PathBuf,
    pub(super) template: PathBuf,
    pub(super) names: Vec<String>,
    pub(super) made: usize,
}

impl World {
    /// An empty store at `root` (made here), growing from the template.
    pub(super) fn create(root: PathBuf) -> World {
        fs::create_dir(&root).unwrap();
        let template = template();
        World {
            root,
            names: event_file_names(&template),
            template,
            made: 0,
        }
    }

    /// The conversation directories now, in order.
    pub(super) fn dirs(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = fs::read_dir(&self.root)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        v.sort();
        v
    }

    fn fresh_name(&mut self) -> PathBuf {
        self.made += 1;
        self.root.join(format!("d{:03}", self.made))
    }

    pub(super) fn new_conversation(&mut self, n: usize) {
        let dir = self.fresh_name();
        fs::create_dir_all(dir.join("events")).unwrap();
        let state = fs::read_to_string(self.template.join("base_state.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&state).unwrap();
        let old = v["id"].as_str().unwrap().to_owned();
        let own = format!("{}{:012x}", &old[..old.len() - 12], self.made);
        fs::write(dir.join("base_state.json"), state.replacen(&old, &own, 1)).unwrap();
        self.grow(&dir, n);
    }

    fn grow(&self, dir: &Path, n: usize) {
        let have = event_file_names(dir).len();
        for name in self.names.iter().skip(have).take(n) {
            fs::copy(
                self.template.join("events").join(name),
                dir.join("events").join(name),
            )
            .unwrap();
        }
    }

    fn pick(&self, k: usize) -> Option<PathBuf> {
        let d = self.dirs();
        (!d.is_empty()).then(|| d[k % d.len()].clone())
    }

    pub(super) fn apply(&mut self, s: &Step) {
        match *s {
            Step::New(n) => self.new_conversation(n),
            Step::Grow(k, n) => {
                if let Some(d) = self.pick(k) {
                    self.grow(&d, n);
                }
            }
            Step::Rewrite(k, bad) => {
                let Some(d) = self.pick(k) else { return };
                let Some(last) = event_file_names(&d).pop() else {
                    return;
                };
                edit_in_place(&d.join("events").join(last), bad);
            }
            Step::Rename(k) => {
                if let Some(d) = self.pick(k) {
                    let to = self.fresh_name();
                    fs::rename(&d, &to).unwrap();
                }
            }
            Step::Copy(k) => {
                if let Some(d) = self.pick(k) {
                    let to = self.fresh_name();
                    common::copy_tree(&d, &to);
                }
            }
            Step::Remove(k) => {
                if let Some(d) = self.pick(k) {
                    fs::remove_dir_all(&d).unwrap();
                }
            }
            Step::Killed(ms) => {
                if let Some(d) = self.pick(ms as usize) {
                    self.grow(&d, 1 + (ms as usize % 2));
                }
            }
        }
    }
}

/// Rewrites the event file `p` in place to the same size (a letter of the
/// event's ID changed: still JSON; or its first byte when `bad`: no longer
/// JSON), its modification time put back.
pub(super) fn edit_in_place(p: &Path, bad: bool) {
    let mtime = fs::metadata(p).unwrap().modified().unwrap();
    let mut b = fs::read(p).unwrap();
    let at = if bad {
        0
    } else {
        b.windows(6).position(|w| w == b"\"id\":\"").unwrap() + 6
    };
    b[at] = if b[at] == b'f' { b'e' } else { b'f' };
    if bad {
        b[0] = b'x';
    }
    let mut f = fs::OpenOptions::new().write(true).open(p).unwrap();
    std::io::Write::write_all(&mut f, &b).unwrap();
    f.set_modified(mtime).unwrap();
    assert_eq!(fs::metadata(p).unwrap().modified().unwrap(), mtime);
}

/// One `export --checkpoint` run: its output.
fn run(root: &Path, cp: &Path) -> String {
    let out = bin()
        .args(["export", "--jsonl", "--checkpoint"])
        .arg(cp)
        .arg(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn check(steps: &[Step]) -> Result<(), TestCaseError> {
    let t = tempfile::tempdir().unwrap();
    let mut w = World::create(t.path().join("store"));
    w.new_conversation(3);
    w.new_conversation(6);
    let cp = t.path().join("cp");
    let mut held = Held::new();
    apply(&mut held, &run(&w.root, &cp));
    for (n, s) in steps.iter().enumerate() {
        w.apply(s);
        if let Step::Killed(ms) = s {
            let before = fs::read(&cp).unwrap();
            let out = run(&w.root, &cp);
            if ms % 2 == 1 {
                apply(&mut held, &out);
            }
            fs::write(&cp, before).unwrap();
            continue;
        }
        apply(&mut held, &run(&w.root, &cp));
        same_as_full(&held, &w.root)
            .map_err(|e| TestCaseError::fail(format!("after step {n} {s:?}: {e}")))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn applied_incremental_exports_are_one_full_export(
        steps in proptest::collection::vec(step(), 1..8)
    ) {
        check(&steps)?;
    }
}

/// The reproductions, each alone.
#[test]
fn a_renamed_directory_keeps_its_events_for_a_consumer() {
    check(&[Step::Rename(0)]).unwrap();
    check(&[Step::Rename(1), Step::Rename(1)]).unwrap();
    check(&[Step::Copy(0), Step::Remove(0), Step::Remove(0)]).unwrap();
}

#[test]
fn an_event_file_rewritten_in_place_with_its_stamps_is_exported_again() {
    check(&[Step::Rewrite(0, false)]).unwrap();
    check(&[Step::Rewrite(1, true), Step::Grow(1, 2)]).unwrap();
    // A malformed last file whose bytes change again, still malformed.
    check(&[Step::Rewrite(1, true), Step::Rewrite(1, false)]).unwrap();
}

#[test]
fn a_last_event_file_touched_but_not_changed_is_no_rewrite() {
    let t = tempfile::tempdir().unwrap();
    let mut w = World::create(t.path().join("store"));
    w.new_conversation(4);
    let cp = t.path().join("cp");
    assert!(!run(&w.root, &cp).is_empty());
    let d = w.dirs().remove(0);
    let last = d.join("events").join(event_file_names(&d).pop().unwrap());
    // Its change and modification times move, its bytes stay.
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&last, fs::Permissions::from_mode(0o600)).unwrap();
    fs::File::options()
        .write(true)
        .open(&last)
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    assert_eq!(run(&w.root, &cp), "", "nothing changed but the times");
    // Its bytes changed too: the conversation is rewritten.
    let mut b = fs::read(&last).unwrap();
    let n = b.len();
    b[n - 2] = if b[n - 2] == b' ' { b'\n' } else { b' ' };
    fs::write(&last, &b).unwrap();
    let out = run(&w.root, &cp);
    assert!(
        out.starts_with("{\"conversation\":") && out.contains("\"record\":\"rewrite\""),
        "{out}"
    );
}
