use super::*;

fn sample() -> Checkpoint {
    let mut c = Checkpoint {
        root: PathBuf::from("store"),
        canonical: PathBuf::from("/abs/store"),
        root_id: (1, 2),
        pattern: NamePattern::FiveOrMoreDigits,
        taken: 1_700_000_000_123_456_789,
        ..Checkpoint::default()
    };
    let st = Stamp {
        dev: 3,
        ino: 4,
        size: 5,
        mtime: -6,
        mtime_nsec: 999_999_999,
        ctime: Some((-5, 0)),
    };
    c.dirs.insert(
        PathBuf::new(),
        DirMark {
            stamp: Some(st),
            children: vec!["a".into()],
        },
    );
    c.conversations.insert(
        PathBuf::from("a"),
        &ConversationMark {
            id: "ab".into(),
            dir: st,
            events_dir: Some(st),
            next: 2,
            last: Some(FileMark {
                index: 1,
                name: "event-00001-abcdef12.json".into(),
                stamp: st,
            }),
            names: [0xab; 32],
            stamps: Some([0xcd; 32]),
            retry: vec![FileMark {
                index: 0,
                name: "event-00000-abcdef12.json".into(),
                stamp: st,
            }],
            state: Some(JsonMark {
                stamp: st,
                sha256: [0; 32],
            }),
            ..ConversationMark::default()
        },
    );
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let odd = PathBuf::from(std::ffi::OsStr::from_bytes(b"a/\xff"));
        c.conversations.insert(odd, &ConversationMark::default());
    }
    c
}

#[test]
fn round_trip() {
    let c = sample();
    let b = c.to_bytes();
    let back = Checkpoint::from_bytes(&b, Path::new("cp")).unwrap();
    assert_eq!(back, c);
}

#[test]
fn refuses() {
    let c = sample();
    let b = c.to_bytes();
    let p = Path::new("cp");
    // Any one byte of the body changed: corrupt.
    let nl = b.iter().position(|&x| x == b'\n').unwrap();
    for i in (nl + 1..b.len() - 1).step_by(7) {
        let mut x = b.clone();
        x[i] ^= 0x01;
        assert!(
            matches!(
                Checkpoint::from_bytes(&x, p),
                Err(CheckpointError::Corrupt { .. })
            ),
            "byte {i}"
        );
    }
    // Truncated anywhere: refused.
    for n in 0..b.len() - 1 {
        assert!(Checkpoint::from_bytes(&b[..n], p).is_err(), "length {n}");
    }
    let newer = String::from_utf8(b.clone())
        .unwrap()
        .replacen("\"version\":3", "\"version\":4", 1);
    assert!(matches!(
        Checkpoint::from_bytes(newer.as_bytes(), p),
        Err(CheckpointError::Version { found: 4, .. })
    ));
    // A version 2 file: no stamps' digest in its marks; read as a mark
    // without one.
    let mut v2 = sample();
    let marks: Vec<(PathBuf, ConversationMark)> = v2
        .conversations()
        .map(|(k, m)| (k.to_path_buf(), ConversationMark { stamps: None, ..m }))
        .collect();
    v2.conversations = marks.into_iter().collect();
    let body = String::from_utf8(v2.to_bytes()).unwrap();
    let (_, body) = body.trim_end().split_once('\n').unwrap();
    let body = body.replace(",\"stamps\":null", "");
    assert!(!body.contains("stamps"));
    let v2_file = format!(
        "{{\"format\":\"agentlog-checkpoint\",\"version\":2,\"sha256\":\"{}\"}}\n{}\n",
        sha256_hex(body.as_bytes()),
        body
    );
    assert_eq!(Checkpoint::from_bytes(v2_file.as_bytes(), p).unwrap(), v2);
    // A version 1 file: stamps of five members, no change time; read, its
    // stamps never taken as unchanged.
    let mut old = sample();
    let strip = |s: &mut Stamp| s.ctime = None;
    for d in old.dirs.values_mut() {
        d.stamp.as_mut().map(strip);
    }
    let marks: Vec<(PathBuf, ConversationMark)> = old
        .conversations()
        .map(|(k, mut m)| {
            strip(&mut m.dir);
            m.events_dir.as_mut().map(strip);
            m.subagents_dir.as_mut().map(strip);
            if let Some(f) = m.last.as_mut() {
                strip(&mut f.stamp);
            }
            m.retry.iter_mut().for_each(|f| strip(&mut f.stamp));
            m.stamps = None;
            if let Some(j) = m.state.as_mut() {
                strip(&mut j.stamp);
            }
            if let Some(j) = m.meta.as_mut() {
                strip(&mut j.stamp);
            }
            (k.to_path_buf(), m)
        })
        .collect();
    old.conversations = marks.into_iter().collect();
    let v1 =
        String::from_utf8(old.to_bytes())
            .unwrap()
            .replacen("\"version\":3", "\"version\":1", 1);
    assert!(!v1.contains("\"version\":3"));
    let read = Checkpoint::from_bytes(v1.as_bytes(), p).unwrap();
    assert_eq!(read, old);
    assert!(read.racy(&read.conversation("a").unwrap().dir));
    assert!(matches!(
        Checkpoint::from_bytes(b"{\"a\":1}\n{}", p),
        Err(CheckpointError::NotACheckpoint { .. })
    ));
    // A body that matches its digest but is not a checkpoint.
    let body = b"{\"root\":1}";
    let fake = format!(
        "{{\"format\":\"agentlog-checkpoint\",\"version\":1,\"sha256\":\"{}\"}}\n{}\n",
        sha256_hex(body),
        std::str::from_utf8(body).unwrap()
    );
    assert!(matches!(
        Checkpoint::from_bytes(fake.as_bytes(), p),
        Err(CheckpointError::Corrupt { .. })
    ));
}

#[cfg(unix)]
#[test]
fn saves_atomically_over_links_never_through_them() {
    let t = tempfile::tempdir().unwrap();
    let c = sample();
    let real = t.path().join("real.cp");
    let link = t.path().join("link.cp");
    std::os::unix::fs::symlink("real.cp", &link).unwrap();
    // A link, dangling or not, is not read as a checkpoint...
    assert!(matches!(
        Checkpoint::load_or_none(&link),
        Err(CheckpointError::Link { .. })
    ));
    // ...and a save replaces it by the file, its target left alone.
    c.save(&link).unwrap();
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_file());
    assert!(!real.exists());
    assert_eq!(Checkpoint::load(&link).unwrap(), c);
    fs::write(&real, b"precious").unwrap();
    let link2 = t.path().join("link2.cp");
    std::os::unix::fs::symlink("real.cp", &link2).unwrap();
    assert!(matches!(
        Checkpoint::load(&link2),
        Err(CheckpointError::Link { .. })
    ));
    c.save(&link2).unwrap();
    assert_eq!(fs::read(&real).unwrap(), b"precious");
    // An empty file is no checkpoint yet.
    let empty = t.path().join("empty.cp");
    fs::write(&empty, b"").unwrap();
    assert!(Checkpoint::load_or_none(&empty).unwrap().is_none());
    fs::remove_file(&real).unwrap();
    // A directory and a FIFO are never replaced.
    let d = t.path().join("dir.cp");
    fs::create_dir(&d).unwrap();
    assert!(matches!(c.save(&d), Err(CheckpointError::NotAFile { .. })));
    assert!(matches!(
        Checkpoint::load(&d),
        Err(CheckpointError::NotAFile { .. })
    ));
    let fifo = t.path().join("fifo.cp");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    assert!(matches!(
        c.save(&fifo),
        Err(CheckpointError::NotAFile { .. })
    ));
    assert!(matches!(
        Checkpoint::load(&fifo),
        Err(CheckpointError::NotAFile { .. })
    ));
    use std::os::unix::fs::FileTypeExt;
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    // No temporary file left.
    let left: Vec<_> = fs::read_dir(t.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("agentlog-tmp"))
        .collect();
    assert!(left.is_empty());
}

#[test]
fn stamps_digest_is_a_sum_of_terms() {
    let st = |ino: u64, ctime: i64| Stamp {
        dev: 1,
        ino,
        size: 10,
        mtime: 5,
        mtime_nsec: 6,
        ctime: Some((ctime, 0)),
    };
    let a = stamps_term("event-00000-a.json", &st(7, 9));
    let b = stamps_term("event-00001-b.json", &st(8, 9));
    let (mut ab, mut ba) = ([0u8; 32], [0u8; 32]);
    add256(&mut ab, &a);
    add256(&mut ab, &b);
    add256(&mut ba, &b);
    add256(&mut ba, &a);
    assert_eq!(ab, ba, "the order does not count");
    // A term taken out and another put in: the sum of the other files.
    let mut x = ab;
    sub256(&mut x, &b);
    assert_eq!(x, a);
    let c = stamps_term("event-00001-b.json", &st(8, 10));
    assert_ne!(c, b, "the change time counts");
    add256(&mut x, &c);
    assert_ne!(x, ab);
    sub256(&mut x, &c);
    add256(&mut x, &b);
    assert_eq!(x, ab);
    // Carries and borrows wrap around modulo 2^256.
    let mut m = [0xffu8; 32];
    add256(&mut m, &{
        let mut one = [0u8; 32];
        one[0] = 1;
        one
    });
    assert_eq!(m, [0; 32]);
    sub256(&mut m, &{
        let mut one = [0u8; 32];
        one[0] = 1;
        one
    });
    assert_eq!(m, [0xff; 32]);
}

/// The body as read from the tape does not depend on the order of the
/// members of an object, nor of the marks in a list; a path listed twice
/// keeps its last mark (what recording each in turn would leave).
#[test]
fn reads_any_order_and_keeps_the_last_of_a_repeated_path() {
    let c = sample();
    let mut v = c.to_value();
    let OwnedValue::Object(body) = &mut v else {
        unreachable!()
    };
    body.entries_mut().reverse();
    for (k, list) in body.entries_mut() {
        if k == "conversations" {
            let OwnedValue::Array(a) = list else {
                unreachable!()
            };
            a.reverse();
            for m in a.iter_mut() {
                if let OwnedValue::Object(o) = m {
                    o.entries_mut().reverse();
                }
            }
            // "a" again, with another ID: the later one wins.
            let mut again = a
                .iter()
                .find(|m| m.get("path").and_then(OwnedValue::as_str) == Some("a"))
                .cloned()
                .unwrap();
            if let OwnedValue::Object(o) = &mut again {
                for (k, val) in o.entries_mut() {
                    if k == "id" {
                        *val = OwnedValue::string("later");
                    }
                }
            }
            a.push(again);
        }
    }
    let bytes = to_file_bytes(FileKind::OpenHands, &v, 0);
    let back = Checkpoint::from_bytes(&bytes, Path::new("cp")).unwrap();
    assert_eq!(back.conversations.len(), c.conversations.len());
    assert_eq!(back.conversation("a").unwrap().id, "later");
    let mut want = c.clone();
    let mut m = want.conversation("a").unwrap();
    m.id = "later".into();
    want.conversations.insert(PathBuf::from("a"), &m);
    assert_eq!(back, want);
}
