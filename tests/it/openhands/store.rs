//! The streaming store API: order, sub-agents, errors, reuse, the parallel
//! variants' order, and the listing from names alone — checked against
//! the one-conversation reader on the bundled sample store, the shared
//! corpus and hand-made stores.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use agentlog::openhands::{self, Store, StoreError, find_sessions, read_conversation};

fn sample() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/store"))
}

/// One event as seen: index, kind, id, bytes.
type SeenEvent = (u64, Option<String>, Option<String>, Vec<u8>);

/// What one item says, to compare streams with the reader.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    dir: PathBuf,
    parent: Option<PathBuf>,
    depth: usize,
    events: Vec<SeenEvent>,
    state: Option<Vec<u8>>,
    subagents: Vec<String>,
}

fn seen(conv: &openhands::Conversation, parent: Option<&Path>, depth: usize) -> Seen {
    Seen {
        dir: conv.dir().to_path_buf(),
        parent: parent.map(Path::to_path_buf),
        depth,
        events: conv
            .events()
            .map(|e| {
                (
                    e.index(),
                    e.kind_name().map(str::to_owned),
                    e.id().map(str::to_owned),
                    e.raw().to_vec(),
                )
            })
            .collect(),
        state: conv.state().map(|f| f.raw()).map(<[u8]>::to_vec),
        subagents: conv.subagents().to_vec(),
    }
}

/// The expected stream: each conversation of `find_sessions`, read alone,
/// followed by its sub-agents depth first.
fn expected(root: &Path) -> Vec<Seen> {
    fn walk(dir: &Path, parent: Option<&Path>, depth: usize, out: &mut Vec<Seen>) {
        let conv = read_conversation(dir).unwrap();
        out.push(seen(&conv, parent, depth));
        for sub in conv.subagent_dirs() {
            walk(&sub, Some(dir), depth + 1, out);
        }
    }
    let mut out = Vec::new();
    for d in find_sessions(root).unwrap() {
        walk(&d, None, 0, &mut out);
    }
    out
}

fn streamed(store: &Store) -> Vec<Seen> {
    let mut out = Vec::new();
    let mut s = store.stream();
    while let Some(item) = s.next() {
        let item = item.unwrap();
        out.push(seen(item.conversation, item.parent, item.depth));
    }
    out
}

#[test]
fn stream_gives_what_the_reader_gives_in_order() {
    for root in [sample(), common::corpus_dir().join("openhands")] {
        let store = Store::open(&root).unwrap();
        let want = expected(&root);
        assert!(want.len() > store.len() || root == sample());
        let got = streamed(&store);
        assert_eq!(got.len(), want.len(), "{}", root.display());
        for (g, w) in got.iter().zip(&want) {
            assert!(g == w, "{} differs from the reader", g.dir.display());
        }
        // Twice over the same store: same items (buffers reused).
        assert!(streamed(&store) == want);
        let mut n = 0;
        store.for_each(|item| {
            assert!(item.unwrap().conversation.dir() == want[n].dir);
            n += 1;
        });
        assert_eq!(n, want.len());
    }
}

#[test]
fn sub_agents_follow_their_parent_with_its_path() {
    let store = Store::open(sample()).unwrap();
    let mut s = store.stream();
    let mut last_top: Option<PathBuf> = None;
    let mut subs = 0;
    while let Some(item) = s.next() {
        let item = item.unwrap();
        match item.parent {
            None => {
                assert_eq!(item.depth, 0);
                last_top = Some(item.conversation.dir().to_path_buf());
            }
            Some(p) => {
                subs += 1;
                assert_eq!(item.depth, 1);
                assert_eq!(Some(p), last_top.as_deref());
                assert_eq!(
                    openhands::subagent_parent(item.conversation.dir()).as_deref(),
                    Some(p)
                );
            }
        }
    }
    assert!(subs > 0, "the sample store has sub-agents");
}

#[test]
fn the_parser_decodes_the_lent_conversation() {
    let store = Store::open(sample()).unwrap();
    let mut s = store.stream();
    let mut decoded = 0;
    while let Some(item) = s.next() {
        let item = item.unwrap();
        let conv = item.conversation;
        for e in conv.events() {
            if e.kind() == Some(openhands::Kind::Message) {
                let doc = e.open(item.parser).unwrap();
                let m = doc.message();
                assert_eq!(m.id.as_ref().map(|s| s.as_str()), e.id());
                decoded += 1;
            }
        }
    }
    assert!(decoded > 0);
}

#[test]
fn an_unreadable_conversation_is_an_error_item_and_the_stream_goes_on() {
    let t = tempfile::tempdir().unwrap();
    common::copy_tree(&sample(), t.path());
    let mut dirs = find_sessions(t.path()).unwrap();
    let gone = t.path().join("0123456789abcdef0123456789abcdef");
    dirs.insert(1, gone.clone());
    let empty = t.path().join("fedcba9876543210fedcba9876543210");
    fs::create_dir(&empty).unwrap();
    dirs.push(empty.clone());
    let store = Store::from_dirs(t.path(), dirs);
    let mut s = store.stream();
    let mut oks = 0;
    let mut errs = Vec::new();
    while let Some(item) = s.next() {
        match item {
            Ok(_) => oks += 1,
            Err(e) => errs.push(e),
        }
    }
    assert_eq!(oks, expected(t.path()).len());
    assert_eq!(errs.len(), 2);
    assert_eq!(errs[0].path(), gone);
    assert!(matches!(
        &errs[1],
        StoreError::Read(openhands::ReadError::NoConversation { .. })
    ));
    assert_eq!(errs[1].path(), empty);
}

#[cfg(unix)]
#[test]
fn a_sub_agent_link_loop_ends() {
    let t = tempfile::tempdir().unwrap();
    common::copy_tree(&sample(), t.path());
    let top = find_sessions(t.path()).unwrap().remove(0);
    fs::create_dir_all(top.join("subagents")).unwrap();
    std::os::unix::fs::symlink(&top, top.join("subagents").join("loop")).unwrap();
    let store = Store::from_dirs(t.path(), vec![top.clone()]);
    let mut s = store.stream();
    let (mut oks, mut deep) = (0, 0);
    let mut max_depth = 0;
    while let Some(item) = s.next() {
        match item {
            Ok(i) => {
                oks += 1;
                max_depth = max_depth.max(i.depth);
            }
            Err(StoreError::TooDeep { .. }) => deep += 1,
            Err(e) => panic!("{e}"),
        }
        assert!(oks + deep < 100_000, "does not end");
    }
    // The link back to its own conversation is recorded, never followed.
    // (The sample's conversation may have a real sub-agent of its own.)
    assert_eq!(deep, 0);
    assert!(oks <= 2 && max_depth <= 1, "{oks} {max_depth}");
    let conv = openhands::read_conversation(&top).unwrap();
    assert_eq!(conv.subagent_loops(), ["loop".to_string()]);
    // The listing ends too.
    let l = openhands::list(&top).unwrap().conversations;
    assert!(
        l.iter()
            .all(|e| e.depth <= openhands::store::MAX_SUBAGENT_DEPTH)
    );
}

#[test]
fn list_matches_the_stream_from_names_alone() {
    for root in [sample(), common::corpus_dir().join("openhands")] {
        let listed = openhands::list(&root).unwrap();
        assert!(listed.unreadable.is_empty());
        let listed = listed.conversations;
        let want = expected(&root);
        assert_eq!(listed.len(), want.len());
        for (i, (l, w)) in listed.iter().zip(&want).enumerate() {
            assert_eq!(l.dir, w.dir);
            assert_eq!(l.depth, w.depth);
            assert_eq!(
                l.parent.map(|p| listed[p].dir.clone()),
                w.parent.clone(),
                "parent of item {i}"
            );
            assert_eq!(l.events, w.events.len(), "{}", l.dir.display());
            assert_eq!(l.subagents, w.subagents.len());
            let conv = read_conversation(&l.dir).unwrap();
            assert_eq!(l.event_files, conv.event_file_count());
            assert_eq!(l.files, conv.files().len());
            assert_eq!(l.gap, conv.event_files().gap());
        }
    }
}

#[test]
fn list_opens_no_event_file() {
    // Event files replaced by directories of the same names: reading them
    // fails, counting them by name does not.
    let t = tempfile::tempdir().unwrap();
    common::copy_tree(&sample(), t.path());
    let top = find_sessions(t.path()).unwrap().remove(0);
    let events = top.join("events");
    let names: Vec<_> = fs::read_dir(&events)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| !n.to_string_lossy().starts_with('.'))
        .collect();
    for n in &names {
        fs::remove_file(events.join(n)).unwrap();
        fs::create_dir(events.join(n)).unwrap();
    }
    let listed = openhands::list(&top).unwrap().conversations;
    assert_eq!(listed[0].events, names.len());
    let conv = read_conversation(&top).unwrap();
    assert_eq!(conv.len(), names.len());
    assert!(conv.events().all(|e| e.error().is_some()));
}

#[cfg(feature = "parallel")]
#[test]
fn parallel_results_come_in_stream_order() {
    let t = tempfile::tempdir().unwrap();
    // Enough conversations for the pool to interleave them.
    for i in 0..12 {
        common::copy_tree(&sample(), &t.path().join(format!("copy{i:02}")));
    }
    let store = Store::open(t.path()).unwrap();
    let want: Vec<(PathBuf, usize)> = streamed(&store)
        .into_iter()
        .map(|s| (s.dir, s.events.len()))
        .collect();
    let got = store.par_map(|item| {
        let item = item.unwrap();
        (
            item.conversation.dir().to_path_buf(),
            item.conversation.len(),
        )
    });
    assert_eq!(got, want);
    for window in [0, 1, 5] {
        let mut got = Vec::new();
        store.par_for_each(
            window,
            |item| {
                let item = item.unwrap();
                (
                    item.conversation.dir().to_path_buf(),
                    item.conversation.len(),
                )
            },
            |r| got.push(r),
        );
        assert_eq!(got, want, "window {window}");
    }
}

#[test]
fn the_visitor_sees_every_object_once_while_reading() {
    use agentlog::openhands::Parsed;
    let t = tempfile::tempdir().unwrap();
    common::copy_tree(&sample(), t.path());
    let top = find_sessions(t.path()).unwrap().remove(0);
    // One malformed event: not visited.
    let events = top.join("events");
    let mut names: Vec<_> = fs::read_dir(&events)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("event-"))
        .collect();
    names.sort();
    fs::write(events.join(&names[3]), b"{not json").unwrap();
    let store = Store::from_dirs(t.path(), vec![top.clone()]);
    let mut s = store.stream();
    let mut seen: Vec<(Parsed, Vec<u8>, Option<String>)> = Vec::new();
    let item = s
        .next_with(|p, doc| {
            let kind = doc
                .root()
                .get("kind")
                .and_then(|v| v.as_str())
                .map(str::to_owned);
            seen.push((p, doc.input().to_vec(), kind));
        })
        .unwrap()
        .unwrap();
    let conv = item.conversation;
    let mut want: Vec<(Parsed, Vec<u8>, Option<String>)> = Vec::new();
    if let Some(raw) = conv.state().map(|f| f.raw()) {
        want.push((Parsed::State, raw.to_vec(), None));
    }
    if let Some(raw) = conv.meta().map(|f| f.raw()) {
        want.push((Parsed::Meta, raw.to_vec(), None));
    }
    for e in conv.events().filter(|e| e.is_ok()) {
        want.push((
            Parsed::Event { index: e.index() },
            e.raw().to_vec(),
            e.kind_name().map(str::to_owned),
        ));
    }
    assert_eq!(conv.events().filter(|e| !e.is_ok()).count(), 1);
    assert_eq!(seen.len(), want.len());
    for (g, w) in seen.iter().zip(&want) {
        assert_eq!(g.0, w.0);
        assert!(g.1 == w.1, "{:?}: other bytes", g.0);
        if matches!(g.0, Parsed::Event { .. }) {
            assert_eq!(g.2, w.2);
        }
    }
}
