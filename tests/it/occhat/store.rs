//! The store's rules, case by case: names that need sanitising, lookup
//! order, newest by mtime, BOMs, corrupt metas, archives (identical and
//! colliding), the refusal, the superseded mark, artifacts, the crash
//! signal, the marker, round trips of unknown members, local time.

use crate::common::occhat as occhat_support;

use std::fs;
use std::path::Path;

use agentlog::json::{OwnedValue, Style};
use agentlog::occhat::{
    ChatSession, LoadError, RecordKind, SaveError, SessionStore, TimeZone, TokenStats,
};
use occhat_support::{from_ns, put_meta, set_mtime, store_at};

const T0: u64 = 1_744_016_143_000_000_000; // 2025-04-07T08:55:43Z
const SEC: u64 = 1_000_000_000;

fn json(text: &str) -> OwnedValue {
    OwnedValue::parse(text.as_bytes()).unwrap()
}

fn session(name: &str, msgs: &[(&str, &str)]) -> ChatSession {
    let mut s = ChatSession::new(name, "deepseek-chat");
    for (role, content) in msgs {
        let mut m = agentlog::json::Map::new();
        m.insert("role", (*role).into());
        m.insert("content", (*content).into());
        s.messages.push(OwnedValue::Object(m));
    }
    s
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn names_that_need_sanitising() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, _) = store_at(&root, T0);
    let mut s = session("upstage/solar-pro4", &[("user", "hi")]);
    let meta = store.save_all(&mut s).unwrap().meta;
    assert_eq!(
        s.name, "upstage--solar-pro4",
        "the live session is normalised"
    );
    assert_eq!(
        meta,
        root.join("upstage--solar-pro4/upstage--solar-pro4_2025-04-07--08-55-43_meta.json")
    );
    assert!(
        !root.join("upstage").exists(),
        "one directory level, not two"
    );
    let list = store.list_sessions();
    assert_eq!(list.sessions[0].name_str(), Some("upstage--solar-pro4"));
    // Reachable by the raw name (separator path first, then the sanitised
    // directory), the canonical name and the stored name alike.
    for q in [
        "upstage/solar-pro4",
        "upstage--solar-pro4",
        " upstage/solar-pro4 ",
    ] {
        assert_eq!(
            store.resolve_record_path(q, RecordKind::Meta).unwrap(),
            meta,
            "{q}"
        );
        assert!(store.session_exists(q), "{q}");
    }
    // Reserved characters, device names, dots.
    for (raw, dir) in [("a:b", "a_b"), ("con", "con_"), ("..", "unnamed-session")] {
        let mut s = session(raw, &[]);
        let p = store.save_session_metadata(&mut s).unwrap();
        assert_eq!(p.parent().unwrap(), root.join(dir), "{raw}");
        assert_eq!(
            store
                .load_session_metadata(dir)
                .unwrap()
                .metadata
                .get("session_name"),
            Some(&OwnedValue::from(dir))
        );
    }
    // Archive directory uses the safe name too.
    store
        .save_all(&mut session("upstage/solar-pro4", &[]))
        .unwrap();
    assert!(root.join("archive/upstage--solar-pro4").is_dir());
}

#[test]
fn verbatim_directory_before_sanitised() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, clock) = store_at(&root, T0);
    store
        .save_all(&mut session("a:b", &[("user", "sanitised")]))
        .unwrap();
    // A pre-plan-225 record under the verbatim name (legal on POSIX).
    let verbatim = root.join("a:b");
    fs::create_dir_all(&verbatim).unwrap();
    clock.set(from_ns(T0 - 3600 * SEC));
    let mut old = session("x", &[("user", "verbatim")]);
    let (tmp_store, _) = store_at(tmp.path().join("scratch"), T0);
    let p = tmp_store.save_chat_log(&mut old).unwrap();
    fs::copy(&p, verbatim.join("a:b_2020-01-01--00-00-00_chat_log.json")).unwrap();
    let log = store.load_chat_log("a:b").unwrap();
    assert_eq!(
        log.messages()[0].get("content").unwrap().as_str(),
        Some("verbatim")
    );
    assert_eq!(
        store.name_lookup_dirs("a:b"),
        vec![root.join("a:b"), root.join("a_b")]
    );
    assert_eq!(store.name_lookup_dirs("plain"), vec![root.join("plain")]);
    // The verbatim directory has no meta: the meta comes from the
    // sanitised one (each kind is looked up on its own, as the seed does).
    assert!(
        store
            .resolve_record_path("a:b", RecordKind::Meta)
            .unwrap()
            .starts_with(root.join("a_b"))
    );
}

#[test]
fn newest_by_mtime_not_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let dir = root.join("s");
    fs::create_dir_all(&dir).unwrap();
    let a = dir.join("s_2025-01-01--00-00-00_meta.json");
    let b = dir.join("s_2024-01-01--00-00-00_meta.json");
    fs::write(&a, br#"{"session_name": "s", "model": "by-name"}"#).unwrap();
    fs::write(&b, br#"{"session_name": "s", "model": "by-mtime"}"#).unwrap();
    set_mtime(&a, from_ns(T0));
    set_mtime(&b, from_ns(T0 + SEC));
    let store = SessionStore::new(&root).with_time_zone(TimeZone::utc());
    assert_eq!(store.resolve_record_path("s", RecordKind::Meta).unwrap(), b);
    let list = store.list_sessions();
    assert_eq!(list.sessions[0].model, OwnedValue::from("by-mtime"));
    assert_eq!(list.sessions[0].last_modified, "2025-04-07 08:55");
    // Equal mtimes: the last in name order.
    set_mtime(&b, from_ns(T0));
    assert_eq!(store.resolve_record_path("s", RecordKind::Meta).unwrap(), a);
}

#[test]
fn byte_order_marks_are_tolerated() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let dir = root.join("bom");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("bom_2025-01-01--00-00-00_meta.json"),
        b"\xef\xbb\xbf{\"session_name\": \"bom\", \"model\": \"m\"}",
    )
    .unwrap();
    fs::write(
        dir.join("bom_2025-01-01--00-00-00_chat_log.json"),
        b"\xef\xbb\xbf{\"session_name\": \"bom\", \"messages\": [{\"role\": \"user\", \"content\": \"q\"}]}",
    )
    .unwrap();
    let store = SessionStore::new(&root).with_time_zone(TimeZone::utc());
    let list = store.list_sessions();
    assert_eq!(list.sessions.len(), 1);
    assert_eq!(list.sessions[0].model, OwnedValue::from("m"));
    let log = store.load_chat_log("bom").unwrap();
    assert!(log.validated);
    assert_eq!(log.messages().len(), 1);
    // Two BOMs: only one is stripped, as the seed strips one.
    fs::write(
        dir.join("bom_2025-01-01--00-00-00_meta.json"),
        b"\xef\xbb\xbf\xef\xbb\xbf{}",
    )
    .unwrap();
    let list = store.list_sessions();
    assert!(list.sessions.is_empty());
    match &list.skipped[0].error {
        LoadError::Json { source, .. } => assert_eq!(source.offset(), Some(3)),
        e => panic!("{e}"),
    }
}

#[test]
fn corrupt_and_odd_metas() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, _) = store_at(&root, T0);
    store
        .save_all(&mut session("ok", &[("user", "q")]))
        .unwrap();
    let put = |dir: &str, bytes: &[u8]| put_meta(&root, dir, bytes);
    put("bad-json", b"{\"session_name\": ");
    put("empty", b"");
    put("minimal", b"{}");
    put(
        "weird",
        br#"{"session_name": 7, "model": null, "stats": [1], "ui": 0, "chat_logs": "x"}"#,
    );
    fs::create_dir_all(root.join("no-meta")).unwrap();
    fs::write(root.join("no-meta/readme.txt"), b"x").unwrap();
    fs::write(root.join("stray-file.json"), b"{}").unwrap();
    fs::create_dir_all(root.join("legacy/x")).unwrap();
    fs::write(root.join("legacy/x/x_meta.json"), b"{}").unwrap();
    let list = store.list_sessions();
    let names: Vec<String> = list.sessions.iter().map(|s| s.name.to_string()).collect();
    // "minimal" has no session_name: the directory's name; "weird" keeps
    // its number, model null, stats from a non-object are zeros, a falsy
    // ui is {}.
    assert_eq!(names, ["\"minimal\"", "\"ok\"", "7"]);
    let minimal = &list.sessions[0];
    assert_eq!(minimal.model, OwnedValue::from("?"));
    assert_eq!(minimal.reasoning_effort, OwnedValue::from("high"));
    assert_eq!(minimal.chat_logs.to_string(), "[]");
    assert_eq!(minimal.chat_log_size_bytes, 0);
    let weird = &list.sessions[2];
    assert!(weird.model.is_null());
    assert_eq!(weird.stats, TokenStats::default());
    assert_eq!(weird.ui.to_string(), "{}");
    assert_eq!(weird.chat_logs, OwnedValue::from("x"));
    assert_eq!(list.skipped.len(), 2, "{:?}", list.skipped);
    assert!(
        matches!(&list.skipped[0].error, LoadError::Json { source, .. } if source.offset().is_some())
    );
    assert!(matches!(&list.skipped[1].error, LoadError::Read(_)));
    // A meta that does not validate is returned raw.
    let m = store.load_session_metadata("weird").unwrap();
    assert!(!m.validated);
    assert_eq!(m.metadata.get("session_name"), Some(&json("7")));
    let m = store.load_session_metadata("minimal").unwrap();
    assert!(!m.validated, "session_name is required");
    assert_eq!(m.metadata.to_string(), "{}");
    // Errors are typed, with the path.
    let e = store.load_session_metadata("bad-json").unwrap_err();
    assert!(
        e.path()
            .unwrap()
            .ends_with("bad-json_2025-01-01--00-00-00_meta.json")
    );
    assert!(!e.is_not_found());
    assert!(
        store
            .load_session_metadata("/nonexistent/x.json")
            .unwrap_err()
            .is_not_found()
    );
}

#[test]
fn archive_identical_and_colliding() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, clock) = store_at(&root, T0);
    let mut s = session("s", &[("user", "one")]);
    let first = store.save_chat_log(&mut s).unwrap();
    let first_bytes = fs::read(&first).unwrap();
    let fname = first.file_name().unwrap().to_owned();
    let archive = root.join("archive/s");

    // An identical copy already archived under the same name: the old file
    // is just removed, nothing added.
    fs::create_dir_all(&archive).unwrap();
    fs::write(archive.join(&fname), &first_bytes).unwrap();
    clock.set(from_ns(T0 + 10 * SEC));
    store.save_chat_log(&mut s).unwrap();
    assert_eq!(names_in(&archive), [fname.to_string_lossy().into_owned()]);
    assert_eq!(names_in(&root.join("s")).len(), 1);

    // A different file under the same name: a __1 name, then __2.
    let second = root.join("s/s_2025-04-07--08-55-53_chat_log.json");
    let second_name = "s_2025-04-07--08-55-53_chat_log.json";
    fs::write(archive.join(second_name), b"{\"other\": 1}").unwrap();
    fs::write(
        archive.join("s_2025-04-07--08-55-53_chat_log__1.json"),
        b"{\"other\": 2}",
    )
    .unwrap();
    let second_bytes = fs::read(&second).unwrap();
    clock.set(from_ns(T0 + 20 * SEC));
    store.save_chat_log(&mut s).unwrap();
    assert_eq!(
        fs::read(archive.join("s_2025-04-07--08-55-53_chat_log__2.json")).unwrap(),
        second_bytes
    );

    // Dedup is against the unsuffixed name only, as in the seed: a file
    // equal to a __N copy still gets a new counter.
    let third = root.join("s/s_2025-04-07--08-56-03_chat_log.json");
    let third_bytes = fs::read(&third).unwrap();
    fs::write(
        archive.join("s_2025-04-07--08-56-03_chat_log.json"),
        b"{\"x\": 0}",
    )
    .unwrap();
    fs::write(
        archive.join("s_2025-04-07--08-56-03_chat_log__1.json"),
        &third_bytes,
    )
    .unwrap();
    clock.set(from_ns(T0 + 30 * SEC));
    store.save_chat_log(&mut s).unwrap();
    assert_eq!(
        fs::read(archive.join("s_2025-04-07--08-56-03_chat_log__2.json")).unwrap(),
        third_bytes
    );

    // Two saves in the same second: the first version is archived under
    // its own name, the second is live under the same name.
    let mut t = session("t", &[("user", "v1")]);
    let p1 = store.save_chat_log(&mut t).unwrap();
    let v1 = fs::read(&p1).unwrap();
    t.messages
        .push(json(r#"{"role": "assistant", "content": "v2"}"#));
    let p2 = store.save_chat_log(&mut t).unwrap();
    assert_eq!(p1, p2);
    assert_ne!(fs::read(&p2).unwrap(), v1);
    assert_eq!(
        fs::read(root.join("archive/t").join(p1.file_name().unwrap())).unwrap(),
        v1
    );

    // Exports: Markdown archives every *_export.* (HTML too); HTML archives
    // only *_export.html.
    let md1 = store.export_markdown(&t, None).unwrap();
    let html1 = store.export_html(&t, None).unwrap();
    clock.set(from_ns(T0 + 40 * SEC));
    let html2 = store.export_html(&t, None).unwrap();
    assert!(md1.exists() && !html1.exists() && html2.exists());
    assert!(
        root.join("archive/t")
            .join(html1.file_name().unwrap())
            .exists()
    );
    clock.set(from_ns(T0 + 50 * SEC));
    let md2 = store.export_markdown(&t, None).unwrap();
    assert!(!md1.exists() && !html2.exists() && md2.exists());
}

#[test]
fn refusal_after_a_failed_load() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, clock) = store_at(&root, T0);
    let mut s = session(
        "s",
        &[
            ("system", "sys"),
            ("user", "a"),
            ("assistant", "b"),
            ("user", "c"),
        ],
    );
    store.save_all(&mut s).unwrap();
    // Corrupt the chat log: loading the session marks the failure.
    let log = store.resolve_record_path("s", RecordKind::ChatLog).unwrap();
    fs::write(&log, b"{\"session_name\": \"s\", \"messages\": [").unwrap();
    let mut loaded = store.load_session("s").unwrap();
    assert!(loaded.load_failed);
    assert!(loaded.messages.is_empty());
    loaded
        .messages
        .push(json(r#"{"role": "system", "content": "sys"}"#));
    clock.set(from_ns(T0 + 60 * SEC));
    let err = store.save_chat_log(&mut loaded).unwrap_err();
    assert!(matches!(err, SaveError::Refused { ref name } if name == "s"));
    assert!(
        err.to_string()
            .starts_with("Refusing to save chat log for 's'")
    );
    // save_all still saves the metadata.
    let all = store.save_all(&mut loaded).unwrap();
    assert!(all.chat_log.is_none() && all.refused.is_some());
    assert_eq!(all.report_lines().len(), 2);
    assert!(all.report_lines()[0].starts_with("[Chat log NOT saved: Refusing"));
    assert_eq!(
        fs::read(&log).unwrap(),
        b"{\"session_name\": \"s\", \"messages\": ["
    );
    // Three messages: no longer near-empty, the save goes through.
    loaded
        .messages
        .push(json(r#"{"role": "user", "content": "x"}"#));
    loaded
        .messages
        .push(json(r#"{"role": "assistant", "content": "y"}"#));
    assert!(store.save_chat_log(&mut loaded).is_ok());
    assert!(
        root.join("archive/s")
            .join(log.file_name().unwrap())
            .exists(),
        "the corrupt log is archived, not lost"
    );
}

#[test]
fn superseded_mark() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, clock) = store_at(&root, T0);
    let mut s = session("old", &[("user", "q")]);
    s.meta_extra.insert("zz_custom", json("[1, 2.50]"));
    let meta = store.save_all(&mut s).unwrap().meta;
    let before = fs::read(&meta).unwrap();
    assert!(!store.mark_record_superseded("never-saved", "x").unwrap());
    clock.set(from_ns(T0 + SEC));
    assert!(store.mark_record_superseded("old", "new/name").unwrap());
    let after = store.load_session_metadata("old").unwrap();
    assert_eq!(after.path, meta, "same file, rewritten");
    assert_eq!(
        after.metadata.get("superseded_by"),
        Some(&OwnedValue::from("new--name"))
    );
    let keys: Vec<&str> = after
        .metadata
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys.last(), Some(&"zz_custom"), "members keep their places");
    assert_eq!(keys.iter().position(|k| *k == "superseded_by"), Some(20));
    assert_eq!(
        fs::read(root.join("archive/old").join(meta.file_name().unwrap())).unwrap(),
        before,
        "the previous bytes are archived"
    );
    // A record that is not an object cannot be marked.
    let d = root.join("arr");
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("arr_2025-01-01--00-00-00_meta.json"), b"[]").unwrap();
    assert!(store.mark_record_superseded("arr", "x").is_err());
}

#[test]
fn tool_artifacts() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, clock) = store_at(&root, T0);
    // Same instant, same tool: two distinct files (the seed's random suffix
    // plus a no-clobber publish).
    let a = store.save_tool_artifact("s", "read file/x", "A").unwrap();
    let b = store.save_tool_artifact("s", "read file/x", "B").unwrap();
    assert_ne!(a, b);
    assert_eq!(fs::read(&a).unwrap(), b"A");
    assert_eq!(fs::read(&b).unwrap(), b"B");
    let name = a.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("s_2025-04-07--08-55-43_tool_read_file_x_1744016143000000000_"),
        "{name}"
    );
    assert!(name.ends_with(".txt"));
    let uni = store.save_tool_artifact("s", "grép-ü_1", "").unwrap();
    assert!(uni.to_string_lossy().contains("_tool_grép-ü_1_"));
    clock.set(from_ns(T0 + SEC));
    let c = store.save_tool_artifact("s", "t", "C").unwrap();
    for p in [&a, &b, &uni] {
        set_mtime(p, from_ns(T0));
    }
    set_mtime(&c, from_ns(T0 + 10 * SEC));
    assert_eq!(store.find_latest_artifact("s"), Some(c.clone()));
    // Ties: the first in name order.
    set_mtime(&a, from_ns(T0 + 10 * SEC));
    let first = if a < c { a } else { c };
    assert_eq!(store.find_latest_artifact("s"), Some(first));
}

#[test]
fn crash_signal_and_marker() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, _) = store_at(&root, T0);
    assert_eq!(store.read_crash_signal(), None, "no session");
    store.save_all(&mut session("b", &[])).unwrap();
    store.save_all(&mut session("a", &[])).unwrap();
    let ma = store.resolve_record_path("a", RecordKind::Meta).unwrap();
    let mb = store.resolve_record_path("b", RecordKind::Meta).unwrap();
    set_mtime(&ma, from_ns(T0));
    set_mtime(&mb, from_ns(T0));
    // A tie goes to the first in name order.
    let sig = store.read_crash_signal().unwrap();
    assert_eq!(sig.last_session_name, OwnedValue::from("a"));
    assert_eq!(
        sig.to_value().to_string(),
        r#"{"last_session_name":"a","last_modified":"2025-04-07 08:55"}"#
    );
    set_mtime(&mb, from_ns(T0 + SEC));
    assert_eq!(
        store.read_crash_signal().unwrap().last_session_name,
        OwnedValue::from("b")
    );
    let marker = store.write_clean_exit_marker().unwrap();
    assert_eq!(
        fs::read_to_string(&marker).unwrap(),
        "{\n  \"timestamp\": \"2025-04-07T08:55:43\"\n}"
    );
    set_mtime(&marker, from_ns(T0 + SEC));
    assert_eq!(
        store.read_crash_signal(),
        None,
        "marker as new as the newest meta"
    );
    // Python compares float seconds: 1 ns older is still "as new".
    set_mtime(&marker, from_ns(T0 + SEC - 1));
    assert_eq!(store.read_crash_signal(), None, "equal as Python floats");
    set_mtime(&marker, from_ns(T0 + SEC - 1_000_000));
    assert!(store.read_crash_signal().is_some(), "marker older");
}

#[test]
fn unknown_members_survive_a_load_and_save() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let dir = root.join("rt");
    fs::create_dir_all(&dir).unwrap();
    // Written by a newer OC Chat: members this code does not know, at the
    // top level and inside messages, with floats, non-ASCII and nesting.
    let meta = r#"{
  "session_name": "rt",
  "future_top": {"nested": [1, 2.5, "ü"], "flag": true},
  "session_id": "id-1",
  "created": "20250101_000000",
  "model": "m",
  "reasoning_effort": "low",
  "system_prompt": "sys",
  "stats": {"total_tokens": 5, "extra_counter": 9},
  "chat_logs": [],
  "ui": {"show_reasoning": true},
  "max_react_iterations": 12,
  "active_plan_id": "plan-7",
  "generation_options": {"temperature": 0.7},
  "z_last": null
}"#;
    let log = r#"{
  "session_name": "rt",
  "timestamp": "20250101_000000",
  "model": "m",
  "reasoning_effort": "low",
  "messages": [{"role": "user", "content": "q", "attachments": [{"kind": "img", "ratio": 1.25}]}],
  "usage": {},
  "log_extra": ["keep", "me"]
}"#;
    fs::write(dir.join("rt_2025-01-01--00-00-00_meta.json"), meta).unwrap();
    fs::write(dir.join("rt_2025-01-01--00-00-00_chat_log.json"), log).unwrap();
    let (store, _) = store_at(&root, T0);
    let mut s = store.load_session("rt").unwrap();
    assert!(!s.load_failed);
    assert_eq!(s.reasoning_effort, "low");
    assert_eq!(s.stats.total_tokens, 5);
    assert_eq!(s.max_react_iterations, json("12"));
    let saved = store.save_all(&mut s).unwrap();
    let new_meta = OwnedValue::parse(&fs::read(&saved.meta).unwrap()).unwrap();
    let new_log = OwnedValue::parse(&fs::read(saved.chat_log.unwrap()).unwrap()).unwrap();
    let old_meta = json(meta);
    for k in [
        "future_top",
        "z_last",
        "session_id",
        "created",
        "ui",
        "generation_options",
        "active_plan_id",
    ] {
        assert_eq!(new_meta.get(k), old_meta.get(k), "{k}");
    }
    // Unknown members come after the seed's own, in their order.
    let keys: Vec<&str> = new_meta
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(&keys[21..], ["future_top", "z_last"]);
    assert_eq!(new_log.get("log_extra"), json(log).get("log_extra"));
    assert_eq!(new_log.get("messages"), json(log).get("messages"));
    // The text of the kept members is what Python writes.
    let text = String::from_utf8(fs::read(&saved.meta).unwrap()).unwrap();
    assert!(
        text.contains(
            "  \"future_top\": {\n    \"nested\": [\n      1,\n      2.5,\n      \"ü\"\n    ],"
        ),
        "{text}"
    );
    // stats is rebuilt from the five counters, as the seed's to_dict does.
    assert_eq!(new_meta.get("stats").unwrap().as_object().unwrap().len(), 5);
    // Loading what was saved and saving again is a fixed point.
    let mut again = store.load_session("rt").unwrap();
    let (store2, _) = store_at(&root, T0 + 60 * SEC);
    let p = store2.save_session_metadata(&mut again).unwrap();
    let a = OwnedValue::parse(&fs::read(&p).unwrap()).unwrap();
    let mut b = new_meta.clone();
    b.as_object_mut()
        .unwrap()
        .insert("last_modified", a.get("last_modified").unwrap().clone());
    assert_eq!(
        a.to_string_styled(Style::INDENT2_UNICODE),
        b.to_string_styled(Style::INDENT2_UNICODE)
    );
}

#[test]
fn stamps_use_the_time_zone() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, _) = store_at(&root, T0);
    let store = store.with_time_zone(TimeZone::from_posix("CET-1CEST,M3.5.0,M10.5.0/3").unwrap());
    let mut s = session("tz", &[]);
    let p = store.save_session_metadata(&mut s).unwrap();
    // 08:55:43 UTC is 10:55:43 in Paris in April (CEST).
    assert!(
        p.ends_with("tz_2025-04-07--10-55-43_meta.json"),
        "{}",
        p.display()
    );
    let v = OwnedValue::parse(&fs::read(&p).unwrap()).unwrap();
    assert_eq!(
        v.get("last_modified"),
        Some(&OwnedValue::from("20250407_105543"))
    );
    set_mtime(&p, from_ns(T0));
    assert_eq!(
        store.list_sessions().sessions[0].last_modified,
        "2025-04-07 10:55"
    );
}

#[test]
fn written_json_is_what_python_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, _) = store_at(&root, T0);
    let mut s = session("py", &[]);
    s.messages.push(json(
        r#"{"role": "assistant", "content": "é \u2028 \u0001 \"q\"", "n": [1E2, -0, 1.50, 1e400, NaN, 12345678901234567890123], "d": {"k": 1, "k": 2}}"#,
    ));
    s.system_prompt = Some("日本".into());
    let p = store.save_chat_log(&mut s).unwrap();
    let text = fs::read_to_string(&p).unwrap();
    let expected_msg = "    {\n      \"role\": \"assistant\",\n      \"content\": \"é \u{2028} \\u0001 \\\"q\\\"\",\n      \"n\": [\n        100.0,\n        0,\n        1.5,\n        Infinity,\n        NaN,\n        12345678901234567890123\n      ],\n      \"d\": {\n        \"k\": 2\n      }\n    }";
    assert!(text.contains(expected_msg), "{text}");
    assert!(!text.ends_with('\n'));
    let p = store.save_session_metadata(&mut s).unwrap();
    let text = fs::read_to_string(&p).unwrap();
    assert!(text.contains("\"system_prompt\": \"日本\""));
    assert!(text.contains("\"max_react_iterations\": null"));
}
