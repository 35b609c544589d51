//! A follower's wake scans only what the file-system events named: with
//! many conversations, an event written into one of them opens that one
//! only (the per-thread open counter), while a full scan of the same store
//! opens every conversation; a new conversation (outside every known one)
//! still shows, through the full scan an unknown path falls back to.

use crate::common;
use crate::common::openhands::event_file_names;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use agentlog::follow::{FollowOptions, Follower};
use agentlog::openhands::ChangeKind;
use agentlog::source::opens;

const CONVERSATIONS: usize = 40;

fn source() -> PathBuf {
    common::corpus_dir().join("openhands/1.58.2/chat/30fde2bf19b240ed98ce033cf244dbbd")
}

/// Sets a modification time an hour ahead, so that every stamp is within
/// the racy margin of every scan: a scan that looks at a conversation
/// lists and reads it (opens that the counter sees).
fn future(p: &Path) {
    let t = SystemTime::now() + Duration::from_secs(3600);
    fs::File::open(p).unwrap().set_modified(t).unwrap();
}

/// A conversation at `dir` with the source's state and its first `n` events,
/// under an ID of its own (made from the directory's name: copies of one
/// ID are one conversation to a consumer, and a new copy hands them all
/// out again).
fn conversation(dir: &Path, n: usize) {
    let names = event_file_names(&source());
    fs::create_dir_all(dir.join("events")).unwrap();
    let state = fs::read_to_string(source().join("base_state.json")).unwrap();
    let tail: String = dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect();
    let own = format!("30fde2bf-19b2-40ed-98ce-{tail:0>12}");
    let state = state.replacen("30fde2bf-19b2-40ed-98ce-033cf244dbbd", &own, 1);
    assert!(state.contains(&own));
    fs::write(dir.join("base_state.json"), state).unwrap();
    for name in &names[..n] {
        let to = dir.join("events").join(name);
        fs::copy(source().join("events").join(name), &to).unwrap();
        future(&to);
    }
    future(&dir.join("base_state.json"));
    future(&dir.join("events"));
    future(dir);
}

/// A store under `dir` of [`CONVERSATIONS`] conversations of 3 events,
/// every stamp in the future: its root.
fn store(dir: &Path) -> PathBuf {
    let root = dir.join("store");
    for i in 0..CONVERSATIONS {
        conversation(&root.join(format!("c{i:02}")), 3);
    }
    future(&root);
    root
}

/// A follower of `root` woken by file-system events; none (the test is
/// skipped) where there are no events to be had.
fn follower(root: &Path, opts: FollowOptions) -> Option<Follower> {
    let f = Follower::new(vec![(root.to_path_buf(), None)], opts);
    if let Some(why) = f.polling() {
        crate::common::skip_unless_ci(
            "a follower woken by events",
            &format!("no file-system events here ({why})"),
        );
        return None;
    }
    Some(f)
}

/// What a scan handed out: the events (directory name, index) and the
/// kinds by directory name.
type Scanned = (Vec<(String, u64)>, BTreeMap<String, ChangeKind>);

/// One scan: the events handed out (directory name, index) and the kinds.
fn scan(f: &mut Follower) -> Scanned {
    let mut events = Vec::new();
    let mut kinds = BTreeMap::new();
    f.scan(|_, c| -> Result<(), ()> {
        let c = c.unwrap();
        let name = c.dir.file_name().unwrap().to_string_lossy().into_owned();
        kinds.insert(name.clone(), c.kind);
        for e in c.events() {
            assert!(e.is_ok(), "{name} {}: malformed", e.index());
            events.push((name.clone(), e.index()));
        }
        Ok(())
    })
    .unwrap()
    .unwrap();
    (events, kinds)
}

/// Waits until a scan hands something out: what it did, and the files and
/// directories it opened.
fn wait_scan(f: &mut Follower) -> (Scanned, (u64, u64)) {
    for _ in 0..50 {
        f.wait(Some(Duration::from_millis(200)));
        let before = opens::counts();
        let (events, kinds) = scan(f);
        let after = opens::counts();
        if !kinds.is_empty() {
            return ((events, kinds), (after.0 - before.0, after.1 - before.1));
        }
    }
    panic!("nothing handed out within 10 s");
}

#[test]
fn a_wake_opens_only_the_conversation_its_events_name() {
    let t = tempfile::tempdir().unwrap();
    let root = store(t.path());
    let opts = FollowOptions {
        // Long: the settle retry must not wake this test.
        settle: Duration::from_secs(30),
        ..FollowOptions::default()
    };
    let Some(mut f) = follower(&root, opts) else {
        return;
    };
    let (events, _) = scan(&mut f);
    assert_eq!(events.len(), CONVERSATIONS * 3);

    // One event into one conversation: that one is read, nothing else.
    let names = event_file_names(&source());
    let to = root.join("c07/events").join(&names[3]);
    fs::copy(source().join("events").join(&names[3]), &to).unwrap();
    let ((events, kinds), (files, dirs)) = wait_scan(&mut f);
    assert_eq!(events, vec![("c07".to_owned(), 3)]);
    assert_eq!(kinds.len(), 1);
    assert!(
        dirs <= 3 && files <= 4,
        "a wake for one conversation opened {files} files and {dirs} directories"
    );

    // The same store scanned whole (as after lost events) opens every
    // conversation: the count above tells the two apart.
    let to = root.join("c08/events").join(&names[3]);
    fs::copy(source().join("events").join(&names[3]), &to).unwrap();
    f.wait(Some(Duration::from_millis(200)));
    f.rescan();
    let before = opens::counts();
    let (events, _) = scan(&mut f);
    let after = opens::counts();
    assert_eq!(events, vec![("c08".to_owned(), 3)]);
    assert!(
        after.1 - before.1 >= CONVERSATIONS as u64,
        "a full scan opened only {} directories",
        after.1 - before.1
    );

    // A new conversation lies in no known one: the wake scans whole.
    let tmp = t.path().join("new");
    conversation(&tmp, 2);
    fs::rename(&tmp, root.join("c99")).unwrap();
    let ((events, kinds), _) = wait_scan(&mut f);
    assert_eq!(kinds.get("c99"), Some(&ChangeKind::New));
    assert_eq!(events, vec![("c99".to_owned(), 0), ("c99".to_owned(), 1)]);

    // And the next event there is a wake of that conversation alone.
    let to = root.join("c99/events").join(&names[2]);
    fs::copy(source().join("events").join(&names[2]), &to).unwrap();
    let ((events, _), (_, dirs)) = wait_scan(&mut f);
    assert_eq!(events, vec![("c99".to_owned(), 2)]);
    assert!(dirs <= 3, "opened {dirs} directories");
}

/// The periodic full scan comes when it is due with nothing written (the
/// wait ends for it), and gives way to a wake that names a conversation:
/// that one is scanned alone first, the store whole at the next scan.
#[test]
fn the_periodic_full_scan_comes_unasked_and_after_named_conversations() {
    let t = tempfile::tempdir().unwrap();
    let root = store(t.path());
    let opts = FollowOptions {
        settle: Duration::from_secs(30),
        full_every: Duration::from_secs(2),
        ..FollowOptions::default()
    };
    let Some(mut f) = follower(&root, opts) else {
        return;
    };
    scan(&mut f);
    let full = |f: &mut Follower| {
        let before = opens::counts();
        scan(f);
        opens::counts().1 - before.1 >= CONVERSATIONS as u64
    };

    // Nothing written: the wait ends when the full scan is due (not at
    // the minute asked), and the scan is whole.
    let start = std::time::Instant::now();
    f.wait(Some(Duration::from_secs(60)));
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "the wait ran to its timeout"
    );
    assert!(full(&mut f), "the due scan was not whole");

    // An event written when the full scan is due: its conversation first.
    let names = event_file_names(&source());
    let to = root.join("c07/events").join(&names[3]);
    fs::copy(source().join("events").join(&names[3]), &to).unwrap();
    std::thread::sleep(Duration::from_millis(2200));
    f.wait(Some(Duration::from_millis(200)));
    let before = opens::counts();
    let (events, kinds) = scan(&mut f);
    let dirs = opens::counts().1 - before.1;
    assert_eq!(events, vec![("c07".to_owned(), 3)]);
    assert_eq!(kinds.len(), 1);
    assert!(
        dirs <= 3,
        "the named conversation waited for a whole scan ({dirs} directories)"
    );
    // Then the whole store.
    f.wait(Some(Duration::from_millis(200)));
    assert!(full(&mut f), "the put-off scan did not come");
}

/// A polling follower with `verify_files` hands out again a conversation
/// whose earlier event file was rewritten in place (same size, its
/// modification time put back); one without does not see it.
#[test]
fn a_verifying_follower_sees_an_earlier_file_rewritten_in_place() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    conversation(&root.join("c00"), 5);
    conversation(&root.join("c01"), 3);
    let mut followers: Vec<Follower> = [false, true]
        .into_iter()
        .map(|verify_files| {
            let opts = FollowOptions {
                poll: Some(Duration::from_millis(10)),
                verify_files,
                ..FollowOptions::default()
            };
            Follower::new(vec![(root.clone(), None)], opts)
        })
        .collect();
    for f in &mut followers {
        assert_eq!(scan(f).1.len(), 2);
    }
    let d = root.join("c00");
    let p = d.join("events").join(&event_file_names(&d)[1]);
    let mtime = fs::metadata(&p).unwrap().modified().unwrap();
    let mut b = fs::read(&p).unwrap();
    let at = b.windows(6).position(|w| w == b"\"id\":\"").unwrap() + 6;
    b[at] = if b[at] == b'f' { b'e' } else { b'f' };
    let mut f = fs::OpenOptions::new().write(true).open(&p).unwrap();
    std::io::Write::write_all(&mut f, &b).unwrap();
    f.set_modified(mtime).unwrap();
    assert!(scan(&mut followers[0]).1.is_empty(), "unseen without");
    let (events, kinds) = scan(&mut followers[1]);
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        [("c00".to_owned(), ChangeKind::Rewrite)]
    );
    assert_eq!(events.len(), 5);
    assert!(scan(&mut followers[1]).1.is_empty(), "once");
}
