//! `agentlog-gen`: writes a synthetic OpenHands conversation store, or
//! measures the event files of a store (generated or real).
//!
//! ```text
//! cargo run --release --features gen --example agentlog-gen -- \
//!     --conversations 1000 --events 200 --seed 1 --out /tmp/store
//! cargo run --release --features gen --example agentlog-gen -- stats /tmp/store
//! ```

use agentlog::json::Parser;
use agentlog::synth::{GenConfig, SdkStyle, write_store};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "\
usage: agentlog-gen --out DIR [options]
       agentlog-gen stats DIR

Writes a synthetic OpenHands conversation store into DIR (which must be
empty or absent). Same seed, same bytes.

options:
  --conversations N     top-level conversations (default 100)
  --events N            event files per conversation (default 200)
  --seed S              seed (default 0)
  --style S             1.58 | 1.0 | mixed (default 1.58)
  --subagents-ratio R   fraction with sub-agents (default 0.1)
  --condenser-ratio R   fraction with a condenser (default 0.3)
  --confirm-ratio R     fraction in confirmation mode (default 0.1)
  --branch-ratio R      fraction with a navigate_to branch (default 0.05)
  --meta-ratio R        fraction with meta.json (default 0.3)
  --content-scale X     multiply text lengths (default 1.0 = corpus-like,
                        ~240 MB for 1000 x 200; 36 = real-world-like,
                        ~1 GB for 1000 x 200)
  --length-spread R     vary event counts by up to this fraction (default 0)
  --threads N           writer threads (default: all cores)

stats DIR: per-kind count, mean and median size of the event files under
DIR (any OpenHands store), and whether each parses.";

fn parse_args(args: &[String]) -> Result<(GenConfig, PathBuf), String> {
    let mut cfg = GenConfig::default();
    let mut out = None;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .map(String::as_str)
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        fn num<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T, String> {
            v.parse()
                .map_err(|_| format!("{flag}: cannot read {v:?} as a number"))
        }
        match flag.as_str() {
            "--out" => out = Some(PathBuf::from(value()?)),
            "--conversations" => cfg.conversations = num(flag, value()?)?,
            "--events" => cfg.events_per_conversation = num(flag, value()?)?,
            "--seed" => cfg.seed = num(flag, value()?)?,
            "--style" => {
                let v = value()?;
                cfg.style =
                    SdkStyle::parse(v).ok_or_else(|| format!("--style: unknown style {v:?}"))?;
            }
            "--subagents-ratio" | "--subagent-ratio" => cfg.subagent_ratio = num(flag, value()?)?,
            "--condenser-ratio" => cfg.condenser_ratio = num(flag, value()?)?,
            "--confirm-ratio" => cfg.confirm_ratio = num(flag, value()?)?,
            "--branch-ratio" => cfg.branch_ratio = num(flag, value()?)?,
            "--meta-ratio" => cfg.meta_ratio = num(flag, value()?)?,
            "--content-scale" => cfg.content_scale = num(flag, value()?)?,
            "--length-spread" => cfg.length_spread = num(flag, value()?)?,
            "--threads" => cfg.threads = num(flag, value()?)?,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let out = out.ok_or("--out DIR is required")?;
    Ok((cfg, out))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("stats") {
        return match args.get(1) {
            Some(dir) => stats(Path::new(dir)),
            None => {
                eprintln!("{USAGE}");
                ExitCode::from(2)
            }
        };
    }
    let (cfg, out) = match parse_args(&args) {
        Ok(x) => x,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("agentlog-gen: {e}\n");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let t = Instant::now();
    match write_store(&out, &cfg) {
        Ok(s) => {
            let secs = t.elapsed().as_secs_f64();
            println!(
                "wrote {} conversations ({} sub-agents), {} events, {} files, {:.1} MB in {:.2} s ({:.0} MB/s, {:.0} files/s) to {}",
                s.conversations,
                s.subagents,
                s.events,
                s.files,
                s.bytes as f64 / 1e6,
                secs,
                s.bytes as f64 / 1e6 / secs,
                s.files as f64 / secs,
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("agentlog-gen: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The size statistics key of an event: its kind, with the action /
/// observation kind or the message source.
fn key_of(root: agentlog::json::Value<'_>) -> String {
    let kind = root.get("kind").and_then(|v| v.as_str()).unwrap_or("?");
    let sub = match kind {
        "ActionEvent" => Some(
            root.get("action")
                .and_then(|a| a.get("kind"))
                .and_then(|k| k.as_str())
                .unwrap_or("(no action)"),
        ),
        "ObservationEvent" => root
            .get("observation")
            .and_then(|a| a.get("kind"))
            .and_then(|k| k.as_str()),
        "MessageEvent" => root.get("source").and_then(|s| s.as_str()),
        _ => None,
    };
    match sub {
        Some(s) => format!("{kind}:{s}"),
        None => kind.to_string(),
    }
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, files);
        } else if p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("event-") && n.ends_with(".json"))
        {
            files.push(p);
        }
    }
}

fn stats(dir: &Path) -> ExitCode {
    let mut files = Vec::new();
    walk(dir, &mut files);
    let mut parser = Parser::new();
    let mut buf = Vec::new();
    let mut by_key: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut failures = 0usize;
    for f in &files {
        buf.clear();
        if let Err(e) = agentlog::source::read_into(f, &mut buf) {
            if failures < 10 {
                eprintln!("{e}");
            }
            failures += 1;
            continue;
        }
        match parser.parse(&buf) {
            Ok(doc) => by_key
                .entry(key_of(doc.root()))
                .or_default()
                .push(buf.len()),
            Err(e) => {
                if failures < 10 {
                    eprintln!("{}: {e}", f.display());
                }
                failures += 1;
            }
        }
    }
    let mut all: Vec<usize> = by_key.values().flatten().copied().collect();
    all.sort_unstable();
    let total: usize = all.iter().sum();
    let n = all.len().max(1);
    // Ignore write errors (a closed pipe, as with `| head`).
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{} event files, {} bytes, mean {:.0}, median {}, {} unreadable",
        all.len(),
        total,
        total as f64 / n as f64,
        all.get(all.len() / 2).copied().unwrap_or(0),
        failures
    );
    let mut rows: Vec<_> = by_key.into_iter().collect();
    rows.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    let _ = writeln!(
        out,
        "{:<44} {:>7} {:>6} {:>8} {:>8} {:>8} {:>8}",
        "kind", "n", "%", "mean", "median", "min", "max"
    );
    for (k, mut v) in rows {
        v.sort_unstable();
        let sum: usize = v.iter().sum();
        let _ = writeln!(
            out,
            "{:<44} {:>7} {:>5.1}% {:>8.0} {:>8} {:>8} {:>8}",
            k,
            v.len(),
            100.0 * v.len() as f64 / n as f64,
            sum as f64 / v.len().max(1) as f64,
            v.get(v.len() / 2).copied().unwrap_or(0),
            v.first().copied().unwrap_or(0),
            v.last().copied().unwrap_or(0)
        );
    }
    if failures > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
