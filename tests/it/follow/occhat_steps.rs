//! An OC Chat store's scan taken one change at a time
//! (`follow::occhat::Sessions::pass` and `step`): the same changes as
//! `scan`, and a change refused is handed out again.

use std::fs;
use std::path::Path;

use agentlog::follow::occhat::{SessionChange, Sessions};
use agentlog::json::OwnedValue;
use agentlog::occhat::SessionStore;

use crate::common::occhat::{empty_sessions, save_texts, session_dir};

/// A change as a line: kind, session, first index and the messages' texts.
fn brief(c: &SessionChange<'_>) -> String {
    let texts = |m: &[OwnedValue]| {
        m.iter()
            .map(|v| {
                v.get("content")
                    .and_then(|c| c.as_str())
                    .unwrap_or("?")
                    .to_owned()
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    match c {
        SessionChange::Added {
            session,
            new,
            from,
            messages,
        } => format!(
            "added {session} new={new} from={from} [{}]",
            texts(messages)
        ),
        SessionChange::Rewrite { session, messages } => {
            format!("rewrite {session} [{}]", texts(messages))
        }
        SessionChange::Removed { session } => format!("removed {session}"),
    }
}

fn by_scan(s: &mut Sessions) -> Vec<String> {
    let mut out = Vec::new();
    s.scan(|c| {
        out.push(brief(&c));
        Ok::<(), ()>(())
    })
    .unwrap();
    out
}

fn by_steps(s: &mut Sessions) -> Vec<String> {
    let mut pass = s.pass();
    let mut out = Vec::new();
    while let Some(r) = s.step(&mut pass, |c| Ok::<String, ()>(brief(&c))) {
        out.push(r.unwrap());
    }
    out
}

/// The store's history: two sessions, a save adding messages, an edit of
/// an earlier message, a removal.
fn history(root: &Path, store: &SessionStore, round: usize) {
    match round {
        0 => {
            save_texts(store, "alpha", &["a1", "a2"]);
            save_texts(store, "beta", &["b1"]);
        }
        1 => {
            save_texts(store, "alpha", &["a1", "a2", "a3", "a4"]);
        }
        2 => {
            save_texts(store, "beta", &["B1", "b2"]);
        }
        _ => {
            // OC Chat keeps a session's directory; removing it is the
            // session gone.
            fs::remove_dir_all(session_dir(root, "alpha")).unwrap();
        }
    }
}

#[test]
fn steps_hand_out_what_a_scan_does_and_the_same_checkpoint() {
    let (_t, root, store) = empty_sessions();
    let mut scanned = Sessions::new(&root);
    let mut stepped = Sessions::new(&root);
    for round in 0..4 {
        history(&root, &store, round);
        // A meta file's stamp is its modification time and size: make
        // each round's saves distinct from the last's.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let a = by_scan(&mut scanned);
        let b = by_steps(&mut stepped);
        assert!(!a.is_empty(), "round {round}: nothing handed out");
        assert_eq!(a, b, "round {round}");
        assert_eq!(
            scanned.checkpoint().to_bytes(),
            stepped.checkpoint().to_bytes(),
            "round {round}"
        );
    }
    let last = by_steps(&mut stepped);
    assert!(last.is_empty(), "nothing changed: {last:?}");
}

#[test]
fn a_refused_change_is_handed_out_again_and_the_rest_goes_on() {
    let (_t, root, store) = empty_sessions();
    save_texts(&store, "alpha", &["a1"]);
    save_texts(&store, "beta", &["b1"]);
    save_texts(&store, "gamma", &["g1"]);
    let mut s = Sessions::new(&root);
    let mut pass = s.pass();
    let mut taken = Vec::new();
    let mut refused = None;
    while let Some(r) = s.step(&mut pass, |c| {
        let line = brief(&c);
        if refused.is_none() && line.contains("beta") {
            refused = Some(line);
            Err(())
        } else {
            Ok(line)
        }
    }) {
        if let Ok(line) = r {
            taken.push(line);
        }
    }
    assert_eq!(taken.len(), 2, "{taken:?}");
    let refused = refused.expect("beta was handed out");
    assert_eq!(s.checkpoint().len(), 2);
    // The next pass hands out the refused change alone, as it was.
    assert_eq!(by_steps(&mut s), vec![refused]);
    assert_eq!(s.checkpoint().len(), 3);
    // A refused removal stays recorded and comes again.
    fs::remove_dir_all(session_dir(&root, "gamma")).unwrap();
    let mut pass = s.pass();
    let r = s.step(&mut pass, |c| Err::<(), String>(brief(&c)));
    assert_eq!(r, Some(Err("removed gamma".to_owned())));
    assert_eq!(s.checkpoint().len(), 3);
    assert_eq!(by_scan(&mut s), vec!["removed gamma".to_owned()]);
    assert_eq!(s.checkpoint().len(), 2);
}
