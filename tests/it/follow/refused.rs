//! A follower's sink that refuses a change: the scan stops there, and the
//! next scan hands out again what the sink did not take (`Follower::scan`'s
//! promise), so that nothing is lost.

use crate::common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use agentlog::follow::{FollowOptions, Follower};

/// A copy of the corpus's 1.31.2 conversations in a temporary directory,
/// and options that make every scan a full one (polling).
fn store() -> (tempfile::TempDir, PathBuf, FollowOptions) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("store");
    common::copy_tree(&common::corpus_dir().join("openhands/1.31.2"), &root);
    // No stamp within a scan's racy margin: a scan looks past what its
    // checkpoint's marks match.
    common::openhands::backdate(&root);
    let opts = FollowOptions {
        poll: Some(Duration::from_millis(10)),
        ..FollowOptions::default()
    };
    (t, root, opts)
}

/// Each change's kind and conversation directory, from one scan whose
/// sink refuses the `refuse`-th change (counting from 0), if any.
fn scan(f: &mut Follower, refuse: Option<usize>) -> (Vec<String>, bool) {
    let mut taken = Vec::new();
    let mut k = 0;
    let r = f
        .scan(|_, item| {
            let c = item.expect("every conversation reads");
            let here = k;
            k += 1;
            if Some(here) == refuse {
                return Err(());
            }
            taken.push(format!("{} {}", c.kind.as_str(), c.rel.display()));
            Ok(())
        })
        .expect("the scan starts");
    (taken, r.is_err())
}

#[test]
fn a_refused_change_comes_again_in_the_next_scan() {
    let (_t, root, opts) = store();
    // Every conversation, in the order one scan hands them out.
    let mut all = Follower::new(vec![(root.clone(), None)], opts);
    let (every, refused) = scan(&mut all, None);
    assert!(!refused && every.len() >= 3, "{every:?}");

    let rel = |l: &String| {
        l.split_once(' ')
            .map_or(String::new(), |(_, r)| r.to_owned())
    };
    for refuse in [0, 1, every.len() - 1] {
        let mut f = Follower::new(vec![(root.clone(), None)], opts);
        let (first, refused) = scan(&mut f, Some(refuse));
        assert!(refused);
        assert_eq!(first, every[..refuse], "refusing change {refuse}");
        let (second, refused) = scan(&mut f, None);
        assert!(!refused);
        // Each conversation once over the two scans; the refused one again,
        // whole (a rewrite: the consumer drops whatever it holds of it).
        let got: BTreeSet<String> = first.iter().chain(&second).map(rel).collect();
        let want: BTreeSet<String> = every.iter().map(rel).collect();
        assert_eq!(
            got, want,
            "refusing change {refuse}: the second scan gave {second:?}"
        );
        assert_eq!(first.len() + second.len(), every.len(), "{second:?}");
        let again = format!("rewrite {}", rel(&every[refuse]));
        assert!(
            second.contains(&again),
            "refusing change {refuse}: {again} not handed out ({second:?})"
        );
        // And then nothing: the two scans took everything.
        let (third, _) = scan(&mut f, None);
        assert!(third.is_empty(), "refusing change {refuse}: {third:?}");
    }
}

#[test]
fn a_refused_removal_comes_again_in_the_next_scan() {
    let (_t, root, opts) = store();
    let mut f = Follower::new(vec![(root.clone(), None)], opts);
    let (every, _) = scan(&mut f, None);
    // A conversation with a sub-agent removed, and a plain one.
    let parent = every
        .iter()
        .find_map(|l| {
            l.split_once("/subagents/")
                .map(|(p, _)| p.trim_start_matches("new "))
        })
        .expect("the corpus has a sub-agent")
        .to_owned();
    let plain = every
        .iter()
        .map(|l| l.trim_start_matches("new ").to_owned())
        .find(|r| !r.starts_with(&parent))
        .unwrap();
    std::fs::remove_dir_all(root.join(&parent)).unwrap();
    std::fs::remove_dir_all(root.join(&plain)).unwrap();
    common::openhands::backdate(&root);
    let cp = f.checkpoint(0).unwrap().clone();
    let (all_gone, _) = scan(
        &mut Follower::new(vec![(root.clone(), Some(cp.clone()))], opts),
        None,
    );
    assert_eq!(all_gone.len(), 3, "{all_gone:?}");
    assert!(
        all_gone.iter().all(|l| l.starts_with("removed ")),
        "{all_gone:?}"
    );
    for refuse in 0..all_gone.len() {
        let mut g = Follower::new(vec![(root.clone(), Some(cp.clone()))], opts);
        let (first, refused) = scan(&mut g, Some(refuse));
        assert!(refused);
        let (second, _) = scan(&mut g, None);
        assert!(
            second.contains(&all_gone[refuse]),
            "refusing {}: not handed out again ({second:?})",
            all_gone[refuse]
        );
        let got: BTreeSet<&String> = first.iter().chain(&second).collect();
        assert_eq!(got, all_gone.iter().collect(), "refusing {refuse}");
        // Nothing twice but a sub-agent's parent, whose removal comes again
        // with the sub-agent's it was taken before.
        let twice: Vec<&String> = first.iter().filter(|l| second.contains(l)).collect();
        let sub = all_gone[refuse].contains("/subagents/");
        assert_eq!(
            twice.len(),
            usize::from(sub && refuse > 0),
            "{first:?} then {second:?}"
        );
        let (third, _) = scan(&mut g, None);
        assert!(third.is_empty(), "refusing {refuse}: {third:?}");
    }
}
