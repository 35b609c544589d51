//! Building the view and the messages of the largest corpus conversation
//! (`1.58.2/large`, 2101 events) against reading it, in the same run:
//!
//! - `read` (the baseline): the reader reads the directory — lists
//!   `events/`, reads every file and `base_state.json`, parses each event
//!   for its envelope (`Reader::read_into`, buffers reused);
//! - `read+view`: the same, then the view and the typed messages
//!   (`View::from_conversation`);
//! - `view`: `View::from_conversation` alone, over a conversation already
//!   read;
//! - `view+json`: the view plus the SDK dumps and the wire dicts as owned
//!   JSON values.
//!
//! Target: `read+view` at most 3x `read`.

#[path = "support/corpus.rs"]
mod corpus;

use agentlog::openhands::view::{View, ViewOptions};
use agentlog::openhands::{Conversation, Reader};
use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let Some(dir) = corpus::large_conversation() else {
        eprintln!("corpus not found; nothing to measure");
        return;
    };
    let mut g = c.benchmark_group("view/1.58.2-large");
    g.sample_size(30);

    let mut reader = Reader::new();
    let mut conv = Conversation::new();
    g.bench_function("read", |b| {
        b.iter(|| {
            let ok = reader.read_into(&dir, &mut conv).is_ok();
            std::hint::black_box((ok, conv.len()))
        })
    });

    g.bench_function("read+view", |b| {
        b.iter(|| {
            let ok = reader.read_into(&dir, &mut conv).is_ok();
            let view = View::from_conversation(&conv, &ViewOptions::default());
            std::hint::black_box((ok, view.messages().len()))
        })
    });

    let read = Reader::new().read(&dir).ok();
    if let Some(read) = read {
        g.bench_function("view", |b| {
            b.iter(|| {
                let view = View::from_conversation(&read, &ViewOptions::default());
                std::hint::black_box(view.messages().len())
            })
        });
        g.bench_function("view+json", |b| {
            b.iter(|| {
                let view = View::from_conversation(&read, &ViewOptions::default());
                let sdk = view.sdk_messages();
                let wire = view.wire_messages();
                std::hint::black_box((sdk.len(), wire.len()))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
