//! The library as a Rust user meets it: the store as an `Iterator`, usage
//! that sums, the view with default options, `agentlog::open` telling the
//! formats apart, and `Store::open` refusing an OC Chat folder.

use crate::common;

use std::path::PathBuf;

use agentlog::openhands::view::{View, ViewOptions};
use agentlog::openhands::{ReadError, Store, Usage};
use agentlog::{OpenError, Opened};

fn corpus_store() -> PathBuf {
    common::corpus_dir().join("openhands/1.58.2")
}

#[test]
fn conversations_is_an_iterator_of_what_the_stream_lends() {
    let store = Store::open(corpus_store()).unwrap();
    let mut lent = Vec::new();
    let mut s = store.stream();
    while let Some(item) = s.next() {
        let item = item.unwrap();
        lent.push((
            item.conversation.dir().to_path_buf(),
            item.parent.map(PathBuf::from),
            item.depth,
            item.conversation.len(),
            item.conversation.event_bytes().to_vec(),
        ));
    }
    let owned: Vec<_> = store
        .conversations()
        .map(|c| {
            let c = c.unwrap();
            (
                c.conversation.dir().to_path_buf(),
                c.parent,
                c.depth,
                c.conversation.len(),
                c.conversation.event_bytes().to_vec(),
            )
        })
        .collect();
    assert!(lent.iter().any(|l| l.2 > 0), "sub-agents are in the corpus");
    assert_eq!(owned, lent);
    // `for` over `&Store`.
    let mut n = 0;
    for c in &store {
        n += usize::from(c.is_ok());
    }
    assert_eq!(n, lent.len());
}

#[test]
fn usage_sums() {
    let a = Usage {
        calls: 1,
        prompt_tokens: 10,
        completion_tokens: 2,
        cost: 0.5,
        ..Usage::default()
    };
    let b = Usage {
        calls: 2,
        prompt_tokens: u64::MAX,
        reasoning_tokens: 7,
        cost: 0.25,
        ..Usage::default()
    };
    let mut by_add = a.clone();
    by_add.add(&b);
    assert_eq!([a.clone(), b.clone()].iter().sum::<Usage>(), by_add);
    assert_eq!(
        vec![a.clone(), b.clone()].into_iter().sum::<Usage>(),
        by_add
    );
    assert_eq!(a.clone() + b.clone(), by_add);
    let mut c = a.clone();
    c += &b;
    assert_eq!(c, by_add);
    let mut d = a;
    d += b;
    assert_eq!(d, by_add);
    assert_eq!(d.prompt_tokens, u64::MAX, "saturates");
    assert_eq!(std::iter::empty::<Usage>().sum::<Usage>(), Usage::default());
}

#[test]
fn view_of_is_the_view_with_default_options() {
    let store = Store::open(corpus_store()).unwrap();
    let mut checked = 0;
    for c in store.conversations().take(8) {
        let conv = c.unwrap().conversation;
        let want = View::from_conversation(&conv, &ViewOptions::default());
        assert_eq!(View::of(&conv).event_ids(), want.event_ids());
        assert_eq!(View::from(&conv).wire_messages(), want.wire_messages());
        checked += 1;
    }
    assert_eq!(checked, 8);
}

#[test]
fn open_tells_the_formats_apart() {
    match agentlog::open(corpus_store()).unwrap() {
        Opened::OpenHands(s) => assert!(s.len() > 5),
        other => panic!("{other:?}"),
    }
    let sessions = common::corpus_dir().join("occhat/sample_recovery/sessions");
    match agentlog::open(&sessions).unwrap() {
        Opened::OcChat(s) => assert!(!s.list_sessions().sessions.is_empty()),
        other => panic!("{other:?}"),
    }
    let asf = common::data_dir().join("asf/sessions/basic.jsonl");
    match agentlog::open(&asf).unwrap() {
        Opened::Asf(files) => assert_eq!(files, [asf.clone()]),
        other => panic!("{other:?}"),
    }
    match agentlog::open(asf.parent().unwrap()).unwrap() {
        Opened::Asf(files) => assert!(files.contains(&asf)),
        other => panic!("{other:?}"),
    }
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        agentlog::open(empty.path()),
        Err(OpenError::NothingFound { .. })
    ));
    assert!(matches!(
        agentlog::open(empty.path().join("absent")),
        Err(OpenError::Read(ReadError::Io { .. }))
    ));
}

#[test]
fn store_open_refuses_an_occhat_folder() {
    let sessions = common::corpus_dir().join("occhat/sample_recovery/sessions");
    let err = Store::open(&sessions).unwrap_err();
    assert!(matches!(err, ReadError::OcChatStore { .. }), "{err:?}");
    assert!(err.to_string().contains("OC Chat"), "{err}");
    // A folder with nothing in it is still an empty store.
    let empty = tempfile::tempdir().unwrap();
    assert!(Store::open(empty.path()).unwrap().is_empty());
}
