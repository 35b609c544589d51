//! Reading a conversation while a writer appends to it.
//!
//! - Atomic writers (temporary file, then rename): every read is a
//!   consistent prefix — events 0..k in order, ids matching, all complete.
//! - Plain writers (the file created, then written in chunks with pauses):
//!   every read is a prefix whose last event may be half-written; that one is
//!   reported malformed (never dropped, never a panic), and a later read
//!   picks it up once complete. A handshake makes one such observation
//!   certain; a free-running phase makes many.
//! - A file removed between listing and reading is reported with a typed
//!   error (`SourceError::Io`, `NotFound`); the removal is made certain by
//!   doing it from the reader's own callback (`Reader::read_into_with`),
//!   after the listing. No assertion depends on how threads are scheduled:
//!   the free-running phases check only what holds whatever the timing.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::Duration;

use agentlog::openhands::{Conversation, FileError, FileStatus, Reader};
use agentlog::source::SourceError;

const CONV: &str = "0123456789abcdef0123456789abcdef";
const STATE: &str =
    r#"{"id":"01234567-89ab-cdef-0123-456789abcdef","agent":{"kind":"Agent","llm":{"model":"m"}}}"#;

fn id(i: usize) -> String {
    format!("{i:08x}-0000-4000-8000-000000000000")
}

fn file_name(i: usize) -> String {
    format!("event-{i:05}-{}.json", id(i))
}

/// An event of a few hundred bytes, so chunked writes tear it mid-member.
fn body(i: usize) -> Vec<u8> {
    format!(
        r#"{{"kind":"MessageEvent","id":"{}","timestamp":"2026-01-01T00:00:00.{i:06}","source":"user","llm_message":{{"role":"user","content":[{{"type":"text","text":"{}"}}]}}}}"#,
        id(i),
        "message text ".repeat(20)
    )
    .into_bytes()
}

fn setup() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join(CONV);
    fs::create_dir_all(dir.join("events")).unwrap();
    fs::write(dir.join("base_state.json"), STATE).unwrap();
    (t, dir)
}

fn write_atomic(dir: &Path, i: usize) {
    let events = dir.join("events");
    let tmp = events.join(format!(".tmp-{i}"));
    let mut f = fs::File::create(&tmp).unwrap();
    f.write_all(&body(i)).unwrap();
    f.sync_all().unwrap();
    fs::rename(&tmp, events.join(file_name(i))).unwrap();
}

/// What one read showed.
#[derive(Debug, Default)]
struct Seen {
    /// Events read complete.
    complete: usize,
    /// The index of a half-written (malformed) last event, if any.
    torn: Option<usize>,
}

/// Checks one read: a prefix 0..k in order, ids matching, every event but
/// possibly the last complete and byte-identical to what was written; a
/// torn last event (`allow_torn`) reported malformed with its error.
fn check_read(conv: &Conversation, allow_torn: bool) -> Seen {
    let mut seen = Seen::default();
    let n = conv.len();
    for (i, e) in conv.events().enumerate() {
        assert_eq!(e.index(), i as u64);
        assert_eq!(e.file_id(), id(i), "ids in order");
        if e.is_ok() {
            assert!(seen.torn.is_none());
            assert_eq!(e.raw(), &body(i)[..], "a complete event is all there");
            assert_eq!(e.id(), Some(id(i).as_str()));
            seen.complete += 1;
            continue;
        }
        assert!(
            allow_torn && i + 1 == n,
            "only the last event of a plain writer may be torn (event {i} of {n})"
        );
        let err = e.error().expect("a torn event has an error");
        assert!(err.path().ends_with(file_name(i)));
        match err {
            // Created, nothing written yet.
            FileError::Source(SourceError::Empty { .. }) => {}
            FileError::Json { source, .. } => {
                assert!(source.offset().is_some_and(|o| o <= e.raw().len()));
                assert!(body(i).starts_with(e.raw()), "the torn bytes are a prefix");
            }
            other => panic!("event {i}: {other}"),
        }
        let f = conv.files().find(|f| f.index() == Some(i as u64)).unwrap();
        assert_eq!(f.status(), FileStatus::Malformed);
        seen.torn = Some(i);
    }
    assert!(conv.files().all(|f| f.status() != FileStatus::Gap));
    seen
}

#[test]
fn atomic_writer_every_read_is_a_complete_prefix() {
    let (_t, dir) = setup();
    let n = 300;
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let dir = dir.clone();
        let done = done.clone();
        thread::spawn(move || {
            for i in 0..n {
                write_atomic(&dir, i);
                if i % 16 == 0 {
                    thread::sleep(Duration::from_micros(200));
                }
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let mut reader = Reader::new();
    let mut conv = Conversation::new();
    let (mut reads, mut last) = (0, 0);
    loop {
        let finished = done.load(Ordering::SeqCst);
        reader.read_into(&dir, &mut conv).unwrap();
        let seen = check_read(&conv, false);
        assert!(
            seen.torn.is_none(),
            "an atomic writer never shows a torn file"
        );
        assert!(seen.complete >= last, "reads never go back");
        assert!(
            conv.sidecars().iter().all(|s| s.starts_with(".tmp-")),
            "temporary files are sidecars"
        );
        last = seen.complete;
        reads += 1;
        if finished {
            break;
        }
    }
    writer.join().unwrap();
    // However the reads and writes interleaved, the last read (begun after
    // the writer finished) saw every event.
    assert_eq!(last, n);
    eprintln!("{reads} reads while {n} events were written");
}

/// The atomic writer in lock step with the reader: after each rename the
/// next read shows exactly the events written; a rename landing while a
/// read is under way (after its listing, from the reader's own callback)
/// is not in that read, which stays a complete prefix, and is in the next.
#[test]
fn atomic_writer_in_lock_step() {
    use agentlog::openhands::Parsed;
    let (_t, dir) = setup();
    let mut reader = Reader::new();
    let mut conv = Conversation::new();
    let n = 6;
    for i in 0..n {
        write_atomic(&dir, i);
        reader.read_into(&dir, &mut conv).unwrap();
        let seen = check_read(&conv, false);
        assert_eq!((seen.complete, seen.torn), (i + 1, None));
    }
    // During a read: the events are listed before the first is read.
    let mut written = false;
    reader
        .read_into_with(&dir, &mut conv, |parsed, _| {
            if parsed == (Parsed::Event { index: 0 }) {
                write_atomic(&dir, n);
                written = true;
            }
        })
        .unwrap();
    assert!(written, "the callback saw the first event");
    let seen = check_read(&conv, false);
    assert_eq!(
        (seen.complete, seen.torn),
        (n, None),
        "listed before the rename"
    );
    reader.read_into(&dir, &mut conv).unwrap();
    let seen = check_read(&conv, false);
    assert_eq!(
        (seen.complete, seen.torn),
        (n + 1, None),
        "the next read has it"
    );
}

#[test]
fn plain_writer_torn_file_is_malformed_then_read() {
    let (_t, dir) = setup();
    let mut reader = Reader::new();
    let mut conv = Conversation::new();

    // Handshake: the writer stops mid-file until the reader has looked.
    let (to_reader, from_writer) = mpsc::channel::<usize>();
    let (to_writer, from_reader) = mpsc::channel::<()>();
    let writer = {
        let dir = dir.clone();
        thread::spawn(move || {
            for i in 0..3 {
                let b = body(i);
                let mut f = fs::File::create(dir.join("events").join(file_name(i))).unwrap();
                f.write_all(&b[..b.len() / 2]).unwrap();
                f.flush().unwrap();
                to_reader.send(i).unwrap();
                from_reader.recv().unwrap();
                f.write_all(&b[b.len() / 2..]).unwrap();
                f.flush().unwrap();
                to_reader.send(i).unwrap();
                from_reader.recv().unwrap();
            }
        })
    };
    for i in 0..3 {
        assert_eq!(from_writer.recv().unwrap(), i);
        reader.read_into(&dir, &mut conv).unwrap();
        let seen = check_read(&conv, true);
        assert_eq!(seen.torn, Some(i), "the half-written file is reported");
        assert_eq!(seen.complete, i);
        assert!(matches!(
            conv.event(i).unwrap().error(),
            Some(FileError::Json { .. })
        ));
        to_writer.send(()).unwrap();
        assert_eq!(from_writer.recv().unwrap(), i);
        reader.read_into(&dir, &mut conv).unwrap();
        let seen = check_read(&conv, true);
        assert_eq!(seen.torn, None, "the next read picks it up");
        assert_eq!(seen.complete, i + 1);
        to_writer.send(()).unwrap();
    }
    writer.join().unwrap();

    // Free running: chunks with pauses, the reader reading all along.
    let n = 60;
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let dir = dir.clone();
        let done = done.clone();
        thread::spawn(move || {
            for i in 3..n {
                let b = body(i);
                let mut f = fs::File::create(dir.join("events").join(file_name(i))).unwrap();
                for chunk in b.chunks(b.len() / 4 + 1) {
                    f.write_all(chunk).unwrap();
                    f.flush().unwrap();
                    thread::sleep(Duration::from_micros(300));
                }
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let (mut torn_seen, mut last) = (0, 0);
    let mut pending: Option<usize> = None;
    loop {
        let finished = done.load(Ordering::SeqCst);
        reader.read_into(&dir, &mut conv).unwrap();
        let seen = check_read(&conv, true);
        assert!(seen.complete >= last);
        if let Some(p) = pending
            && seen.complete > p
        {
            // Picked up once complete.
            pending = None;
        }
        if let Some(t) = seen.torn {
            torn_seen += 1;
            pending = Some(t);
        }
        last = seen.complete;
        if finished {
            break;
        }
    }
    writer.join().unwrap();
    reader.read_into(&dir, &mut conv).unwrap();
    let seen = check_read(&conv, false);
    assert_eq!(seen.complete, n, "every torn file was picked up");
    eprintln!("free-running: {torn_seen} reads showed a torn last event");
}

/// The last event's state in one read, checked: complete, gone between
/// listing and reading (a typed `NotFound` error, the file malformed), or
/// not listed at all; everything else always read.
#[derive(Debug, PartialEq, Eq)]
enum Last {
    Present,
    Vanished,
    Absent,
}

fn last_event(conv: &Conversation, n: usize, path: &Path) -> Last {
    assert!(
        conv.events().take(n - 1).all(|e| e.is_ok()),
        "every other event is read"
    );
    let last = n - 1;
    match conv.len() {
        l if l == n => {
            let e = conv.event(last).unwrap();
            match e.error() {
                None => {
                    assert_eq!(e.raw(), &body(last)[..]);
                    Last::Present
                }
                Some(FileError::Source(SourceError::Io { path: p, source })) => {
                    assert_eq!(p, path);
                    assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
                    assert_eq!(
                        conv.files()
                            .find(|f| f.index() == Some(last as u64))
                            .unwrap()
                            .status(),
                        FileStatus::Unreadable
                    );
                    Last::Vanished
                }
                Some(other) => panic!("{other}"),
            }
        }
        l => {
            assert_eq!(l, n - 1, "only the last file comes and goes");
            Last::Absent
        }
    }
}

#[test]
fn file_removed_between_listing_and_reading() {
    use agentlog::openhands::Parsed;
    // A conversation whose last file is removed from within the reader's
    // callback: after `events/` was listed (at the first event), or before
    // (at `base_state.json`, read before the listing). The first read must
    // report the listed file gone with a typed error; the second must not
    // list it; once back, it reads.
    let (_t, dir) = setup();
    let n = 8;
    for i in 0..n {
        write_atomic(&dir, i);
    }
    let last = n - 1;
    let path = dir.join("events").join(file_name(last));
    let mut reader = Reader::new();
    let mut conv = Conversation::new();
    for (when, want) in [
        (Parsed::Event { index: 0 }, Last::Vanished),
        (Parsed::State, Last::Absent),
    ] {
        let mut removed = false;
        reader
            .read_into_with(&dir, &mut conv, |parsed, _| {
                if parsed == when {
                    fs::remove_file(&path).unwrap();
                    removed = true;
                }
            })
            .unwrap();
        assert!(removed, "the callback ran at {when:?}");
        assert_eq!(last_event(&conv, n, &path), want, "removed at {when:?}");
        reader.read_into(&dir, &mut conv).unwrap();
        assert_eq!(last_event(&conv, n, &path), Last::Absent);
        write_atomic(&dir, last);
        reader.read_into(&dir, &mut conv).unwrap();
        assert_eq!(last_event(&conv, n, &path), Last::Present);
    }

    // Free running: a second thread removes and puts back the file all the
    // time, for a fixed number of reads. Whatever the timing, every read is
    // one of the three states above.
    let bytes = body(last);
    let stop = Arc::new(AtomicBool::new(false));
    let toggler = {
        let stop = stop.clone();
        let path = path.clone();
        let tmp = dir.join("events").join(".tmp-toggle");
        thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let _ = fs::remove_file(&path);
                thread::sleep(Duration::from_micros(50));
                fs::write(&tmp, &bytes).unwrap();
                fs::rename(&tmp, &path).unwrap();
                thread::sleep(Duration::from_micros(50));
            }
        })
    };
    let mut counts = [0usize; 3];
    for _ in 0..500 {
        reader.read_into(&dir, &mut conv).unwrap();
        counts[last_event(&conv, n, &path) as usize] += 1;
    }
    stop.store(true, Ordering::SeqCst);
    toggler.join().unwrap();
    eprintln!(
        "free-running: {} reads read the file, {} met it vanished, {} did not list it",
        counts[0], counts[1], counts[2]
    );
}
