//! OC Chat store: listing a generated store and loading every chat log,
//! beside baselines on the same files in the same run.
//!
//! - `agentlog`: `SessionStore::list_sessions`, and `SessionStore::load_chat_log(name)`
//!   for every listed session (resolution by name, read, parse, owned
//!   value, validation).
//! - `serde_json`: the obvious Rust reader doing the same work: the same
//!   directory scans and newest-by-mtime choice, `std::fs::read`, then
//!   `serde_json::from_slice::<serde_json::Value>` (the listing takes the
//!   same fields out of the meta).
//! - `read_only`: the same scans and reads, no parsing (the I/O floor).
//!
//! The store has `OCCHAT_BENCH_SESSIONS` sessions (default 2,000, so that
//! `cargo bench --bench occhat` takes a couple of minutes; the figures in
//! `benches/README.md` are for 10,000), each a
//! meta and a chat log of 3 to 40 messages (user, assistant with usage,
//! tool calls and tool results), plus an archived earlier version for one
//! session in four, written once to a temporary directory.

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use agentlog::json::{Map, OwnedValue, Style};
use agentlog::occhat::{SessionStore, TimeZone};
use criterion::{Criterion, criterion_group, criterion_main};

fn obj(pairs: Vec<(&str, OwnedValue)>) -> OwnedValue {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.entries_mut().push((k.to_owned(), v));
    }
    OwnedValue::Object(m)
}

fn usage(p: i64, c: i64) -> OwnedValue {
    obj(vec![
        ("prompt_tokens", p.into()),
        ("completion_tokens", c.into()),
        ("total_tokens", (p + c).into()),
        ("prompt_cache_hit_tokens", (p / 2).into()),
        ("prompt_cache_miss_tokens", (p - p / 2).into()),
    ])
}

/// A deterministic pseudo-random sequence (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "index", "query", "the", "orders", "table", "scan", "latency", "cache", "function", "returns",
    "error", "value", "config", "stream", "parse", "token", "é", "日本", "user", "session",
];

fn text(rng: &mut Rng, words: u64) -> String {
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(if rng.below(12) == 0 { '\n' } else { ' ' });
        }
        s.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
    }
    s
}

fn write(path: &Path, v: &OwnedValue, mtime: SystemTime) {
    fs::write(path, v.to_string_styled(Style::INDENT2_UNICODE)).unwrap();
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}

fn generate(root: &Path, n: usize) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_744_000_000);
    for i in 0..n {
        let name = format!("session-{i:05}");
        let dir = root.join(&name);
        fs::create_dir_all(&dir).unwrap();
        let turns = 1 + rng.below(13);
        let mut messages = vec![obj(vec![
            ("role", "system".into()),
            (
                "content",
                "You are OC Chat, a concise coding assistant.".into(),
            ),
        ])];
        let (mut p, mut c) = (0i64, 0i64);
        for t in 0..turns {
            let w = 5 + rng.below(40);
            messages.push(obj(vec![
                ("role", "user".into()),
                ("content", text(&mut rng, w).into()),
            ]));
            if rng.below(3) == 0 {
                let id = format!("call_{i}_{t}");
                messages.push(obj(vec![
                    ("role", "assistant".into()),
                    ("content", OwnedValue::Null),
                    (
                        "tool_calls",
                        OwnedValue::Array(vec![obj(vec![
                            ("id", id.as_str().into()),
                            ("type", "function".into()),
                            (
                                "function",
                                obj(vec![
                                    ("name", "read_file".into()),
                                    ("arguments", "{\"path\": \"src/main.rs\"}".into()),
                                ]),
                            ),
                        ])]),
                    ),
                    ("usage", usage(900, 40)),
                ]));
                let w = 20 + rng.below(200);
                messages.push(obj(vec![
                    ("role", "tool".into()),
                    ("tool_call_id", id.as_str().into()),
                    ("name", "read_file".into()),
                    ("content", text(&mut rng, w).into()),
                ]));
            }
            let (tp, tc) = (500 + rng.below(9000) as i64, 20 + rng.below(900) as i64);
            p += tp;
            c += tc;
            let w = 10 + rng.below(150);
            messages.push(obj(vec![
                ("role", "assistant".into()),
                ("content", text(&mut rng, w).into()),
                ("usage", usage(tp, tc)),
            ]));
        }
        let stamp = format!("2025-04-{:02}--{:02}-{:02}-00", 1 + i % 28, i % 24, i % 60);
        let log_name = format!("{name}_{stamp}_chat_log.json");
        let stats = obj(vec![
            ("total_prompt_tokens", p.into()),
            ("total_completion_tokens", c.into()),
            ("total_tokens", (p + c).into()),
            ("prompt_cache_hit_tokens", (p / 2).into()),
            ("prompt_cache_miss_tokens", (p - p / 2).into()),
        ]);
        let log = obj(vec![
            ("session_name", name.as_str().into()),
            ("timestamp", "20250401_120000".into()),
            ("model", "deepseek-chat".into()),
            ("reasoning_effort", "high".into()),
            ("messages", OwnedValue::Array(messages)),
            ("usage", usage(p, c)),
        ]);
        let meta = obj(vec![
            ("session_name", name.as_str().into()),
            ("session_id", format!("id-{i}").into()),
            ("created", "20250401_120000".into()),
            ("last_modified", "20250401_120000".into()),
            ("model", "deepseek-chat".into()),
            ("reasoning_effort", "high".into()),
            (
                "system_prompt",
                "You are OC Chat, a concise coding assistant.".into(),
            ),
            ("stats", stats),
            (
                "chat_logs",
                OwnedValue::Array(vec![log_name.as_str().into()]),
            ),
            ("ui", obj(vec![])),
            ("last_turn_max_prompt_tokens", 0.into()),
            ("rollover_hint_shown", false.into()),
            ("token_profile", "balanced".into()),
            ("max_react_iterations", OwnedValue::Null),
            ("cache_turn_snapshots", OwnedValue::Array(vec![])),
            ("active_plan_id", OwnedValue::Null),
            ("generation_options", obj(vec![])),
            ("endpoint_name", "".into()),
            ("sandbox_root_override", OwnedValue::Null),
            ("legacy_event_slugs", OwnedValue::Array(vec![])),
            ("superseded_by", OwnedValue::Null),
        ]);
        let t = base + Duration::from_secs(i as u64 * 60);
        write(&dir.join(&log_name), &log, t);
        write(&dir.join(format!("{name}_{stamp}_meta.json")), &meta, t);
        if i % 4 == 0 {
            // An older version in the same directory, as after a crash
            // between writing and archiving: the newest must be chosen.
            let old = dir.join(format!("{name}_2025-03-01--00-00-00_chat_log.json"));
            write(&old, &log, t - Duration::from_secs(86_400));
            let arch = root.join("archive").join(&name);
            fs::create_dir_all(&arch).unwrap();
            write(
                &arch.join(format!("{name}_2025-03-01--00-00-00_meta.json")),
                &meta,
                t,
            );
        }
    }
}

/// The newest `*{suffix}` in `dir` by mtime (the same rule the store uses).
fn newest(dir: &Path, suffix: &str) -> Option<(PathBuf, u64)> {
    let mut best: Option<(SystemTime, PathBuf, u64)> = None;
    for e in fs::read_dir(dir).ok()?.flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().ends_with(suffix) {
            continue;
        }
        let path = dir.join(&name);
        let Ok(m) = fs::metadata(&path) else { continue };
        let t = m.modified().ok()?;
        if best
            .as_ref()
            .is_none_or(|(bt, bp, _)| (t, &path) > (*bt, bp))
        {
            best = Some((t, path, m.len()));
        }
    }
    best.map(|(_, p, l)| (p, l))
}

fn session_dirs(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            n != "archive" && n != "legacy"
        })
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

/// The serde_json listing: same scans, same fields.
fn list_serde(root: &Path) -> usize {
    let mut n = 0;
    for dir in session_dirs(root) {
        let Some((meta, _)) = newest(&dir, "_meta.json") else {
            continue;
        };
        let Ok(bytes) = fs::read(&meta) else { continue };
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        let Some(o) = v.as_object() else { continue };
        let size = newest(&dir, "_chat_log.json").map_or(0, |(_, l)| l);
        black_box((
            o.get("session_name").cloned(),
            o.get("model").cloned(),
            o.get("stats").cloned(),
            o.get("chat_logs").cloned(),
            o.get("reasoning_effort").cloned(),
            o.get("ui").cloned(),
            size,
        ));
        n += 1;
    }
    n
}

fn load_serde(root: &Path, names: &[String]) -> usize {
    let mut msgs = 0;
    for name in names {
        let (p, _) = newest(&root.join(name), "_chat_log.json").unwrap();
        let v: serde_json::Value = serde_json::from_slice(&fs::read(p).unwrap()).unwrap();
        msgs += v["messages"].as_array().map_or(0, Vec::len);
    }
    msgs
}

fn list_read_only(root: &Path) -> usize {
    let mut bytes = 0;
    for dir in session_dirs(root) {
        let Some((meta, _)) = newest(&dir, "_meta.json") else {
            continue;
        };
        bytes += fs::read(&meta).map_or(0, |b| b.len());
        bytes += newest(&dir, "_chat_log.json").map_or(0, |(_, l)| l as usize);
    }
    bytes
}

fn load_read_only(root: &Path, names: &[String]) -> usize {
    let mut bytes = 0;
    for name in names {
        let (p, _) = newest(&root.join(name), "_chat_log.json").unwrap();
        bytes += fs::read(p).unwrap().len();
    }
    bytes
}

fn bench(c: &mut Criterion) {
    let n: usize = std::env::var("OCCHAT_BENCH_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    generate(&root, n);
    let store = SessionStore::new(&root).with_time_zone(TimeZone::utc());
    let list = store.list_sessions();
    assert_eq!(list.sessions.len(), n);
    assert_eq!(list_serde(&root), n);
    let names: Vec<String> = list
        .sessions
        .iter()
        .map(|s| s.name_str().unwrap().to_owned())
        .collect();
    let total_msgs: usize = names
        .iter()
        .map(|nm| store.load_chat_log(nm).unwrap().messages().len())
        .sum();
    assert_eq!(total_msgs, load_serde(&root, &names));
    let bytes = load_read_only(&root, &names);
    eprintln!("occhat bench: {n} sessions, {total_msgs} messages, {bytes} chat-log bytes");

    let mut g = c.benchmark_group(format!("occhat_list_{n}"));
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("read_only", |b| b.iter(|| black_box(list_read_only(&root))));
    g.bench_function("serde_json", |b| b.iter(|| black_box(list_serde(&root))));
    g.bench_function("agentlog", |b| {
        b.iter(|| black_box(store.list_sessions().sessions.len()))
    });
    g.finish();

    let mut g = c.benchmark_group(format!("occhat_load_chat_logs_{n}"));
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("read_only", |b| {
        b.iter(|| black_box(load_read_only(&root, &names)))
    });
    g.bench_function("serde_json", |b| {
        b.iter(|| black_box(load_serde(&root, &names)))
    });
    g.bench_function("agentlog", |b| {
        b.iter(|| {
            let mut m = 0;
            for nm in &names {
                m += store.load_chat_log(nm).unwrap().messages().len();
            }
            black_box(m)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
