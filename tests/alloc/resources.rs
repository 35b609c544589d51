//! Memory is proportional to input: the peak heap of reading an input of
//! `n` bytes, measured with a counting allocator, for the shapes that cost
//! the most per byte (a value every two bytes, a member every six, escaped
//! strings, one long string), through each layer: the JSON parser with
//! spans, the OpenHands reader and its decoders, the view, owned values,
//! and OC Chat's loader. Each factor is asserted below its documented bound
//! (module docs of `json` and `openhands`, `fuzz/README.md`) and printed.

use agentlog::json::{OwnedValue, Parser};
use agentlog::occhat::SessionStore;
use agentlog::openhands::view::{EventInput, View, ViewInput, ViewOptions};
use agentlog::openhands::{self, MessageEvent};

use crate::{heap_now, peak_of};

/// About `n` bytes of each costly shape, wrapped in an event object.
fn shapes(n: usize) -> Vec<(&'static str, Vec<u8>)> {
    let wrap = |inner: String| {
        format!(r#"{{"kind":"MessageEvent","id":"x","llm_message":{{"role":"user","content":"hi"}},"v":{inner}}}"#)
            .into_bytes()
    };
    let zeros = format!("[{}0]", "0,".repeat(n / 2));
    let members = {
        let mut s = String::from("{");
        for i in 0..n / 8 {
            s.push_str(&format!(r#""{}":0,"#, i % 100));
        }
        s.push_str(r#""z":0}"#);
        s
    };
    let empty_strings = format!("[{}\"\"]", "\"\",".repeat(n / 3));
    let escapes = format!("\"{}\"", "\\n".repeat(n / 2));
    let text = format!("\"{}\"", "a".repeat(n));
    let nested = format!("[{}0]", "[[[[[[[[0]]]]]]]],".repeat(n / 18));
    vec![
        ("numbers [0,0,...]", wrap(zeros)),
        ("members {\"k\":0,...}", wrap(members)),
        ("empty strings [\"\",...]", wrap(empty_strings)),
        ("escapes \"\\n\\n...\"", wrap(escapes)),
        ("one long string", wrap(text)),
        ("nested arrays", wrap(nested)),
    ]
}

#[test]
fn memory_is_proportional_to_input() {
    let _g = crate::measure_lock();
    let n = 2 << 20;
    let mut report = Vec::new();
    let mut worst = [0f64; 5];
    for (shape, doc) in shapes(n) {
        let len = doc.len() as f64;
        // 1. The JSON layer: parse, then ask for a span (builds the span
        //    table), from a fresh parser.
        let (parse, ()) = peak_of(|| {
            let mut p = Parser::new();
            let d = p.parse(&doc).expect("parses");
            let v = d.root().get("v").expect("v");
            assert!(!v.raw().is_empty());
        });
        let parse = parse as f64 / len;
        // 2. The reader (its buffers + the parse), and every decoder of the
        //    event kind.
        let (reader, ()) = peak_of(|| {
            let conv = openhands::parse("c", [("events/event-00000-0123abcd.json", &doc)]);
            let e = conv.event(0).expect("event");
            assert!(e.is_ok());
            let mut p = Parser::new();
            let d = e.open(&mut p).expect("opens");
            let m = MessageEvent::decode(d.root()).expect("decodes");
            let mut out = Vec::new();
            m.write_to(&mut out);
            assert!(!out.is_empty());
        });
        let reader = reader as f64 / len;
        // 3. The view and its messages.
        let (view, ()) = peak_of(|| {
            let input = ViewInput {
                events: vec![EventInput {
                    index: 0,
                    file_id: "0123abcd",
                    raw: &doc,
                }],
                base_state: None,
                sidecars: None,
            };
            let v = View::build(&input, &ViewOptions::default());
            let _ = v.wire_messages();
        });
        let view = view as f64 / len;
        // 4. Owned values (what OC Chat holds).
        let (owned, ()) = peak_of(|| {
            let v = OwnedValue::parse(&doc).expect("parses");
            assert!(v.get("v").is_some());
        });
        let owned = owned as f64 / len;
        // 5. OC Chat: a meta of this size listed and loaded.
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("s")).unwrap();
        std::fs::write(t.path().join("s/s_2025-01-01--00-00-00_meta.json"), &doc).unwrap();
        // In a fresh thread: OC Chat keeps a parser per thread, which must
        // start empty to be measured (and is let go after a large file).
        let dir = t.path().to_path_buf();
        let (occhat, ()) = peak_of(|| {
            std::thread::spawn(move || {
                let store = SessionStore::new(&dir);
                assert_eq!(store.list_sessions().sessions.len(), 1);
                let s = store.load_session("s").expect("loads");
                assert!(!s.meta_extra.is_empty());
            })
            .join()
            .expect("the load thread");
        });
        let occhat = occhat as f64 / len;
        for (w, f) in worst.iter_mut().zip([parse, reader, view, owned, occhat]) {
            *w = w.max(f);
        }
        report.push(format!(
            "{shape:>26}: parse {parse:5.1}x  reader+decode {reader:5.1}x  view {view:5.1}x  owned {owned:5.1}x  occhat {occhat:5.1}x"
        ));
    }
    // A conversation of many small events: what the reader keeps per event
    // besides the event's bytes (file name, record, envelope strings).
    let events = 10_000;
    let files: Vec<(String, Vec<u8>)> = (0..events)
        .map(|i| {
            let id = format!("{i:08x}-0000-4000-8000-000000000000");
            (
                format!("events/event-{i:05}-{id}.json"),
                format!(
                    r#"{{"kind":"PauseEvent","id":"{id}","timestamp":"2026-01-01T00:00:00.000000","source":"user"}}"#
                )
                .into_bytes(),
            )
        })
        .collect();
    let bytes: usize = files.iter().map(|(_, b)| b.len()).sum();
    let base = heap_now();
    let conv = openhands::parse("c", files.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
    let held = heap_now().saturating_sub(base);
    assert_eq!(conv.len(), events);
    let per_event = held.saturating_sub(bytes) / events;
    report.push(format!(
        "conversation of {events} events ({} bytes each): {per_event} bytes held per event besides its bytes (growth slack included)",
        bytes / events
    ));
    drop(conv);
    assert!(per_event <= 1024, "{per_event} bytes per event");
    for line in &report {
        eprintln!("{line}");
    }
    eprintln!("worst: {worst:?}");
    // The bounds the documentation states (bytes of heap per input byte).
    let bounds = [
        ("parse", 40.0),
        ("reader+decode", 44.0),
        ("view", 40.0),
        ("owned", 64.0),
        ("occhat", 80.0),
    ];
    for ((what, bound), w) in bounds.iter().zip(worst) {
        assert!(w <= *bound, "{what}: {w:.1}x over the documented {bound}x");
    }
}
