//! Checkpoints and the changes-since scan (`Store::changes_since`): an
//! unchanged store opens nothing; a scan from a checkpoint yields exactly
//! what was added; rewrites, removals, repairs, state changes and filled
//! gaps are told; hostile checkpoints are refused.

use crate::common;
use crate::common::openhands::{backdate, event_file_names};

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentlog::openhands::{
    ChangeKind, ChangesError, Checkpoint, CheckpointError, ScanOptions, Store,
};
use agentlog::source::opens;

/// One event as handed out: (conversation ID, parent ID, index, file, raw
/// bytes or the error).
type Line = (String, Option<String>, u64, String, Result<Vec<u8>, String>);

fn store() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    common::copy_tree(&common::corpus_dir().join("openhands/1.31.2"), &root);
    (t, root)
}

/// Runs a scan to its end: the events it hands out, the kinds by
/// conversation directory, and the checkpoint.
fn scan(
    root: &Path,
    since: Option<&Checkpoint>,
    opts: ScanOptions,
) -> (Vec<Line>, BTreeMap<PathBuf, ChangeKind>, Checkpoint) {
    let mut ch = Store::changes_since(root, since, opts).unwrap();
    let mut lines = Vec::new();
    let mut kinds = BTreeMap::new();
    while let Some(c) = ch.next() {
        let c = c.unwrap();
        kinds.insert(c.dir.to_path_buf(), c.kind);
        for e in c.events() {
            lines.push((
                c.id.to_owned(),
                c.parent.map(str::to_owned),
                e.index(),
                e.file_name().to_owned(),
                match e.error() {
                    None => Ok(e.raw().to_vec()),
                    Some(err) => Err(err.to_string()),
                },
            ));
        }
    }
    assert!(ch.is_finished());
    (lines, kinds, ch.into_checkpoint())
}

/// Every event of the store as `Store::stream` reads it, by conversation
/// directory, with the IDs the scan gives.
fn full(root: &Path) -> BTreeMap<PathBuf, Vec<(u64, String, Vec<u8>)>> {
    let store = Store::open(root).unwrap();
    let mut out = BTreeMap::new();
    let mut s = store.stream();
    while let Some(item) = s.next() {
        let item = item.unwrap();
        let c = item.conversation;
        out.insert(
            c.dir().to_path_buf(),
            c.events()
                .map(|e| (e.index(), e.file_name().to_owned(), e.raw().to_vec()))
                .collect(),
        );
    }
    out
}

fn by_conv(lines: &[Line]) -> BTreeMap<String, Vec<(u64, String, Vec<u8>)>> {
    let mut m: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for (id, _, i, f, raw) in lines {
        m.entry(id.clone())
            .or_default()
            .push((*i, f.clone(), raw.clone().unwrap_or_default()));
    }
    m
}

#[test]
fn first_scan_is_the_full_read_and_an_unchanged_rescan_opens_nothing() {
    let (_t, root) = store();
    backdate(&root);
    let (lines, kinds, cp) = scan(&root, None, ScanOptions::default());
    let want = full(&root);
    assert!(kinds.values().all(|k| *k == ChangeKind::New));
    assert_eq!(
        kinds.len(),
        want.len(),
        "every conversation, sub-agents too"
    );
    let total: usize = want.values().map(Vec::len).sum();
    assert_eq!(lines.len(), total);
    assert_eq!(cp.events() as usize, total);
    assert!(cp.len() >= 15, "{} conversations", cp.len());
    // Saved and loaded, the checkpoint is the same.
    let f = root.parent().unwrap().join("cp");
    cp.save(&f).unwrap();
    let cp = Checkpoint::load(&f).unwrap();

    let before = opens::counts();
    let (lines2, kinds2, cp2) = scan(&root, Some(&cp), ScanOptions::default());
    let after = opens::counts();
    assert!(lines2.is_empty() && kinds2.is_empty(), "{kinds2:?}");
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (0, 0),
        "an unchanged rescan opens no file and lists no directory"
    );
    assert_eq!(cp2.events(), cp.events());

    // One new event in one conversation: only that file is opened (with
    // the conversation's state and meta, and its directories listed).
    let (dir, evs) = want.iter().find(|(_, v)| v.len() > 3).unwrap();
    let (_, last_name, raw) = evs.last().unwrap();
    let n = evs.len();
    let name = format!(
        "event-{n:05}-{}",
        last_name
            .split_once('-')
            .unwrap()
            .1
            .split_once('-')
            .unwrap()
            .1
    );
    fs::write(dir.join("events").join(&name), raw).unwrap();
    let before = opens::counts();
    let (lines3, kinds3, _) = scan(&root, Some(&cp2), ScanOptions::default());
    let after = opens::counts();
    assert_eq!(kinds3.len(), 1);
    assert_eq!(kinds3.get(dir), Some(&ChangeKind::Updated));
    assert_eq!(lines3.len(), 1);
    assert_eq!(lines3[0].2, n as u64);
    let files_opened = after.0 - before.0;
    assert!(files_opened <= 3, "{files_opened} files opened");
}

#[test]
fn two_scans_together_are_one_full_read() {
    let (t, root) = store();
    // Hold back the last third of every conversation's events, and one
    // whole conversation, and the sub-agents.
    let held = t.path().join("held");
    fs::create_dir_all(&held).unwrap();
    let conversations: Vec<PathBuf> = full(&root).keys().cloned().collect();
    let mut moved = Vec::new();
    for (k, dir) in conversations.iter().enumerate() {
        if dir.to_string_lossy().contains("subagents") {
            continue;
        }
        let names = event_file_names(dir);
        let keep = names.len() * 2 / 3;
        for (j, n) in names.iter().enumerate().skip(keep) {
            let dst = held.join(format!("{k}-{j}"));
            fs::rename(dir.join("events").join(n), &dst).unwrap();
            moved.push((dst, dir.join("events").join(n)));
        }
    }
    let sub_parent = conversations
        .iter()
        .find(|d| d.join("subagents").is_dir())
        .unwrap()
        .clone();
    let subs_held = t.path().join("subs-held");
    fs::rename(sub_parent.join("subagents"), &subs_held).unwrap();
    let whole = conversations
        .iter()
        .find(|d| !d.to_string_lossy().contains("subagents") && **d != sub_parent)
        .unwrap()
        .clone();
    let whole_held = t.path().join("whole-held");
    fs::rename(&whole, &whole_held).unwrap();

    let (lines1, _, cp) = scan(&root, None, ScanOptions::default());
    let f = t.path().join("cp");
    cp.save(&f).unwrap();

    fs::rename(&subs_held, sub_parent.join("subagents")).unwrap();
    fs::rename(&whole_held, &whole).unwrap();
    for (from, to) in &moved {
        fs::rename(from, to).unwrap();
    }

    let cp = Checkpoint::load(&f).unwrap();
    let (lines2, kinds2, cp2) = scan(&root, Some(&cp), ScanOptions::default());
    assert_eq!(kinds2.get(&whole), Some(&ChangeKind::New));
    assert!(
        kinds2.values().all(|k| *k != ChangeKind::Rewrite),
        "{kinds2:?}"
    );
    assert!(
        kinds2
            .iter()
            .any(|(d, k)| d.starts_with(sub_parent.join("subagents")) && *k == ChangeKind::New),
        "the sub-agent appears as new"
    );
    // No event twice; the two together are the full read, in index order.
    let mut all = lines1.clone();
    all.extend(lines2.iter().cloned());
    let (lines_full, _, cp_full) = scan(&root, None, ScanOptions::default());
    let mut got = by_conv(&all);
    for v in got.values_mut() {
        let before = v.clone();
        v.sort_by_key(|e| e.0);
        assert_eq!(*v, before, "index order within each scan and across");
    }
    assert_eq!(got, by_conv(&lines_full));
    assert_eq!(cp2.events(), cp_full.events());
    // Sub-agents name their parent.
    assert!(lines2.iter().any(|l| l.1.is_some()));
}

#[test]
fn rewrites_removals_repairs_state_and_gaps_are_told() {
    let (_t, root) = store();
    let want = full(&root);
    let mut tops: Vec<&PathBuf> = want
        .keys()
        .filter(|d| !d.to_string_lossy().contains("subagents"))
        .filter(|d| want[*d].len() >= 4)
        .collect();
    tops.sort();
    let [a, b, c, d, e, f, ..] = tops.as_slice() else {
        panic!("corpus too small: {}", tops.len())
    };
    let [a, b, c, d, e, f] = [a, b, c, d, e, f].map(|p| p.to_path_buf());
    // Before the first scan: in `e` the last event is torn, in `f` there is
    // a gap (the second to last file held back).
    let ev_e = want[&e].last().unwrap();
    let torn = e.join("events").join(&ev_e.1);
    fs::write(&torn, &ev_e.2[..ev_e.2.len() / 2]).unwrap();
    let fl = &want[&f];
    let gap_file = f.join("events").join(&fl[fl.len() - 2].1);
    let gap_bytes = fs::read(&gap_file).unwrap();
    fs::remove_file(&gap_file).unwrap();

    let (lines1, _, cp) = scan(&root, None, ScanOptions::default());
    assert!(
        lines1.iter().any(|l| l.3 == ev_e.1 && l.4.is_err()),
        "the torn file is handed out as malformed (no settle time)"
    );

    // a: removed. b: an event file of its history removed. c: replaced by
    // another directory with the same name. d: its state rewritten. e: the
    // torn file completed. f: the gap filled.
    fs::remove_dir_all(&a).unwrap();
    fs::remove_file(b.join("events").join(&want[&b][1].1)).unwrap();
    let c_old = c.with_extension("old");
    fs::rename(&c, &c_old).unwrap();
    common::copy_tree(&c_old, &c);
    fs::remove_dir_all(&c_old).unwrap();
    let st = d.join("base_state.json");
    let mut bytes = fs::read(&st).unwrap();
    let pos = bytes.iter().rposition(|&x| x == b'}').unwrap();
    bytes.splice(pos..pos, b", \"extra\": 1".iter().copied());
    fs::write(&st, &bytes).unwrap();
    fs::write(&torn, &ev_e.2).unwrap();
    fs::write(&gap_file, &gap_bytes).unwrap();

    let mut ch = Store::changes_since(&root, Some(&cp), ScanOptions::default()).unwrap();
    let mut seen = BTreeMap::new();
    while let Some(item) = ch.next() {
        let item = item.unwrap();
        let events: Vec<u64> = item.events().map(|e| e.index()).collect();
        let bad = item.events().filter(|e| !e.is_ok()).count();
        assert_eq!(bad, 0, "{}", item.dir.display());
        seen.insert(
            item.dir.to_path_buf(),
            (
                item.kind,
                events,
                item.repaired.to_vec(),
                item.state_changed,
                item.gap_filled,
            ),
        );
    }
    let get = |p: &PathBuf| {
        seen.get(p)
            .unwrap_or_else(|| panic!("{} not told: {seen:?}", p.display()))
    };
    assert_eq!(get(&a).0, ChangeKind::Removed);
    assert!(get(&a).1.is_empty());
    // b: the file of index 1 is gone, so the sequence stops at 1: rewrite.
    assert_eq!(get(&b).0, ChangeKind::Rewrite);
    assert_eq!(get(&b).1, vec![0]);
    assert_eq!(get(&c).0, ChangeKind::Rewrite);
    assert_eq!(get(&c).1.len(), want[&c].len());
    let dd = get(&d);
    assert_eq!((dd.0, dd.3, dd.1.len()), (ChangeKind::Updated, true, 0));
    let ee = get(&e);
    assert_eq!(ee.0, ChangeKind::Updated);
    assert_eq!(ee.2, vec![want[&e].len() as u64 - 1], "repaired");
    assert_eq!(ee.1, vec![want[&e].len() as u64 - 1]);
    let ff = get(&f);
    assert!(ff.4, "gap filled");
    assert_eq!(ff.1, vec![fl.len() as u64 - 2, fl.len() as u64 - 1]);
    assert_eq!(seen.len(), 6, "nothing else changed: {seen:?}");
    // The next scan from there has nothing to tell.
    let cp2 = ch.into_checkpoint();
    let (l, k, _) = scan(&root, Some(&cp2), ScanOptions::default());
    assert!(l.is_empty() && k.is_empty(), "{k:?}");
}

#[test]
fn settle_holds_back_a_file_being_written() {
    let (_t, root) = store();
    let want = full(&root);
    let (dir, evs) = want
        .iter()
        .find(|(d, v)| v.len() > 2 && !d.to_string_lossy().contains("subagents"))
        .unwrap();
    let last = evs.last().unwrap();
    let p = dir.join("events").join(&last.1);
    fs::write(&p, &last.2[..10]).unwrap();
    let opts = ScanOptions {
        settle: Some(Duration::from_secs(3600)),
        ..ScanOptions::default()
    };
    let (lines, _, cp) = scan(&root, None, opts);
    assert!(
        lines.iter().all(|l| l.4.is_ok()),
        "nothing malformed handed out"
    );
    assert!(!lines.iter().any(|l| l.3 == last.1));
    fs::write(&p, &last.2).unwrap();
    let (lines2, kinds2, _) = scan(&root, Some(&cp), opts);
    assert_eq!(lines2.len(), 1, "{kinds2:?}");
    assert_eq!(
        (lines2[0].3.as_str(), lines2[0].4.as_ref().ok()),
        (last.1.as_str(), Some(&last.2))
    );
}

#[test]
fn hostile_checkpoints_are_refused() {
    let (t, root) = store();
    let (_, _, cp) = scan(&root, None, ScanOptions::default());
    let f = t.path().join("cp");
    cp.save(&f).unwrap();
    // Corrupt: a byte of the body changed, the file cut short, garbage.
    let bytes = fs::read(&f).unwrap();
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 10] ^= 0x20;
    fs::write(&f, &bad).unwrap();
    assert!(matches!(
        Checkpoint::load(&f),
        Err(CheckpointError::Corrupt { .. })
    ));
    fs::write(&f, &bytes[..bytes.len() / 2]).unwrap();
    assert!(Checkpoint::load(&f).is_err());
    fs::write(&f, b"\x00\x01garbage").unwrap();
    assert!(matches!(
        Checkpoint::load(&f),
        Err(CheckpointError::NotACheckpoint { .. })
    ));
    fs::write(&f, b"").unwrap();
    assert!(matches!(
        Checkpoint::load(&f),
        Err(CheckpointError::NotACheckpoint { .. })
    ));
    // Another store: another path, or the same path for another directory.
    let other = t.path().join("other");
    common::copy_tree(&root, &other);
    assert!(matches!(
        Store::changes_since(&other, Some(&cp), ScanOptions::default()),
        Err(ChangesError::Checkpoint(CheckpointError::OtherStore { .. }))
    ));
    let moved = t.path().join("moved");
    fs::rename(&root, &moved).unwrap();
    fs::rename(&other, &root).unwrap();
    assert!(matches!(
        Store::changes_since(&root, Some(&cp), ScanOptions::default()),
        Err(ChangesError::Checkpoint(CheckpointError::OtherStore { .. }))
    ));
    // Another pattern.
    fs::remove_dir_all(&root).unwrap();
    fs::rename(&moved, &root).unwrap();
    let five = ScanOptions {
        pattern: agentlog::openhands::NamePattern::FiveDigits,
        ..ScanOptions::default()
    };
    assert!(Store::changes_since(&root, Some(&cp), five).is_err());
    // Every conversation deleted: each is told removed, nothing else.
    for e in fs::read_dir(&root).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            fs::remove_dir_all(e.path()).unwrap();
        }
    }
    let (lines, kinds, cp2) = scan(&root, Some(&cp), ScanOptions::default());
    assert!(lines.is_empty());
    assert_eq!(kinds.len(), cp.len());
    assert!(kinds.values().all(|k| *k == ChangeKind::Removed));
    assert!(cp2.is_empty());
}

/// The name of a new event file after `last` (the last event file's
/// name) at index `n`, with the same event ID.
fn next_name(last: &str, n: usize) -> String {
    let id = last.split_once('-').unwrap().1.split_once('-').unwrap().1;
    format!("event-{n:05}-{id}")
}

/// Every event by conversation directory, as [`full`] reads them.
type Full = BTreeMap<PathBuf, Vec<(u64, String, Vec<u8>)>>;

/// Top-level conversations of `want` with at least `min` events, sorted.
fn tops_with(want: &Full, min: usize) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = want
        .iter()
        .filter(|(d, e)| !d.to_string_lossy().contains("subagents") && e.len() >= min)
        .map(|(d, _)| d.clone())
        .collect();
    v.sort();
    v
}

#[test]
fn new_events_alone_open_only_the_new_files() {
    let (_t, root) = store();
    let want = full(&root);
    backdate(&root);
    let (_, _, cp) = scan(&root, None, ScanOptions::default());
    let tops = tops_with(&want, 3);
    let [a, b, ..] = tops.as_slice() else {
        panic!("corpus too small: {}", tops.len())
    };
    let add = |dir: &Path, n: usize| {
        let evs = &want[dir];
        let last = evs.last().unwrap();
        fs::write(dir.join("events").join(next_name(&last.1, n)), &last.2).unwrap();
    };
    let (na, nb) = (want[a].len(), want[b].len());
    add(a, na);
    add(b, nb);
    // Their `events/` set back too (to another time than the checkpoint's
    // stamps), so that the next checkpoint trusts them.
    let back = std::time::SystemTime::now() - Duration::from_secs(1800);
    for d in [a, b] {
        fs::File::open(d.join("events"))
            .unwrap()
            .set_modified(back)
            .unwrap();
    }

    // Only `events/` of each is listed and only the new files are opened:
    // the conversation directories, `base_state.json` and `meta.json`
    // keep their stamps.
    let before = opens::counts();
    let stats_before = opens::stats();
    let mut ch = Store::changes_since(&root, Some(&cp), ScanOptions::default()).unwrap();
    let mut told = Vec::new();
    while let Some(c) = ch.next() {
        let c = c.unwrap();
        assert_eq!(c.kind, ChangeKind::Updated);
        assert!(!c.state_changed && !c.meta_changed && !c.gap_filled);
        let idx: Vec<u64> = c.events().map(|e| e.index()).collect();
        assert!(c.events().all(|e| e.is_ok()));
        told.push((c.dir.to_path_buf(), idx));
    }
    let after = opens::counts();
    let stats_changed = opens::stats() - stats_before;
    assert_eq!(
        told,
        vec![(a.clone(), vec![na as u64]), (b.clone(), vec![nb as u64])]
    );
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (2, 2),
        "the two new event files opened, the two `events/` listed, nothing else"
    );
    let cp2 = ch.into_checkpoint();
    assert_eq!(cp2.events(), cp.events() + 2);

    // The names' digest the scan extended is the one a full scan makes:
    // nothing more is told from there (no rewrite), and one more event is
    // told alone.
    let stats_before = opens::stats();
    let (l, k, cp3) = scan(&root, Some(&cp2), ScanOptions::default());
    let stats_unchanged = opens::stats() - stats_before;
    assert!(l.is_empty() && k.is_empty(), "{k:?}");
    // Each changed conversation looked up no more entries than when
    // unchanged: the last event file read before (its identity, looked up
    // unchanged too), its `events/`, state, meta and `subagents/` once
    // each, as when unchanged; the new file's stamp from the `fstat` of
    // its read.
    assert!(
        stats_changed <= stats_unchanged,
        "looked up {stats_changed} entries, {stats_unchanged} unchanged"
    );
    let (_, _, full_cp) = scan(&root, None, ScanOptions::default());
    assert_eq!(
        cp3.conversation(a.strip_prefix(&root).unwrap())
            .map(|m| m.names),
        full_cp
            .conversation(a.strip_prefix(&root).unwrap())
            .map(|m| m.names)
    );
    add(a, na + 1);
    let (l, k, _) = scan(&root, Some(&cp3), ScanOptions::default());
    assert_eq!(k.get(a), Some(&ChangeKind::Updated), "{k:?}");
    assert_eq!(
        l.iter().map(|x| x.2).collect::<Vec<_>>(),
        vec![na as u64 + 1]
    );
}

#[test]
fn history_changes_are_told_when_only_events_changed() {
    let (_t, root) = store();
    let want = full(&root);
    let tops = tops_with(&want, 4);
    let [a, b, c, d, e, f, ..] = tops.as_slice() else {
        panic!("corpus too small: {}", tops.len())
    };
    // Before the first scan: in `e` the last event is torn, in `f` the
    // second to last file is missing (a gap).
    let ev_e = want[e].last().unwrap();
    let torn = e.join("events").join(&ev_e.1);
    fs::write(&torn, &ev_e.2[..ev_e.2.len() / 2]).unwrap();
    let fl = &want[f];
    let gap_file = f.join("events").join(&fl[fl.len() - 2].1);
    let gap_bytes = fs::read(&gap_file).unwrap();
    fs::remove_file(&gap_file).unwrap();
    // Every stamp trusted: only what changes below is looked at again.
    backdate(&root);
    let (_, _, cp) = scan(&root, None, ScanOptions::default());

    // a: an event file of its history renamed (another ID, same index).
    // b: one removed. c: the last one replaced by another file of the same
    // name (another event's bytes). d: one new event. e: the torn file completed. f: the gap
    // filled. Nothing but files of `events/` changes.
    let ev = |dir: &Path, i: usize| dir.join("events").join(&want[dir][i].1);
    let renamed = format!("event-00001-{}.json", "0123abcd".repeat(4));
    fs::rename(ev(a, 1), a.join("events").join(renamed)).unwrap();
    fs::remove_file(ev(b, 1)).unwrap();
    let last_c = ev(c, want[c].len() - 1);
    let other = want[c]
        .iter()
        .map(|x| &x.2)
        .find(|r| r.len() != want[c].last().unwrap().2.len())
        .unwrap();
    fs::remove_file(&last_c).unwrap();
    fs::write(&last_c, other).unwrap();
    let nd = want[d].len();
    fs::write(
        d.join("events")
            .join(next_name(&want[d].last().unwrap().1, nd)),
        &want[d].last().unwrap().2,
    )
    .unwrap();
    fs::write(&torn, &ev_e.2).unwrap();
    fs::write(&gap_file, &gap_bytes).unwrap();

    let mut ch = Store::changes_since(&root, Some(&cp), ScanOptions::default()).unwrap();
    let mut seen = BTreeMap::new();
    while let Some(item) = ch.next() {
        let item = item.unwrap();
        let events: Vec<u64> = item.events().map(|e| e.index()).collect();
        assert!(item.events().all(|e| e.is_ok()), "{}", item.dir.display());
        seen.insert(
            item.dir.to_path_buf(),
            (
                item.kind,
                events,
                item.repaired.to_vec(),
                item.state_changed || item.meta_changed,
                item.gap_filled,
            ),
        );
    }
    let get = |p: &PathBuf| {
        seen.get(p)
            .unwrap_or_else(|| panic!("{} not told: {seen:?}", p.display()))
            .clone()
    };
    let all = |p: &PathBuf| (0..want[p].len() as u64).collect::<Vec<_>>();
    assert_eq!(get(a).0, ChangeKind::Rewrite, "renamed");
    assert_eq!(get(a).1, all(a));
    assert_eq!(
        (get(b).0, get(b).1),
        (ChangeKind::Rewrite, vec![0]),
        "removed"
    );
    assert_eq!(
        (get(c).0, get(c).1),
        (ChangeKind::Rewrite, all(c)),
        "replaced"
    );
    assert_eq!(
        get(d),
        (ChangeKind::Updated, vec![nd as u64], vec![], false, false)
    );
    let last_e = want[e].len() as u64 - 1;
    assert_eq!(
        get(e),
        (
            ChangeKind::Updated,
            vec![last_e],
            vec![last_e],
            false,
            false
        ),
        "repaired"
    );
    let n_f = fl.len() as u64;
    assert_eq!(
        get(f),
        (
            ChangeKind::Updated,
            vec![n_f - 2, n_f - 1],
            vec![],
            false,
            true
        ),
        "gap filled"
    );
    assert_eq!(seen.len(), 6, "nothing else changed: {seen:?}");
    let (l, k, _) = scan(&root, Some(&ch.into_checkpoint()), ScanOptions::default());
    assert!(l.is_empty() && k.is_empty(), "{k:?}");
}

/// What a consumer holds, applying changes by the rule of the changes
/// module's docs ("Applying the changes"): by conversation ID, by index,
/// the event's bytes.
type HeldEvents = BTreeMap<String, BTreeMap<u64, Vec<u8>>>;

/// Applies one change: a `Rewrite` or `Removed` drops what is held of the
/// ID; each event handed out sets its index.
fn apply_change(held: &mut HeldEvents, c: &agentlog::openhands::Change<'_>) {
    if matches!(c.kind, ChangeKind::Rewrite | ChangeKind::Removed) {
        held.remove(c.id);
    }
    for e in c.events() {
        held.entry(c.id.to_owned())
            .or_default()
            .insert(e.index(), e.raw().to_vec());
    }
}

/// A scan applied to `held`, stopped after `stop_after` items (to its end
/// when `None`): how many items it handed out, and its checkpoint, taken
/// where it stopped and read back from its bytes as a caller saves it.
fn scan_applying(
    root: &Path,
    since: Option<&Checkpoint>,
    held: &mut HeldEvents,
    stop_after: Option<usize>,
) -> (usize, Checkpoint) {
    let mut ch = Store::changes_since(root, since, ScanOptions::default()).unwrap();
    let mut n = 0;
    while stop_after != Some(n) {
        let Some(c) = ch.next() else { break };
        apply_change(held, &c.unwrap());
        n += 1;
    }
    let cp = ch.checkpoint();
    let cp = Checkpoint::from_bytes(&cp.to_bytes(), Path::new("cp")).unwrap();
    (n, cp)
}

/// `held` is what a full read gives: the same IDs and indexes, and at each
/// the bytes of one of the directories holding the ID.
fn same_as_full_read(held: &HeldEvents, root: &Path) -> Result<(), String> {
    let (lines, _, _) = scan(root, None, ScanOptions::default());
    let mut want: BTreeMap<String, BTreeMap<u64, Vec<Vec<u8>>>> = BTreeMap::new();
    for (id, _, i, _, raw) in lines {
        want.entry(id)
            .or_default()
            .entry(i)
            .or_default()
            .push(raw.unwrap_or_default());
    }
    crate::common::held_is_full(held, &want)
}

/// For every point a scan can be stopped at: the scan stopped there, its
/// checkpoint taken, a rescan from it; what the first scan, the stopped
/// one and the rescan handed out, applied in turn, is a full read.
fn stopped_anywhere_loses_nothing(root: &Path, change: impl FnOnce()) {
    let mut start = HeldEvents::new();
    let (_, cp1) = scan_applying(root, None, &mut start, None);
    same_as_full_read(&start, root).unwrap();
    change();
    let (total, _) = scan_applying(root, Some(&cp1), &mut start.clone(), None);
    assert!(total > 1, "something before the deferred items: {total}");
    for k in 0..=total {
        let mut held = start.clone();
        let (_, cp2) = scan_applying(root, Some(&cp1), &mut held, Some(k));
        let (_, cp3) = scan_applying(root, Some(&cp2), &mut held, None);
        if let Err(e) = same_as_full_read(&held, root) {
            panic!("stopped after {k} of {total} items: {e}");
        }
        // Settled: the next scan hands out nothing.
        let (n, _) = scan_applying(root, Some(&cp3), &mut held, None);
        assert_eq!(n, 0, "stopped after {k}: a scan after the rescan");
    }
}

#[test]
fn a_scan_stopped_before_a_deferred_removal_loses_nothing() {
    let (_t, root) = store();
    let sub_parent = full(&root)
        .keys()
        .find(|d| d.join("subagents").is_dir())
        .unwrap()
        .clone();
    let chat = full(&root)
        .keys()
        .find(|d| d.starts_with(root.join("chat")))
        .unwrap()
        .clone();
    stopped_anywhere_loses_nothing(&root, || {
        // A sub-agent removed (told at the end of the scan, once no
        // directory holds its ID), and, after it in the walk, a copy of a
        // conversation (handed out as a rewrite of its ID, then its ID
        // again in full at the end).
        for e in fs::read_dir(sub_parent.join("subagents")).unwrap() {
            fs::remove_dir_all(e.unwrap().path()).unwrap();
        }
        common::copy_tree(&chat, &root.join("zz-copy"));
    });
}

#[test]
fn a_scan_stopped_before_an_id_is_handed_out_again_loses_nothing() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    let (_t2, corpus) = store();
    let chat = full(&corpus)
        .keys()
        .find(|d| d.starts_with(corpus.join("chat")))
        .unwrap()
        .clone();
    // Two directories of one ID: `b` holds more events than `a`.
    common::copy_tree(&chat, &root.join("a"));
    common::copy_tree(&chat, &root.join("b"));
    let names = event_file_names(&root.join("a"));
    for n in names.iter().skip(names.len() - 3) {
        fs::remove_file(root.join("a/events").join(n)).unwrap();
    }
    stopped_anywhere_loses_nothing(&root, || {
        // `a`'s history changed (a file of it removed): a rewrite of the
        // ID, then every directory of it again at the end of the scan.
        let names = event_file_names(&root.join("a"));
        fs::remove_file(root.join("a/events").join(names.last().unwrap())).unwrap();
    });
}

/// Rewrites `p` in place to the same size (one byte of its `"id"` value
/// changed), its modification time put back.
fn edit_keeping_stamps(p: &Path) {
    let mtime = fs::metadata(p).unwrap().modified().unwrap();
    let mut b = fs::read(p).unwrap();
    let at = b.windows(6).position(|w| w == b"\"id\":\"").unwrap() + 6;
    b[at] = if b[at] == b'f' { b'e' } else { b'f' };
    let mut f = fs::OpenOptions::new().write(true).open(p).unwrap();
    std::io::Write::write_all(&mut f, &b).unwrap();
    f.set_modified(mtime).unwrap();
}

#[test]
fn checkpoint_verify_files_sees_an_earlier_event_file_edited_in_place() {
    let (_t, root) = store();
    let want = full(&root);
    let verify = ScanOptions {
        verify_files: true,
        ..ScanOptions::default()
    };
    let (_, _, cp) = scan(&root, None, ScanOptions::default());
    assert!(
        cp.conversations().all(|(_, m)| m.stamps.is_some()),
        "a scan records the stamps' digest of every conversation"
    );
    // Nothing changed: a verified rescan of the whole corpus (sub-agents,
    // gaps, malformed files) finds nothing, and keeps the digests.
    let (l, k, cp2) = scan(&root, Some(&cp), verify);
    assert!(l.is_empty() && k.is_empty(), "{k:?}");
    let digests = |c: &Checkpoint| -> Vec<_> { c.conversations().map(|(_, m)| m.stamps).collect() };
    assert_eq!(digests(&cp2), digests(&cp));
    let (dir, evs) = want
        .iter()
        .find(|(d, v)| v.len() > 4 && !d.to_string_lossy().contains("subagents"))
        .unwrap();
    edit_keeping_stamps(&dir.join("events").join(&evs[1].1));
    // A default rescan does not see it.
    let (l, k, cp3) = scan(&root, Some(&cp2), ScanOptions::default());
    assert!(l.is_empty() && k.is_empty(), "{k:?}");
    // A verified one rewrites the conversation, every event as read now.
    let (l, k, cp4) = scan(&root, Some(&cp3), verify);
    assert_eq!(
        k.into_iter().collect::<Vec<_>>(),
        [(dir.clone(), ChangeKind::Rewrite)]
    );
    let now = full(&root);
    let got: Vec<_> = l
        .iter()
        .map(|x| (x.2, x.3.clone(), x.4.clone().unwrap()))
        .collect();
    assert_eq!(got, now[dir]);
    assert_ne!(now[dir][1].2, evs[1].2, "the edit is what was handed out");
    let (l, k, _) = scan(&root, Some(&cp4), verify);
    assert!(l.is_empty() && k.is_empty(), "{k:?}");
}
