//! `agentlog asf convert`'s writes attacked (its files go through
//! `output::Batch`: temporary files, one flush of their data, then the
//! renames): a disk that fills while a batch is written, the process killed
//! at every moment of a run, and a second writer that takes no lock. In
//! each case every name in OUT_DIR holds its old file or its new one, never
//! a part, and a rerun completes the conversion.

use crate::common;
use crate::common::occhat_writes::Tmpfs;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn corpus() -> PathBuf {
    common::corpus_dir().join("openhands")
}

fn convert(out: &Path) -> Output {
    convert_command(out).output().expect("runs")
}

/// `agentlog asf convert` of the corpus into `out`, not started.
fn convert_command(out: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agentlog"));
    c.args(["asf", "convert"])
        .arg(corpus())
        .arg("-o")
        .arg(out)
        .stdin(Stdio::null());
    c
}

/// The files of a directory by name, temporary files left by a killed run
/// (`output::is_temporary_name`) apart.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| !agentlog::output::is_temporary_name(n))
        .map(|n| {
            let bytes = fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

/// Temporary files in a directory.
fn temporaries(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| agentlog::output::is_temporary_name(n))
        .collect()
}

/// The conversion's files, made in a scratch directory.
fn expected(scratch: &Path) -> BTreeMap<String, Vec<u8>> {
    let out = scratch.join("expected");
    let o = convert(&out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let f = files(&out);
    assert!(f.len() > 10, "the corpus converts to many files");
    f
}

/// Earlier versions of every file at its name in `out`: the expected bytes
/// with a line of their own after them, so that an old file and a new one
/// can be told apart.
fn put_prior(out: &Path, want: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    fs::create_dir_all(out).unwrap();
    want.iter()
        .map(|(n, b)| {
            let mut old = b.clone();
            old.extend_from_slice(b"{\"an\":\"earlier version\"}\n");
            fs::write(out.join(n), &old).unwrap();
            (n.clone(), old)
        })
        .collect()
}

/// Every name holds its old file or its new one, whole; no other name.
fn old_or_new(
    now: &BTreeMap<String, Vec<u8>>,
    old: &BTreeMap<String, Vec<u8>>,
    new: &BTreeMap<String, Vec<u8>>,
    what: &str,
) {
    for (n, b) in now {
        assert!(
            old.get(n) == Some(b) || new.get(n) == Some(b),
            "{what}: {n} holds neither its old file nor its new one ({} bytes)",
            b.len()
        );
    }
    for n in old.keys() {
        assert!(now.contains_key(n), "{what}: {n} is gone");
    }
}

#[test]
fn a_full_disk_leaves_every_old_file_and_no_temporary_one() {
    let tmp = tempfile::tempdir().unwrap();
    let want = expected(tmp.path());
    let total: usize = want.values().map(Vec::len).sum();
    let test = common::test_name(
        module_path!(),
        "a_full_disk_leaves_every_old_file_and_no_temporary_one",
    );
    // Room for the old files and less than half the new ones: the batch's
    // temporary files cannot all be written.
    let size = total + total / 2;
    let Some(fs_) = Tmpfs::mount(&tmp.path().join("mnt"), &format!("size={size}"), &test) else {
        return;
    };
    let out = fs_.path.join("out");
    let old = put_prior(&out, &want);
    let o = convert(&out);
    assert!(!o.status.success(), "the disk was full");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("No space left"), "{stderr}");
    assert_eq!(files(&out), old, "every old file kept, byte for byte");
    assert_eq!(
        temporaries(&out),
        Vec::<String>::new(),
        "no temporary file left"
    );
    // Room again: a rerun completes the conversion.
    let st = Command::new("mount")
        .args(["-o", &format!("remount,size={}", 3 * total)])
        .arg(&fs_.path)
        .status()
        .unwrap();
    assert!(st.success());
    let o = convert(&out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(files(&out), want);
}

#[test]
fn killed_at_any_moment_every_name_holds_a_whole_file_and_a_rerun_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let want = expected(tmp.path());
    let out = tmp.path().join("out");
    let old = put_prior(&out, &want);
    for delay_ms in (0..=240).step_by(8) {
        let mut child = convert_command(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        child.wait().unwrap();
        old_or_new(
            &files(&out),
            &old,
            &want,
            &format!("killed after {delay_ms} ms"),
        );
    }
    let o = convert(&out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(files(&out), want, "a rerun completes the conversion");
}

#[test]
fn two_writers_without_a_lock_leave_whole_files() {
    let tmp = tempfile::tempdir().unwrap();
    let want = expected(tmp.path());
    let out = tmp.path().join("out");
    let old = put_prior(&out, &want);
    let spawn = || {
        convert_command(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    for o in [&a, &b] {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    old_or_new(&files(&out), &old, &want, "two writers");
    assert_eq!(files(&out), want, "both finished: every file is new");
    assert_eq!(temporaries(&out), Vec::<String>::new());
}
