//! A follower's scans taken a change at a time (`Follower::step`): the
//! same changes and checkpoints as `Follower::scan`, round after round; a
//! checkpoint mid-scan of what was handed out so far; a scan or a resume
//! in the middle of one going on from there.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentlog::follow::{FollowOptions, Follower};
use agentlog::openhands::{Change, Checkpoint, Store};

/// A change as a line: kind, directory, how many events.
fn line(c: &Change<'_>) -> String {
    format!(
        "{} {} {}",
        c.kind.as_str(),
        c.rel.display(),
        c.events().count()
    )
}

/// Each change of one scan of `f`.
fn scan(f: &mut Follower) -> Vec<String> {
    let mut taken = Vec::new();
    f.scan(|_, item| {
        taken.push(line(&item.expect("every conversation reads")));
        Ok::<(), ()>(())
    })
    .expect("the scan starts")
    .expect("nothing refused");
    taken
}

/// Each change of one scan of `f`, taken a step at a time.
fn steps(f: &mut Follower) -> Vec<String> {
    let mut taken = Vec::new();
    while let Some(l) = f
        .step(|_, item| line(&item.expect("every conversation reads")))
        .expect("the scan starts")
    {
        taken.push(l);
    }
    taken
}

/// The first change a step of `f` hands out.
fn first_step(f: &mut Follower) -> String {
    f.step(|_, item| line(&item.expect("every conversation reads")))
        .expect("the scan starts")
        .expect("a first change")
}

fn polling() -> FollowOptions {
    FollowOptions {
        poll: Some(Duration::from_millis(10)),
        ..FollowOptions::default()
    }
}

fn store(t: &Path) -> PathBuf {
    let root = t.join("store");
    common::copy_tree(&common::corpus_dir().join("openhands/1.31.2"), &root);
    common::openhands::backdate(&root);
    root
}

/// A store, and the changes a follower's first scan of it hands out.
fn store_and_first_scan(t: &Path) -> (PathBuf, Vec<String>) {
    let root = store(t);
    let every = scan(&mut Follower::new(vec![(root.clone(), None)], polling()));
    (root, every)
}

/// A checkpoint's body without the time it was taken (its second line:
/// the first is its format and the digest of the second).
fn marks(cp: Option<&Checkpoint>) -> serde_json::Value {
    let bytes = cp.expect("a checkpoint").to_bytes();
    let text = String::from_utf8(bytes).unwrap();
    let body = text.lines().nth(1).expect("a body line");
    let mut v: serde_json::Value = serde_json::from_str(body).unwrap();
    v.as_object_mut().unwrap().remove("taken");
    v
}

#[test]
fn steps_hand_out_what_scans_do() {
    let t = tempfile::tempdir().unwrap();
    let root = store(t.path());
    let mut by_scan = Follower::new(vec![(root.clone(), None)], polling());
    let mut by_step = Follower::new(vec![(root.clone(), None)], polling());
    let first = scan(&mut by_scan);
    assert!(first.len() >= 3, "{first:?}");
    assert_eq!(steps(&mut by_step), first);
    assert_eq!(marks(by_step.checkpoint(0)), marks(by_scan.checkpoint(0)));
    // Nothing new.
    assert_eq!(steps(&mut by_step), Vec::<String>::new());
    assert_eq!(scan(&mut by_scan), Vec::<String>::new());
    // A conversation removed, one added, one's last event file removed.
    let gone = first[0].split(' ').nth(1).unwrap().to_owned();
    fs::remove_dir_all(root.join(&gone)).unwrap();
    common::copy_tree(
        &common::corpus_dir().join("openhands/1.58.2/chat"),
        &root.join("added"),
    );
    common::openhands::backdate(&root);
    let changed = scan(&mut by_scan);
    assert!(
        changed.iter().any(|l| l.starts_with("removed ")),
        "{changed:?}"
    );
    assert!(
        changed.iter().any(|l| l.starts_with("new added")),
        "{changed:?}"
    );
    assert_eq!(steps(&mut by_step), changed);
    assert_eq!(marks(by_step.checkpoint(0)), marks(by_scan.checkpoint(0)));
}

#[test]
fn a_checkpoint_mid_scan_is_of_what_was_handed_out() {
    let t = tempfile::tempdir().unwrap();
    let (root, every) = store_and_first_scan(t.path());
    let mut f = Follower::new(vec![(root.clone(), None)], polling());
    assert!(f.checkpoint_so_far(0).is_none());
    assert!(f.checkpoint_so_far(1).is_none());
    assert_eq!(first_step(&mut f), every[0]);
    let cp = f.checkpoint_so_far(0).expect("a checkpoint mid-scan");
    let mut rest = Vec::new();
    let mut ch = Store::changes_since(&root, Some(&cp), f.scan_options()).unwrap();
    while let Some(item) = ch.next() {
        rest.push(line(&item.unwrap()));
    }
    assert_eq!(rest, every[1..]);
    assert_eq!(steps(&mut f), every[1..]);
    assert_eq!(
        marks(f.checkpoint_so_far(0).as_ref()),
        marks(f.checkpoint(0))
    );
}

#[test]
fn a_scan_or_a_resume_mid_step_goes_on_from_what_was_handed_out() {
    let t = tempfile::tempdir().unwrap();
    let (root, every) = store_and_first_scan(t.path());
    // A scan puts the steps under way aside and hands out the rest.
    let mut f = Follower::new(vec![(root.clone(), None)], polling());
    assert_eq!(first_step(&mut f), every[0]);
    assert_eq!(scan(&mut f), every[1..]);
    assert_eq!(steps(&mut f), Vec::<String>::new());
    // A resume does too: the steps after it start a new scan from the
    // checkpoint given.
    let mut g = Follower::new(vec![(root.clone(), None)], polling());
    first_step(&mut g);
    assert!(g.resume_from(0, f.checkpoint(0).unwrap().clone()));
    assert_eq!(steps(&mut g), Vec::<String>::new());
}

/// A directory under the root that cannot be listed is an error item of
/// each scan that walks it, ahead of the changes (it was left out without
/// a word), whether the scan is taken whole or a step at a time. Run as a
/// user permissions apply to (as root: in a child as `nobody`; see
/// `unprivileged`).
#[test]
fn a_directory_that_cannot_be_listed_is_an_error_of_the_scan() {
    use agentlog::openhands::{ReadError, StoreError};
    use std::os::unix::fs::PermissionsExt;
    if !common::unprivileged::checks_run_here(
        module_path!(),
        "a_directory_that_cannot_be_listed_is_an_error_of_the_scan",
    ) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    for (dir, id) in [
        (
            "open/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa",
        ),
        (
            "locked/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
            "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb",
        ),
    ] {
        let d = root.join(dir);
        fs::create_dir_all(d.join("events")).unwrap();
        let state = format!(r#"{{"id":"{id}","agent":{{"kind":"Agent"}}}}"#);
        fs::write(d.join("base_state.json"), state).unwrap();
    }
    let locked = root.join("locked");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let item = |item: Result<Change<'_>, StoreError>| match item {
        Ok(c) => line(&c),
        Err(StoreError::Read(ReadError::Io { path, .. })) => format!("unlisted {}", path.display()),
        Err(e) => format!("error {e}"),
    };
    let mut by_scan = Follower::new(vec![(root.clone(), None)], polling());
    let mut by_step = Follower::new(vec![(root.clone(), None)], polling());
    let mut rounds = Vec::new();
    for _ in 0..2 {
        let mut scanned = Vec::new();
        by_scan
            .scan(|_, i| {
                scanned.push(item(i));
                Ok::<(), ()>(())
            })
            .unwrap()
            .unwrap();
        let mut stepped = Vec::new();
        while let Some(l) = by_step.step(|_, i| item(i)).unwrap() {
            stepped.push(l);
        }
        rounds.push((scanned, stepped));
    }
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    let unlisted = format!("unlisted {}", locked.display());
    for (scanned, stepped) in &rounds {
        assert_eq!(scanned, stepped);
    }
    assert_eq!(
        rounds[0].0,
        vec![
            unlisted.clone(),
            "new open/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 0".to_owned()
        ]
    );
    // Polling: every scan walks the store, and meets it again.
    assert_eq!(rounds[1].0, vec![unlisted]);
}
