//! ASF against what it is built on, each pair in one run on the same input:
//! converting every corpus conversation (read from disk, converted to
//! session bytes) against a `stats`-like reading of the same conversations
//! (read from disk, every event parsed and its kind looked at); and
//! reading and verifying the converted files against the parse floor,
//! simd-json's tape of the same lines (and, beside it, SHA-256 of the same
//! lines, what hashing them once costs, and every `response`'s request
//! finished from the running hash of its items, what comparing the
//! `request_hash`es must hash beyond them).
//!
//! `asf/to_files` is the whole job as `agentlog asf convert` does it, by
//! process CPU time (user + sys, which is where creating, flushing and
//! renaming files shows): converting every conversation and writing each
//! session file as the command does (temporary files made durable in
//! batches, then renamed, the directory flushed once: `output::Batch`), against the `stats`-like read, and against
//! a floor that does only what no converter can leave out — the same read
//! and parse, SHA-256 of every line it writes and of every request tail
//! (from its running hash, two at a time as the converter hashes them),
//! and the same bytes written as the same files.

use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};

use agentlog::asf::{RequestHasher, Session};
use agentlog::convert::openhands::convert;
use agentlog::openhands::{self, Conversation, Reader};
use agentlog::output::{Batch, Output};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/corpus.rs"]
mod corpus;
#[path = "support/measure.rs"]
mod measure;
#[path = "support/request_hashers.rs"]
mod request_hashers;
use corpus::{conversations, corpus};
use measure::{Run, bench_all, interleaved_cpu};

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
        b.iter(|| black_box(stats_read(&dirs, &mut reader, &mut conv)))
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
    // `response`'s request less its `input`, in canonical form, from the
    // running hash of its items. RFC 8785 puts `instructions`, `tools` and
    // the other settings after `input`, so a running digest over the items
    // can share the items between responses but never these tails; those
    // of requests with the same settings are hashed two at a time
    // (`RequestHasher::hash_many`), as the converter hashes them. Built
    // outside the timing, once this row runs (a profile of another row,
    // filtered by name, carries no rebuilds).
    let requests = std::cell::OnceCell::new();
    let requests_of = || -> Vec<Vec<RequestHasher>> {
        files
            .iter()
            .map(|f| request_hashers::request_hashers_of(f))
            .collect()
    };
    g.bench_function("floor_sha_request_tails", |b| {
        let requests = requests.get_or_init(requests_of);
        b.iter(|| {
            let mut x = 0u8;
            for file in requests {
                let refs: Vec<&RequestHasher> = file.iter().collect();
                for h in RequestHasher::hash_many(&refs) {
                    x ^= h.as_bytes()[7];
                }
            }
            black_box(x)
        })
    });
    // The same requests finished one at a time: what the two-lane hashing
    // above saves.
    g.bench_function("floor_sha_request_tails_one_by_one", |b| {
        let requests = requests.get_or_init(requests_of);
        b.iter(|| {
            let mut x = 0u8;
            for file in requests {
                for h in file {
                    x ^= h.hash().as_bytes()[7];
                }
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

/// Writes `bytes` to `dir/name` as `agentlog asf convert` writes a session
/// file.
fn write_session(dir: &Path, name: &str, bytes: &[u8], pending: &mut Batch) {
    let mut o = Output::create_entry(&dir.join(name)).expect("output");
    o.write_all(bytes).expect("write");
    pending.add(o).expect("commit");
}

/// The `stats`-like read: every event parsed and its kind looked at.
fn stats_read(dirs: &[PathBuf], reader: &mut Reader, conv: &mut Conversation) -> usize {
    let mut parser = agentlog::json::Parser::new();
    let mut n = 0usize;
    for d in dirs {
        reader.read_into(d, conv).expect("read");
        for e in conv.events() {
            if let Ok(doc) = e.open(&mut parser) {
                n += usize::from(doc.root().get("kind").is_some());
            }
        }
    }
    n
}

fn to_files(c: &mut Criterion) {
    use sha2::{Digest, Sha256};
    // Nothing built when a name filter leaves this group out (a profile of
    // another row carries none of this set-up); no round-robin pass under
    // `--test`.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows = ["stats_read", "floor", "convert"].map(|r| format!("asf/to_files/{r}"));
    if args
        .iter()
        .any(|a| !a.starts_with('-') && !rows.iter().any(|r| r.contains(a.as_str())))
    {
        return;
    }
    let test_mode = args.iter().any(|a| a == "--test");
    let dirs = conversations(&corpus());
    let sessions: Vec<(String, Vec<u8>, Vec<RequestHasher>)> = dirs
        .iter()
        .map(|d| {
            let done = convert(&openhands::read_conversation(d).expect("reads")).expect("converts");
            let requests = request_hashers::request_hashers_of(&done.bytes);
            (format!("{}.jsonl", done.session_id), done.bytes, requests)
        })
        .collect();
    let out = tempfile::tempdir().expect("temporary directory");
    let (floor_dir, convert_dir) = (out.path().join("floor"), out.path().join("convert"));
    std::fs::create_dir_all(&floor_dir).expect("mkdir");
    std::fs::create_dir_all(&convert_dir).expect("mkdir");
    let state = std::cell::RefCell::new((Reader::new(), Conversation::new()));

    let variants: Vec<(&'static str, Run<'_>)> = vec![
        (
            "stats_read",
            Box::new(|| {
                let (reader, conv) = &mut *state.borrow_mut();
                stats_read(&dirs, reader, conv) as u64
            }),
        ),
        (
            "floor",
            Box::new(|| {
                let (reader, conv) = &mut *state.borrow_mut();
                let mut n = stats_read(&dirs, reader, conv) as u64;
                let mut pending = Batch::new();
                for (name, bytes, requests) in &sessions {
                    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                        n += u64::from(Sha256::digest(line)[0]);
                    }
                    let refs: Vec<&RequestHasher> = requests.iter().collect();
                    for h in RequestHasher::hash_many(&refs) {
                        n += u64::from(h.as_bytes()[7]);
                    }
                    write_session(&floor_dir, name, bytes, &mut pending);
                }
                pending.finish().expect("flush");
                n
            }),
        ),
        (
            "convert",
            Box::new(|| {
                let (reader, conv) = &mut *state.borrow_mut();
                let mut pending = Batch::new();
                let mut n = 0u64;
                for d in &dirs {
                    reader.read_into(d, conv).expect("read");
                    let done = convert(conv).expect("converts");
                    let name = format!("{}.jsonl", done.session_id);
                    write_session(&convert_dir, &name, &done.bytes, &mut pending);
                    n += done.bytes.len() as u64;
                }
                pending.finish().expect("flush");
                n
            }),
        ),
    ];
    bench_all(c, "asf/to_files", &variants);
    if !test_mode {
        interleaved_cpu("asf/to_files, process CPU", &variants, 7, &|| {});
    }
}

criterion_group!(benches, bench);
criterion_group! {
    name = files;
    config = Criterion::default().sample_size(10);
    targets = to_files
}
criterion_main!(benches, files);
