//! Building the view and the messages of the largest corpus conversation
//! (`1.58.2/large`, 2101 events) against reading it, in the same run:
//!
//! - `read+parse`: read every event file and `base_state.json` into a
//!   reused buffer and parse each with the crate's JSON parser (the
//!   reading floor);
//! - `read+view`: read the files and build the view and the typed messages
//!   (`View::build`);
//! - `view (in memory)`: `View::build` over bytes already read;
//! - `view+json`: `View::build` plus the SDK dumps and the wire dicts as
//!   owned JSON values.
//!
//! Target: `read+view` at most 3x `read+parse`.

use std::path::{Path, PathBuf};

use agentlog::json::Parser;
use agentlog::openhands::view::{EventInput, Sidecars, View, ViewInput, ViewOptions};
use criterion::{Criterion, criterion_group, criterion_main};

fn conversation_dir() -> Option<PathBuf> {
    let beside = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus"));
    let corpus = if beside.is_dir() {
        beside
    } else {
        PathBuf::from("/work/shared/corpus")
    };
    let large = corpus.join("openhands/1.58.2/large");
    std::fs::read_dir(&large)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.join("base_state.json").is_file())
}

/// The event files in index order: (index, file id, path).
fn list(dir: &Path) -> Vec<(usize, String, PathBuf)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir.join("events"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name
            .strip_prefix("event-")
            .and_then(|r| r.strip_suffix(".json"))
        else {
            continue;
        };
        let Some((idx, id)) = rest.split_once('-') else {
            continue;
        };
        if let Ok(i) = idx.parse::<usize>() {
            out.push((i, id.to_owned(), e.path()));
        }
    }
    out.sort();
    out
}

fn read_all(files: &[(usize, String, PathBuf)], state: &Path) -> (Vec<Vec<u8>>, Vec<u8>) {
    let events = files
        .iter()
        .map(|(_, _, p)| std::fs::read(p).unwrap_or_default())
        .collect();
    (events, std::fs::read(state).unwrap_or_default())
}

fn input<'a>(
    files: &'a [(usize, String, PathBuf)],
    raws: &'a [Vec<u8>],
    state: &'a [u8],
) -> ViewInput<'a> {
    ViewInput {
        events: files
            .iter()
            .zip(raws)
            .map(|((i, id, _), raw)| EventInput {
                index: *i,
                file_id: id,
                raw,
            })
            .collect(),
        base_state: Some(state),
        sidecars: Some(Sidecars {
            eventlog_lock: true,
            length_marker: true,
        }),
    }
}

fn bench(c: &mut Criterion) {
    let Some(dir) = conversation_dir() else {
        eprintln!("corpus not found; nothing to measure");
        return;
    };
    let files = list(&dir);
    let state_path = dir.join("base_state.json");
    let mut g = c.benchmark_group("view/1.58.2-large");
    g.sample_size(20);

    g.bench_function("read+parse", |b| {
        let mut parser = Parser::new();
        let mut buf = Vec::new();
        b.iter(|| {
            let mut nodes = 0usize;
            for (_, _, p) in &files {
                buf.clear();
                if agentlog::source::read_into(p, &mut buf).is_ok()
                    && let Ok(doc) = parser.parse(&buf)
                {
                    nodes += doc.node_count();
                }
            }
            buf.clear();
            if agentlog::source::read_into(&state_path, &mut buf).is_ok()
                && let Ok(doc) = parser.parse(&buf)
            {
                nodes += doc.node_count();
            }
            std::hint::black_box(nodes)
        })
    });

    g.bench_function("read+view", |b| {
        b.iter(|| {
            let (raws, state) = read_all(&files, &state_path);
            let view = View::build(&input(&files, &raws, &state), &ViewOptions::default());
            std::hint::black_box(view.messages().len())
        })
    });

    let (raws, state) = read_all(&files, &state_path);
    g.bench_function("view (in memory)", |b| {
        b.iter(|| {
            let view = View::build(&input(&files, &raws, &state), &ViewOptions::default());
            std::hint::black_box(view.messages().len())
        })
    });

    g.bench_function("view+json (in memory)", |b| {
        b.iter(|| {
            let view = View::build(&input(&files, &raws, &state), &ViewOptions::default());
            let sdk = view.sdk_messages();
            let wire = view.wire_messages();
            std::hint::black_box((sdk.len(), wire.len()))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
