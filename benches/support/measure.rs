//! Measuring variants against each other in one run: criterion's samples
//! of each, then the variants run again round robin, whose medians and
//! ratios a bench prints. Shared by `benches/incr.rs`, `benches/rescan.rs`
//! and `benches/cold.rs`.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::Instant;

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
