//! A follower's first changes taken another way (a changes-since scan read
//! a conversation or a session at a time), then handed to the follower
//! (`Follower::resume_from`, `Follower::occhat_mut`): its next scan goes on
//! from there, and hands out what changed while the other scan ran.

use crate::common;
use crate::common::occhat::{empty_sessions, save_texts, session_dir};

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use agentlog::follow::occhat::SessionChange;
use agentlog::follow::{FollowOptions, Follower};
use agentlog::openhands::Store;

/// Each change of one scan of `f`, as its kind and directory.
fn scan(f: &mut Follower) -> Vec<String> {
    let mut taken = Vec::new();
    f.scan(|_, item| {
        let c = item.expect("every conversation reads");
        taken.push(format!("{} {}", c.kind.as_str(), c.rel.display()));
        Ok::<(), ()>(())
    })
    .expect("the scan starts")
    .expect("nothing refused");
    taken
}

fn polling() -> FollowOptions {
    FollowOptions {
        poll: Some(Duration::from_millis(10)),
        ..FollowOptions::default()
    }
}

#[test]
fn a_catch_up_scan_then_the_follower_goes_on_from_its_checkpoint() {
    let t = tempfile::tempdir().unwrap();
    let root: PathBuf = t.path().join("store");
    common::copy_tree(&common::corpus_dir().join("openhands/1.31.2"), &root);
    common::openhands::backdate(&root);

    // What a follower's own first scan hands out.
    let every = scan(&mut Follower::new(vec![(root.clone(), None)], polling()));
    assert!(every.len() >= 3, "{every:?}");

    let mut f = Follower::new(vec![(root.clone(), None)], polling());
    let mut ch = Store::changes_since(&root, None, f.scan_options()).unwrap();
    let mut caught = Vec::new();
    while let Some(item) = ch.next() {
        let c = item.expect("every conversation reads");
        caught.push(format!("{} {}", c.kind.as_str(), c.rel.display()));
    }
    assert_eq!(caught, every);
    // A conversation handed out by the catch-up is removed before the
    // follower takes over: its next scan, a full one, finds it gone.
    let gone = every[0].split_once(' ').unwrap().1.to_owned();
    fs::remove_dir_all(root.join(&gone)).unwrap();
    assert!(f.resume_from(0, ch.into_checkpoint()));
    assert!(!f.resume_from(1, f.checkpoint(0).unwrap().clone()));
    assert_eq!(scan(&mut f), vec![format!("removed {gone}")]);
    assert_eq!(scan(&mut f), Vec::<String>::new());
}

/// A session's change as a line: kind, session, first index, how many
/// messages.
fn line(c: &SessionChange<'_>) -> String {
    match c {
        SessionChange::Added {
            session,
            from,
            messages,
            ..
        } => format!("added {session} from {from}: {}", messages.len()),
        SessionChange::Rewrite { session, messages } => {
            format!("rewrite {session}: {}", messages.len())
        }
        SessionChange::Removed { session } => format!("removed {session}"),
    }
}

fn occhat_scan(f: &mut Follower) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(()) = f.scan_occhat(|_, c| {
        out.push(line(&c));
        Ok::<(), std::convert::Infallible>(())
    });
    out
}

#[test]
fn an_occhat_pass_through_the_follower_is_recorded_in_its_checkpoint() {
    let (_t, root, store) = empty_sessions();
    save_texts(&store, "alpha", &["a1", "a2"]);
    save_texts(&store, "beta", &["b1"]);
    let mut f = Follower::new(Vec::new(), polling()).with_occhat(vec![root.clone()]);
    assert!(f.occhat_mut(1).is_none());
    let sessions = f.occhat_mut(0).expect("the sessions directory");
    let mut pass = sessions.pass();
    let mut caught = Vec::new();
    while let Some(r) = sessions.step(&mut pass, |c| Ok::<_, ()>(line(&c))) {
        caught.push(r.unwrap());
    }
    assert_eq!(caught, ["added alpha from 0: 2", "added beta from 0: 1"]);
    assert_eq!(f.occhat_checkpoint(0).unwrap().len(), 2);

    // The follower's scans go on from what the pass handed out.
    assert_eq!(occhat_scan(&mut f), Vec::<String>::new());
    std::thread::sleep(Duration::from_millis(20));
    save_texts(&store, "alpha", &["a1", "a2", "a3"]);
    assert_eq!(occhat_scan(&mut f), ["added alpha from 2: 1"]);
    fs::remove_dir_all(session_dir(&root, "beta")).unwrap();
    assert_eq!(occhat_scan(&mut f), ["removed beta"]);
}
