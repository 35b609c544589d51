//! Reading a whole OpenHands store, envelopes only and with every kind
//! decoded, against two floors measured in the same run on the same files:
//! reading every file (directory listings included), and reading every file
//! plus building simd-json's tape.

use std::hint::black_box;
use std::io::Read;
use std::path::PathBuf;

use agentlog::json::Parser;
use agentlog::openhands::{self, Conversation, Reader};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/corpus.rs"]
mod corpus;
use corpus::{conversations, corpus};

/// The I/O floor: list each conversation's `events/`, read `base_state.json`
/// and every event file into one reused buffer.
fn read_files(dirs: &[PathBuf], buf: &mut Vec<u8>, mut each: impl FnMut(&mut Vec<u8>)) -> usize {
    let mut n = 0;
    for d in dirs {
        let mut paths = vec![d.join("base_state.json")];
        for e in std::fs::read_dir(d.join("events"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if !e.file_name().as_encoded_bytes().starts_with(b".") {
                paths.push(e.path());
            }
        }
        for p in paths {
            buf.clear();
            if let Ok(mut f) = std::fs::File::open(&p) {
                let _ = f.read_to_end(buf);
                n += buf.len();
                each(buf);
            }
        }
    }
    n
}

fn bench(c: &mut Criterion) {
    let root = corpus();
    let all = conversations(&root);
    let large: Vec<PathBuf> = all
        .iter()
        .filter(|p| p.to_string_lossy().contains("/large/"))
        .cloned()
        .collect();
    for (name, dirs) in [("corpus", &all), ("large", &large)] {
        let mut buf = Vec::new();
        let bytes = read_files(dirs, &mut buf, |_| {});
        let mut g = c.benchmark_group(format!("openhands_read/{name}"));
        g.throughput(Throughput::Bytes(bytes as u64));
        g.sample_size(20);
        g.bench_function("floor_io", |b| {
            let mut buf = Vec::with_capacity(1 << 16);
            b.iter(|| black_box(read_files(dirs, &mut buf, |_| {})))
        });
        g.bench_function("floor_parse", |b| {
            let mut buf = Vec::with_capacity(1 << 16);
            let mut tape_nodes = 0usize;
            let mut buffers = simd_json::Buffers::new(1 << 16);
            b.iter(|| {
                read_files(dirs, &mut buf, |bytes| {
                    if let Ok(t) = simd_json::to_tape_with_buffers(bytes, &mut buffers) {
                        tape_nodes += t.0.len();
                    }
                });
                black_box(tape_nodes)
            })
        });
        g.bench_function("envelopes", |b| {
            let mut reader = Reader::new();
            let mut conv = Conversation::new();
            b.iter(|| {
                let mut n = 0;
                for d in dirs.iter() {
                    reader.read_into(d, &mut conv).expect("read");
                    n += conv.events().filter(|e| e.kind().is_some()).count();
                }
                black_box(n)
            })
        });
        g.bench_function("envelopes_fresh", |b| {
            let mut reader = Reader::new();
            b.iter(|| {
                let mut n = 0;
                for d in dirs.iter() {
                    let conv = reader.read(d).expect("read");
                    n += conv.len();
                }
                black_box(n)
            })
        });
        g.bench_function("decode_all", |b| {
            let mut reader = Reader::new();
            let mut conv = Conversation::new();
            let mut parser = Parser::new();
            b.iter(|| {
                let mut n = 0usize;
                for d in dirs.iter() {
                    reader.read_into(d, &mut conv).expect("read");
                    for e in conv.events() {
                        let Ok(doc) = e.open(&mut parser) else {
                            continue;
                        };
                        n += match e.kind_name().unwrap_or("") {
                            openhands::KIND_MESSAGE => doc.message().members.len(),
                            openhands::KIND_ACTION => doc.action().members.len(),
                            openhands::KIND_OBSERVATION => doc.observation().members.len(),
                            openhands::KIND_AGENT_ERROR => doc.agent_error().members.len(),
                            openhands::KIND_CONDENSATION => doc.condensation().members.len(),
                            openhands::KIND_SYSTEM_PROMPT => doc.system_prompt().members.len(),
                            openhands::KIND_USER_REJECT => doc.user_reject().members.len(),
                            _ => 0,
                        };
                    }
                    if let Some(Ok(doc)) = conv.state().map(|f| f.open(&mut parser)) {
                        n += doc.state().members.len();
                    }
                }
                black_box(n)
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
