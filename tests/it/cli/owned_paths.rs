//! Files the tool names or owns are written inside their directory, never
//! through a link: `asf convert -o OUT_DIR`'s session files, and the
//! `--checkpoint` file. A link planted at such a name (to a file outside,
//! read-only or not, or dangling) is replaced by a regular file (a session
//! file) or refused (a checkpoint), and what it leads to is left as it was.
//! An empty checkpoint file is no checkpoint yet.

use crate::common;

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::Output;

use super::{p as s, run};

#[test]
fn asf_convert_replaces_links_in_out_dir_never_writes_through() {
    let store = common::corpus_dir().join("openhands/1.58.2/subagent");
    let t = tempfile::tempdir().unwrap();
    let out_dir = t.path().join("out");
    let first = run(&["asf", "convert", "--verbose", s(&store), "-o", s(&out_dir)]);
    assert_eq!(first.status.code(), Some(0));
    // `--verbose`: the path of each file written, then the summary line.
    let names: Vec<String> = String::from_utf8(first.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("converted "))
        .map(str::to_owned)
        .collect();
    assert!(names.len() >= 2, "{names:?}");
    let want: Vec<Vec<u8>> = names.iter().map(|n| fs::read(n).unwrap()).collect();
    // The first file a link to a read-only file outside OUT_DIR, the
    // second a dangling link to a name outside.
    let outside = t.path().join("outside");
    fs::create_dir(&outside).unwrap();
    let victim = outside.join("victim.txt");
    fs::write(&victim, b"precious\n").unwrap();
    fs::set_permissions(&victim, fs::Permissions::from_mode(0o444)).unwrap();
    let fresh = outside.join("fresh.txt");
    fs::remove_file(&names[0]).unwrap();
    symlink(&victim, &names[0]).unwrap();
    fs::remove_file(&names[1]).unwrap();
    symlink(&fresh, &names[1]).unwrap();
    let again = run(&["asf", "convert", s(&store), "-o", s(&out_dir)]);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(fs::read(&victim).unwrap(), b"precious\n");
    assert!(!fresh.exists(), "a dangling link's target is not created");
    for (n, w) in names.iter().zip(&want) {
        let m = fs::symlink_metadata(n).unwrap();
        assert!(m.file_type().is_file(), "{n}: a regular file in OUT_DIR");
        assert_eq!(&fs::read(n).unwrap(), w, "{n}");
    }
    // A directory at a session file's name: an error, nothing written.
    fs::remove_file(&names[0]).unwrap();
    fs::create_dir(&names[0]).unwrap();
    let o = run(&["asf", "convert", s(&store), "-o", s(&out_dir)]);
    assert_ne!(o.status.code(), Some(0));
    assert!(Path::new(&names[0]).is_dir());
}

fn export(args: &[&str]) -> Output {
    let mut a = vec!["export", "--jsonl"];
    a.extend_from_slice(args);
    run(&a)
}

#[test]
fn a_checkpoint_link_is_refused_never_written_through() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    common::copy_tree(&common::corpus_dir().join("openhands/1.31.2/chat"), &store);
    let outside = t.path().join("outside");
    fs::create_dir(&outside).unwrap();
    let victim = outside.join("victim.txt");
    fs::write(&victim, b"precious\n").unwrap();
    fs::set_permissions(&victim, fs::Permissions::from_mode(0o444)).unwrap();
    // A link to a file outside, and a dangling one.
    let link = t.path().join("cp");
    symlink(&victim, &link).unwrap();
    let o = export(&[s(&store), "--checkpoint", s(&link)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("symbolic link") && err.contains(s(&link)),
        "{err}"
    );
    assert_eq!(fs::read(&victim).unwrap(), b"precious\n");
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    let fresh = outside.join("fresh.cp");
    let dangling = t.path().join("cp2");
    symlink(&fresh, &dangling).unwrap();
    let o = export(&[s(&store), "--checkpoint", s(&dangling)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!fresh.exists());
    // A checkpoint in a directory that does not exist: the error names the
    // checkpoint, not a temporary file; nothing exported is lost (the run
    // fails, the next run exports it all).
    let missing = t.path().join("nodir/cp");
    let o = export(&[s(&store), "--checkpoint", s(&missing)]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(s(&missing)), "{err}");
    assert!(!err.contains("agentlog-tmp"), "{err}");
}

#[test]
fn an_empty_checkpoint_file_is_no_checkpoint_yet() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    common::copy_tree(&common::corpus_dir().join("openhands/1.31.2/chat"), &store);
    let cp = t.path().join("cp");
    fs::write(&cp, b"").unwrap();
    let o = export(&[s(&store), "--checkpoint", s(&cp)]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no checkpoint yet"), "{err}");
    let full = export(&[s(&store)]);
    assert_eq!(o.stdout, full.stdout, "a first run exports everything");
    assert!(fs::metadata(&cp).unwrap().len() > 0, "the checkpoint saved");
    let o = export(&[s(&store), "--checkpoint", s(&cp)]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
}
