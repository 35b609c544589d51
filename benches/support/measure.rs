//! Measuring variants against each other in one run: criterion's samples
//! of each, then the variants run again round robin, whose medians and
//! ratios a bench prints. Shared by `benches/incr.rs`, `benches/rescan.rs`,
//! `benches/cold.rs`, `benches/asf.rs` and `benches/parquet.rs`.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;

/// One variant: what it measures, returning a count to keep it honest.
pub type Run<'a> = Box<dyn Fn() -> u64 + 'a>;

/// The median of `v` (sorted in place); NaN when empty.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Criterion's samples of every variant, in the group `group`.
pub fn bench_all(c: &mut Criterion, group: &str, variants: &[(&str, Run<'_>)]) {
    let mut g = c.benchmark_group(group);
    for (name, run) in variants {
        g.bench_function(*name, |b| b.iter(|| black_box(run())));
    }
    g.finish();
}

/// Runs the variants round robin `rounds` times and prints the median
/// wall time of each under `title`; the medians in milliseconds, in the
/// variants' order.
pub fn interleaved_medians(title: &str, variants: &[(&str, Run<'_>)], rounds: usize) -> Vec<f64> {
    interleaved(title, variants, rounds).0
}

/// [`interleaved_medians`], and every round's wall time of each variant
/// (milliseconds, by variant, in round order): to compare variants round
/// by round, which cancels the drift of a shared machine's load.
pub fn interleaved(
    title: &str,
    variants: &[(&str, Run<'_>)],
    rounds: usize,
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let mut wall = vec![Vec::new(); variants.len()];
    for _ in 0..rounds {
        for (i, (_, run)) in variants.iter().enumerate() {
            let t = Instant::now();
            black_box(run());
            wall[i].push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let rows = wall.clone();
    let med: Vec<f64> = wall.iter_mut().map(|w| median(w)).collect();
    println!();
    println!("{title} ({rounds} rounds, round robin):");
    for (i, (name, _)) in variants.iter().enumerate() {
        println!("  {name:<18} {:>9.2} ms", med[i]);
    }
    (med, rows)
}

/// The process's CPU time (user + sys, every thread).
pub fn process_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Round robin over the variants, `before` each run; medians of wall and
/// CPU time, and each variant's ratio to the first.
pub fn interleaved_cpu(
    title: &str,
    vs: &[(&'static str, Run<'_>)],
    rounds: usize,
    before: &dyn Fn(),
) {
    let k = vs.len();
    let mut wall = vec![Vec::new(); k];
    let mut cpu = vec![Vec::new(); k];
    for _ in 0..rounds {
        for (i, (_, run)) in vs.iter().enumerate() {
            before();
            let c0 = process_cpu();
            let t = Instant::now();
            black_box(run());
            wall[i].push(t.elapsed().as_secs_f64() * 1e3);
            cpu[i].push(process_cpu().saturating_sub(c0).as_secs_f64() * 1e3);
        }
    }
    let med: Vec<(f64, f64)> = (0..k)
        .map(|i| (median(&mut wall[i]), median(&mut cpu[i])))
        .collect();
    println!(
        "{title} ({rounds} rounds, round robin, medians; ratios to {}):",
        vs[0].0
    );
    for (i, (name, _)) in vs.iter().enumerate() {
        println!(
            "    {name:<12} wall {:>9.1} ms  cpu {:>9.1} ms   wall {:.2}x  cpu {:.2}x",
            med[i].0,
            med[i].1,
            med[i].0 / med[0].0,
            med[i].1 / med[0].1
        );
    }
}
