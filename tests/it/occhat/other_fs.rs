//! Issue 12, items 7 and 8, on real file systems (root only; otherwise each
//! test prints why it skips): `archive/` on another file system (a tmpfs
//! mounted on it: every link into it fails with EXDEV), and a disk that
//! fills up between the chat log and the meta of one save (a small tmpfs
//! as the store, filled to the page).

use crate::common::occhat_writes;

use std::fs;
use std::io::Write;
use std::path::Path;

use occhat_writes::*;

#[test]
fn recover_with_the_archive_on_another_file_system() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    two_saves(&root, "s");
    // Move the archive onto a tmpfs.
    let saved = tmp.path().join("archive-copy");
    fs::rename(root.join("archive"), &saved).unwrap();
    let Some(_mnt) = Tmpfs::mount(&root.join("archive"), "size=4m", "archive on tmpfs") else {
        return;
    };
    fs::create_dir_all(root.join("archive/s")).unwrap();
    for e in fs::read_dir(saved.join("s")).unwrap().flatten() {
        fs::copy(e.path(), root.join("archive/s").join(e.file_name())).unwrap();
    }
    let before = versions(&root);
    let out = occhat(&root, &["recover", "s", "--choice", "drop"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_kept(&root, &before, "archive on another file system");
    assert_eq!(live(&root.join("s"), "_chat_log.json").len(), 1);
    assert_eq!(live(&root.join("s"), "_meta.json").len(), 1);
    let scratch = snapshot(&root).keys().any(|p| is_scratch(p));
    assert!(!scratch, "{:#?}", snapshot(&root));
    // The archived copies are complete and keep their times.
    let out = occhat(&root, &["export-md", "s"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let out = occhat(&root, &["export-md", "s"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_kept(&root, &before, "exports");
}

fn free_pages(path: &Path) -> u64 {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    st.f_bavail as u64 * st.f_frsize as u64 / 4096
}

/// Fills the file system of `dir` until exactly `pages` pages are free.
fn fill_to(dir: &Path, pages: u64) -> fs::File {
    let mut f = fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![7u8; 4096];
    while f.write_all(&chunk).is_ok() {}
    let mut len = f.metadata().unwrap().len() / 4096 * 4096;
    f.set_len(len).unwrap();
    while free_pages(dir) < pages {
        len -= 4096;
        f.set_len(len).unwrap();
    }
    assert_eq!(free_pages(dir), pages);
    f
}

#[test]
fn a_full_disk_in_the_middle_of_a_save_is_completed_by_a_rerun() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let Some(_mnt) = Tmpfs::mount(&root, "size=2m", "full disk") else {
        return;
    };
    // Room for the new chat log and `extra` pages more: with 0 the disk is
    // full before the chat log (or, for a writer without a journal, right
    // after it, before the meta); with 1, before the meta.
    for extra in [0, 1, 2] {
        for e in fs::read_dir(&root).unwrap().flatten() {
            fs::remove_dir_all(e.path())
                .or_else(|_| fs::remove_file(e.path()))
                .unwrap();
        }
        let mut s = agentlog::occhat::ChatSession::new("s", "m");
        let big = "x".repeat(60_000);
        s.messages = vec![msg("system", "sys"), msg("user", &big)];
        store_at(&root, T0).save_all(&mut s).unwrap();
        s.messages.push(msg("assistant", "two"));
        s.messages.push(msg("user", "three"));
        store_at(&root, T0 + MIN).save_all(&mut s).unwrap();
        let before = versions(&root);
        let log = live(&root.join("s"), "_chat_log.json").pop().unwrap();
        let log_pages = fs::metadata(&log).unwrap().len().div_ceil(4096);
        let filler = fill_to(&root, log_pages + extra);
        let what = format!("{extra} page(s) to spare");
        let out = occhat(&root, &["recover", "s", "--choice", "drop"]);
        println!(
            "{what}: first run: {}",
            String::from_utf8_lossy(if out.status.success() {
                &out.stdout
            } else {
                &out.stderr
            })
            .trim()
        );
        if out.status.code() != Some(0) {
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(err.contains("No space left"), "{what}: {}", describe(&out));
            assert!(
                !err.contains(".occhat-tmp"),
                "{what}: names a temporary file: {err}"
            );
            assert!(
                err.contains("_meta.json:")
                    || err.contains("_chat_log.json:")
                    || err.contains(".occhat-pending:"),
                "{what}: names the real file: {err}"
            );
        }
        assert_kept(&root, &before, &what);
        // Room again: a rerun completes the save.
        drop(filler);
        fs::remove_file(root.join("filler")).unwrap();
        let out = occhat(&root, &["recover", "s", "--choice", "drop"]);
        assert_eq!(out.status.code(), Some(0), "{what}: {}", describe(&out));
        assert_kept(&root, &before, &what);
        let metas = live(&root.join("s"), "_meta.json");
        let logs = live(&root.join("s"), "_chat_log.json");
        assert_eq!(
            (metas.len(), logs.len()),
            (1, 1),
            "{what}: {:#?}",
            snapshot(&root)
        );
        let meta = json(&metas[0]);
        let names = meta.get("chat_logs").unwrap().as_array().unwrap();
        assert_eq!(
            names[0].as_str().unwrap(),
            logs[0].file_name().unwrap().to_str().unwrap(),
            "{what}: the meta names the live chat log"
        );
        let log = json(&logs[0]);
        assert_eq!(
            log.get("messages").unwrap().as_array().unwrap().len(),
            3,
            "{what}"
        );
        let scratch = snapshot(&root).keys().any(|p| is_scratch(p));
        assert!(!scratch, "{what}: {:#?}", snapshot(&root));
    }
}
