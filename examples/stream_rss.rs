//! Streams every conversation of an OpenHands store through one reused
//! reader, touching every event's envelope (benchmark (b)), and reports the
//! peak resident set size: memory stays bounded by the largest conversation
//! whatever the store's size.
//!
//! ```text
//! cargo run --release --features gen --example agentlog-gen -- \
//!     --conversations 1000 --events 200 --content-scale 5 --out /tmp/store-1g
//! cargo run --release --example stream_rss -- /tmp/store-1g
//! /usr/bin/time -v target/release/examples/stream_rss /tmp/store-1g
//! ```
//!
//! With `--par` (feature `parallel`) the store is read by `par_for_each`
//! on every core instead.

use std::process::ExitCode;
use std::time::Instant;

use agentlog::openhands::Store;

/// A line of `/proc/self/status` in kB (`VmHWM`: peak RSS; `VmRSS`: now).
fn status_kb(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[derive(Default, Clone, Copy)]
struct Totals {
    conversations: u64,
    subagents: u64,
    events: u64,
    bytes: u64,
    errors: u64,
    largest: u64,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let par = args.iter().any(|a| a == "--par");
    let Some(root) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: stream_rss [--par] STORE");
        return ExitCode::from(2);
    };
    let before = status_kb("VmHWM:").unwrap_or(0);
    let t = Instant::now();
    let store = match Store::open(root) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let found = t.elapsed();
    let mut tot = Totals::default();
    let mut add = |r: Result<(usize, u64, u64, bool), String>| match r {
        Ok((depth, events, bytes, ok)) => {
            if depth == 0 {
                tot.conversations += 1;
            } else {
                tot.subagents += 1;
            }
            tot.events += events;
            tot.bytes += bytes;
            tot.largest = tot.largest.max(bytes);
            tot.errors += u64::from(!ok);
        }
        Err(e) => {
            eprintln!("{e}");
            tot.errors += 1;
        }
    };
    let each =
        |item: Result<agentlog::openhands::StoreItem<'_>, agentlog::openhands::StoreError>| {
            item.map(|item| {
                let c = item.conversation;
                let mut ok = true;
                let mut n = 0u64;
                for e in c.events() {
                    ok &= e.kind().is_some() && e.id().is_some() && e.error().is_none();
                    n += 1;
                }
                (item.depth, n, c.event_bytes().len() as u64, ok)
            })
            .map_err(|e| e.to_string())
        };
    if par {
        #[cfg(feature = "parallel")]
        store.par_for_each(0, each, &mut add);
        #[cfg(not(feature = "parallel"))]
        {
            eprintln!("--par needs the `parallel` feature");
            return ExitCode::from(2);
        }
    } else {
        let mut s = store.stream();
        while let Some(item) = s.next() {
            add(each(item));
        }
    }
    let el = t.elapsed();
    let peak = status_kb("VmHWM:").unwrap_or(0);
    println!(
        "{} conversations + {} sub-agents, {} events, {:.1} MB of event files (largest conversation {:.1} MB), {} errors",
        tot.conversations,
        tot.subagents,
        tot.events,
        tot.bytes as f64 / 1e6,
        tot.largest as f64 / 1e6,
        tot.errors
    );
    println!(
        "{:.2} s ({:.2} s finding conversations), {:.0} MB/s, {:.0} events/s",
        el.as_secs_f64(),
        found.as_secs_f64(),
        tot.bytes as f64 / 1e6 / el.as_secs_f64(),
        tot.events as f64 / el.as_secs_f64()
    );
    println!(
        "peak RSS {:.1} MB (at start {:.1} MB)",
        peak as f64 / 1024.0,
        before as f64 / 1024.0
    );
    if tot.errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
