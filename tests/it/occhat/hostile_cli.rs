//! Issue 12, items 1, 2, 4 and 6, through the command: layouts that lead
//! the writer back into itself or out of the store, sessions whose meta
//! names another one, unsafe flat names in a migration, and a `Chat_logs`
//! symlink. Every case checks that no version is lost (the hash of every
//! file, archived copies included, before and after) and that nothing is
//! written where it must not be.

use crate::common::occhat_writes;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use occhat_writes::*;

fn refused_and_unchanged(root: &Path, args: &[&str], what: &str) {
    let before = snapshot(root);
    let out = occhat(root, args);
    assert_ne!(out.status.code(), Some(0), "{what}: {}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refused"), "{what}: {}", describe(&out));
    assert_eq!(snapshot(root), before, "{what}: the store changed");
}

// 1. An archive leading back to the live file.

#[test]
fn archive_dir_a_symlink_to_the_session_dir_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "s");
    fs::remove_dir_all(root.join("archive/s")).unwrap();
    symlink("../s", root.join("archive/s")).unwrap();
    let before = versions(&root);
    refused_and_unchanged(&root, &["recover", "s", "--choice", "drop"], "recover");
    refused_and_unchanged(&root, &["export-md", "s"], "export-md");
    assert_kept(&root, &before, "archive/s -> s");
}

#[test]
fn session_dir_a_symlink_into_its_archive_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "s");
    // The live files move into archive/s and s becomes a link to it.
    for e in fs::read_dir(root.join("s")).unwrap().flatten() {
        let to = root.join("archive/s").join(e.file_name());
        if !to.exists() {
            fs::rename(e.path(), to).unwrap();
        }
    }
    fs::remove_dir_all(root.join("s")).unwrap();
    symlink("archive/s", root.join("s")).unwrap();
    let before = versions(&root);
    refused_and_unchanged(&root, &["recover", "s", "--choice", "drop"], "recover");
    refused_and_unchanged(&root, &["export-md", "s"], "export-md");
    assert_kept(&root, &before, "s -> archive/s");
}

#[test]
fn archive_root_a_symlink_out_of_the_store_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "s");
    let outside = tmp.path().join("elsewhere");
    fs::rename(root.join("archive"), &outside).unwrap();
    symlink(&outside, root.join("archive")).unwrap();
    let outside_before = snapshot(&outside);
    refused_and_unchanged(&root, &["recover", "s", "--choice", "drop"], "recover");
    assert_eq!(snapshot(&outside), outside_before);
}

/// An archived entry that is a symlink to the live file is no copy of it:
/// the live file is archived under a `__N` name, never deleted.
#[test]
fn archived_entry_a_symlink_to_the_live_file_is_not_a_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "s");
    for live_file in live(&root.join("s"), ".json") {
        let name = live_file.file_name().unwrap();
        let entry = root.join("archive/s").join(name);
        let _ = fs::remove_file(&entry);
        symlink(Path::new("../../s").join(name), &entry).unwrap();
    }
    let before = versions(&root);
    let out = occhat(&root, &["recover", "s", "--choice", "drop"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_kept(&root, &before, "archived symlink");
    assert_eq!(live(&root.join("s"), "_chat_log.json").len(), 1);
    assert_eq!(live(&root.join("s"), "_meta.json").len(), 1);
}

/// An archived entry that is a hard link to the live file is a real copy:
/// the live name may go, the bytes stay reachable.
#[test]
fn archived_entry_a_hard_link_to_the_live_file_keeps_the_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "s");
    for live_file in live(&root.join("s"), ".json") {
        let entry = root.join("archive/s").join(live_file.file_name().unwrap());
        let _ = fs::remove_file(&entry);
        fs::hard_link(&live_file, &entry).unwrap();
    }
    let before = versions(&root);
    let out = occhat(&root, &["recover", "s", "--choice", "drop"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_kept(&root, &before, "archived hard link");
}

// 2. The session named inside the meta, not the one asked for.

fn set_recorded_name(root: &Path, dir: &str, name: Option<&str>) {
    for meta in live(&root.join(dir), "_meta.json") {
        let text = String::from_utf8(fs::read(&meta).unwrap()).unwrap();
        let line = format!("\"session_name\": \"{dir}\",");
        assert!(text.contains(&line), "{text}");
        let new = match name {
            Some(raw) => text.replace(&line, &format!("\"session_name\": {raw},")),
            None => text.replace(&format!("{line}\n  "), ""),
        };
        let mtime = fs::metadata(&meta).unwrap().modified().unwrap();
        fs::write(&meta, new).unwrap();
        fs::File::options()
            .write(true)
            .open(&meta)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
    }
}

#[test]
fn writes_go_to_the_resolved_directory_whatever_the_meta_names() {
    for recorded in [
        Some("\"b\""),
        Some("null"),
        Some("7"),
        Some("\"..\""),
        Some("\"archive\""),
        Some("\"legacy\""),
        None,
    ] {
        let what = format!("session_name {recorded:?}");
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("sessions");
        two_saves(&root, "a");
        two_saves(&root, "b");
        fs::create_dir_all(root.join("legacy")).unwrap();
        set_recorded_name(&root, "a", recorded);
        let others = |root: &Path| {
            snapshot(root)
                .into_iter()
                .filter(|(p, _)| !p.starts_with("a/") && !p.starts_with("archive/a"))
                .filter(|(p, _)| p != "a")
                .collect::<Vec<_>>()
        };
        let before_others = others(&root);
        let before = versions(&root);
        let out = occhat(&root, &["recover", "a", "--choice", "drop"]);
        assert_eq!(out.status.code(), Some(0), "{what}: {}", describe(&out));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let exported = occhat(&root, &["export-md", "a"]);
        assert_eq!(
            exported.status.code(),
            Some(0),
            "{what}: {}",
            describe(&exported)
        );
        assert_eq!(others(&root), before_others, "{what}: wrote outside a/");
        assert!(
            err.contains("names the session"),
            "{what}: {}",
            describe(&out)
        );
        assert_kept(&root, &before, &what);
        assert_eq!(live(&root.join("a"), "_export.md").len(), 1, "{what}");
        let logs = live(&root.join("a"), "_chat_log.json");
        assert_eq!(logs.len(), 1, "{what}");
        let m = json(&logs[0]);
        assert_eq!(m.get("messages").unwrap().as_array().unwrap().len(), 3);
        assert!(!root.join("unnamed-session").exists(), "{what}");
    }
}

// 4. migrate and unsafe names.

#[test]
fn migrate_with_unsafe_flat_names() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("store").join("sessions");
    fs::create_dir_all(root.join("Chat_logs")).unwrap();
    let long = "x".repeat(240);
    for (i, stem) in ["..", ".", "", long.as_str(), "ok", "archive"]
        .iter()
        .enumerate()
    {
        let p = root.join(format!("{stem}.json"));
        fs::write(
            &p,
            format!("{{\"session_name\": \"n{i}\", \"model\": \"m\"}}"),
        )
        .unwrap();
        let t = occhat_writes::T0 + i as u64 * occhat_writes::MIN;
        fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_nanos(t))
            .unwrap();
    }
    fs::write(root.join("Chat_logs/ok_log.json"), "{\"messages\": []}").unwrap();
    let before = json_versions(&root);
    let out = occhat(&root, &["migrate", "--json"]);
    // Errors in the summary: exit 1, the summary printed.
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = summary["errors"].as_array().unwrap();
    // `.json` has the stem `.json` (a dot file has no suffix), the
    // directory it would need is the flat file itself; a 240-byte stem
    // makes a file name too long; `archive` is reserved.
    assert_eq!(errors.len(), 3, "{summary}");
    for bad in [long.as_str(), "archive", ""] {
        let flat = format!("{bad}.json: ");
        assert!(
            errors
                .iter()
                .any(|e| e.as_str().unwrap().starts_with(&flat)),
            "{flat} {summary}"
        );
    }
    assert_eq!(summary["migrated"], 3, "{summary}");
    // Nothing outside the sessions directory, nothing at its root but
    // directories and the two kept flat files.
    let store: Vec<_> = fs::read_dir(tmp.path().join("store"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(store, ["sessions"]);
    for e in fs::read_dir(&root).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(
            e.path().is_dir()
                || name == format!("{long}.json")
                || name == "archive.json"
                || name == ".json",
            "{name} at the root"
        );
    }
    assert_kept_json(&root, &before, "migrate");
    // Every migrated meta is listed.
    let out = occhat(&root, &["list", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // `..json` and `...json` both map to `unnamed-session/` (two metas,
    // the newer listed), `ok.json` to `ok/`.
    assert_eq!(list.as_array().unwrap().len(), 2, "{list}");
    assert_eq!(live(&root.join("unnamed-session"), "_meta.json").len(), 2);
    assert_eq!(live(&root.join("ok"), "_chat_log.json").len(), 1);
    let temp_left = snapshot(&root).keys().any(|p| is_scratch(p));
    assert!(!temp_left, "{:#?}", snapshot(&root));
}

// 6. Symlinks out of the store.

#[test]
fn migrate_refuses_a_chat_logs_symlink_out_of_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::create_dir_all(&root).unwrap();
    fs::write(outside.join("x_log.json"), "{\"messages\": []}").unwrap();
    fs::write(outside.join("someone-else.json"), "{\"keep\": 1}").unwrap();
    fs::write(root.join("x.json"), "{\"session_name\": \"x\"}").unwrap();
    symlink(&outside, root.join("Chat_logs")).unwrap();
    let outside_before = snapshot(&outside);
    refused_and_unchanged(&root, &["migrate", "--json"], "migrate");
    assert_eq!(snapshot(&outside), outside_before);
    // legacy/ a symlink out of the store: refused too.
    fs::remove_file(root.join("Chat_logs")).unwrap();
    fs::create_dir_all(root.join("Chat_logs")).unwrap();
    fs::write(root.join("Chat_logs/orphan.json"), "{}").unwrap();
    symlink(&outside, root.join("legacy")).unwrap();
    refused_and_unchanged(&root, &["migrate"], "migrate, legacy a symlink");
    assert_eq!(snapshot(&outside), outside_before);
}
