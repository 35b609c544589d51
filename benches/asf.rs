//! ASF against what it is built on, each pair in one run on the same input:
//! converting every corpus conversation (read from disk, converted to
//! session bytes) against a `stats`-like reading of the same conversations
//! (read from disk, every event parsed and its kind looked at); and
//! reading and verifying the converted files against the parse floor,
//! simd-json's tape of the same lines (and, beside it, SHA-256 of the same
//! lines, what hashing them once costs, and SHA-256 of every `response`'s
//! request after its items, what comparing the `request_hash`es must hash
//! beyond them).

use std::hint::black_box;

use agentlog::asf::Session;
use agentlog::convert::openhands::convert;
use agentlog::openhands::{self, Conversation, Reader};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/corpus.rs"]
mod corpus;
use corpus::{conversations, corpus};

fn bench(c: &mut Criterion) {
    let dirs = conversations(&corpus());
    let files: Vec<Vec<u8>> = dirs
        .iter()
        .filter_map(|d| convert(&openhands::read_conversation(d).ok()?).ok())
        .map(|o| o.bytes)
        .collect();
    assert_eq!(files.len(), dirs.len(), "every conversation converts");

    let mut g = c.benchmark_group("asf/convert");
    g.sample_size(10);
    g.bench_function("stats_read", |b| {
        let mut reader = Reader::new();
        let mut conv = Conversation::new();
        let mut parser = agentlog::json::Parser::new();
        b.iter(|| {
            let mut n = 0usize;
            for d in &dirs {
                reader.read_into(d, &mut conv).expect("read");
                for e in conv.events() {
                    if let Ok(doc) = e.open(&mut parser) {
                        n += usize::from(doc.root().get("kind").is_some());
                    }
                }
            }
            black_box(n)
        })
    });
    g.bench_function("convert", |b| {
        let mut reader = Reader::new();
        let mut conv = Conversation::new();
        b.iter(|| {
            let mut n = 0usize;
            for d in &dirs {
                reader.read_into(d, &mut conv).expect("read");
                n += convert(&conv).expect("converts").bytes.len();
            }
            black_box(n)
        })
    });
    g.finish();

    let bytes: usize = files.iter().map(Vec::len).sum();
    let mut g = c.benchmark_group("asf/verify");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("floor_parse", |b| {
        let mut buf = Vec::with_capacity(1 << 16);
        let mut buffers = simd_json::Buffers::new(1 << 16);
        b.iter(|| {
            let mut nodes = 0usize;
            for f in &files {
                for line in f.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                    buf.clear();
                    buf.extend_from_slice(line);
                    if let Ok(t) = simd_json::to_tape_with_buffers(&mut buf, &mut buffers) {
                        nodes += t.0.len();
                    }
                }
            }
            black_box(nodes)
        })
    });
    // SHA-256 (the CPU's SHA instructions where present) over every line
    // once: what hashing the same bytes costs beside parsing them.
    g.bench_function("floor_sha", |b| {
        use sha2::{Digest, Sha256};
        b.iter(|| {
            let mut x = 0u8;
            for f in &files {
                for line in f.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                    x ^= Sha256::digest(line)[0];
                }
            }
            black_box(x)
        })
    });
    // What comparing the `request_hash`es must hash beyond the items: each
    // `response`'s request less its `input`, in canonical form. RFC 8785
    // puts `instructions`, `tools` and the other settings after `input`, so
    // a running digest over the items can share the items between responses
    // but never these tails. Built outside the timing, once this row runs
    // (a profile of another row, filtered by name, carries no rebuilds).
    let request_tails = std::cell::OnceCell::new();
    let tails_of = || -> Vec<Vec<u8>> {
        files
            .iter()
            .flat_map(|f| {
                let s = Session::read(f).expect("reads");
                s.entries()
                    .iter()
                    .filter(|e| e.request_hash.is_some())
                    .map(|e| {
                        let mut request = s.request_context(&e.id).expect("context").request();
                        if let Some(m) = request.as_object_mut() {
                            m.remove("input");
                        }
                        agentlog::asf::canon::to_canonical(&request).expect("canonical")
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    g.bench_function("floor_sha_request_tails", |b| {
        use sha2::{Digest, Sha256};
        let request_tails = request_tails.get_or_init(tails_of);
        b.iter(|| {
            let mut x = 0u8;
            for r in request_tails {
                x ^= Sha256::digest(r)[0];
            }
            black_box(x)
        })
    });
    g.bench_function("read", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for f in &files {
                n += Session::read(f).expect("reads").entries().len();
            }
            black_box(n)
        })
    });
    g.bench_function("verify", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for f in &files {
                let s = Session::read(f).expect("reads");
                n += s.verify().len();
            }
            assert_eq!(n, 0);
            black_box(n)
        })
    });
    g.bench_function("verify_entries", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for f in &files {
                let s = Session::read(f).expect("reads");
                n += s.verify_entries().len();
            }
            assert_eq!(n, 0);
            black_box(n)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
