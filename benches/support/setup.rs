//! Setting up what a bench measures: sizes from the environment, a
//! generated store (announced on stderr), and stores built once under a
//! cache directory. Shared by the store benches (`cold`, `incr`, `rescan`,
//! `follow_memory`).
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use agentlog::synth::{GenConfig, write_store};

/// The environment variable `name` as a number, else `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Generates a store of `cfg` at `dir` and says on stderr what it holds.
pub fn generate(dir: &Path, cfg: &GenConfig) {
    let s = write_store(dir, cfg).expect("generate");
    eprintln!(
        "generated {} conversations + {} sub-agents, {} files, {:.1} MB",
        s.conversations,
        s.subagents,
        s.files,
        s.bytes as f64 / 1e6
    );
}

/// The store `name` under the cache directory (`AGENTLOG_BENCH_CACHE`,
/// default `/tmp/agentlog-bench-cache`), built by `build` when it is not
/// there whole yet.
pub fn cached(name: &str, build: impl FnOnce(&Path)) -> PathBuf {
    let cache = std::env::var_os("AGENTLOG_BENCH_CACHE")
        .map_or_else(|| PathBuf::from("/tmp/agentlog-bench-cache"), PathBuf::from);
    fs::create_dir_all(&cache).expect("cache directory");
    let dir = cache.join(name);
    let done = cache.join(format!("{name}.done"));
    if !done.exists() {
        if dir.exists() {
            fs::remove_dir_all(&dir).expect("remove a partial store");
        }
        let t = Instant::now();
        build(&dir);
        fs::write(&done, b"").expect("mark");
        eprintln!("{name}: built in {:.1} s", t.elapsed().as_secs_f64());
    }
    dir
}
