//! The HTML transcript of the largest corpus conversation (`1.58.2/large`,
//! 2101 events) against its baselines, in the same run:
//!
//! - `read`: the reader reads the directory (`Reader::read_into`);
//! - `view`: the view and the typed messages over the conversation read
//!   (`View::from_conversation`), which the transcript builds too;
//! - `html`: the whole transcript written into a reused buffer
//!   (`write_transcript`: the view, each call's usage, every message
//!   escaped and written).
//!
//! `cargo bench --features html --bench html`

#[path = "support/corpus.rs"]
mod corpus;

use agentlog::openhands::html::write_transcript;
use agentlog::openhands::view::{View, ViewOptions};
use agentlog::openhands::{Conversation, Reader};
use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let Some(dir) = corpus::large_conversation() else {
        eprintln!("corpus not found; nothing to measure");
        return;
    };
    let mut g = c.benchmark_group("html/1.58.2-large");
    g.sample_size(30);
    let mut reader = Reader::new();
    let mut conv = Conversation::new();
    g.bench_function("read", |b| {
        b.iter(|| {
            let ok = reader.read_into(&dir, &mut conv).is_ok();
            std::hint::black_box((ok, conv.len()))
        })
    });
    let Ok(read) = Reader::new().read(&dir) else {
        return;
    };
    g.bench_function("view", |b| {
        b.iter(|| {
            let view = View::from_conversation(&read, &ViewOptions::default());
            std::hint::black_box(view.messages().len())
        })
    });
    let mut out: Vec<u8> = Vec::new();
    g.bench_function("html", |b| {
        b.iter(|| {
            out.clear();
            let s = write_transcript(&read, &ViewOptions::default(), &mut out).ok();
            std::hint::black_box((s.map(|s| s.messages), out.len()))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
