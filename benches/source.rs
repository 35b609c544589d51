//! Reading a file into a reused buffer against memory-mapping it, for file
//! sizes from 4 KiB to 4 MiB (warm page cache), to set
//! `source::MMAP_THRESHOLD`:
//!
//! - `read`: `source::read_into` (open, fstat, read into a buffer kept from
//!   call to call, close), then one byte of every 4 KiB page is touched;
//! - `mmap`: open, fstat, `Mmap::map`, touch one byte of every page (the
//!   page faults), unmap, close.
//!
//! Throughput is the file size. Samples are paired: each iteration does
//! both, in alternating order, and each benchmark counts its own. Figures:
//! `benches/README.md`.

use std::fs::File;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use memmap2::Mmap;

const PAGE: usize = 4096;

fn touch(bytes: &[u8]) -> u64 {
    bytes.iter().step_by(PAGE).map(|&b| u64::from(b)).sum()
}

fn read(path: &Path, buf: &mut Vec<u8>) -> u64 {
    buf.clear();
    match agentlog::source::read_into(path, buf) {
        Ok(_) => touch(buf),
        Err(_) => 0,
    }
}

fn map(path: &Path) -> u64 {
    let Ok(file) = File::open(path) else { return 0 };
    let Ok(meta) = file.metadata() else { return 0 };
    if meta.len() == 0 {
        return 0;
    }
    // SAFETY: the bench's own temporary file, never modified while mapped.
    match unsafe { Mmap::map(&file) } {
        Ok(m) => touch(&m),
        Err(_) => 0,
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut g = c.benchmark_group("source");
    let mut buf = Vec::new();
    for kib in [4usize, 16, 64, 128, 256, 512, 1024, 2048, 4096] {
        let size = kib * 1024;
        let path = dir.path().join(format!("f{kib}.json"));
        // Bytes that vary, so nothing is a zero page.
        let data: Vec<u8> = (0..size).map(|i| b'a' + (i % 23) as u8).collect();
        std::fs::write(&path, &data).expect("write the file");
        assert_eq!(read(&path, &mut buf), map(&path));
        g.throughput(Throughput::Bytes(size as u64));
        // Paired sampling: each iteration does both, in alternating order,
        // and each benchmark counts its own (see benches/json.rs).
        for (which, name) in ["read", "mmap"].iter().enumerate() {
            g.bench_with_input(BenchmarkId::new(*name, kib), &path, |b, p| {
                b.iter_custom(|iters| {
                    let mut mine = Duration::ZERO;
                    for i in 0..iters {
                        for k in 0..2 {
                            let w = (i as usize + k) % 2;
                            let t = Instant::now();
                            if w == 0 {
                                black_box(read(black_box(p), &mut buf));
                            } else {
                                black_box(map(black_box(p)));
                            }
                            if w == which {
                                mine += t.elapsed();
                            }
                        }
                    }
                    mine
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
