//! The floor of `agentlog asf convert` as a whole program: what no
//! converter can leave out, done the plain way. It reads every file the
//! OpenHands reader reads (`base_state.json`, `meta.json`, the files of
//! `events/`) and builds simd-json's tape of each; computes the SHA-256
//! the format requires over the bytes `asf convert` writes (each line once)
//! and each `response`'s request tail (its members after `input`, from the
//! running hash of its settings and items, as a converter holds it; two at
//! a time where they share settings, as the converter hashes them:
//! `RequestHasher::hash_many`); and writes those bytes as the
//! same files the same way (a temporary file each, one `syncfs` per batch,
//! the renames, one flush of the directory: `agentlog::output::Batch`).
//!
//! The bytes come from a previous conversion's output directory. A second
//! thread loads each session (and rebuilds each request's running hash) while the
//! measuring thread hashes and writes the one before, at most two waiting: the
//! floor holds a few sessions at a time, as the converter holds one, and
//! the bytes it writes are as recently touched as the converter's. The CPU
//! time printed is the measuring thread's alone (`getrusage` of the thread;
//! of the process where there is no such call): the floor's work without
//! the loading. It is what the whole process of `asf convert` on the same
//! store is compared with (`benches/README.md`).
//!
//! ```text
//! agentlog asf convert STORE -o CONVERTED
//! cargo run --release --example asf_floor -- STORE CONVERTED OUT
//! ```

#[path = "../benches/support/floor.rs"]
mod floor;
#[path = "../benches/support/request_hashers.rs"]
mod request_hashers;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use agentlog::asf::RequestHasher;
use agentlog::output::{Batch, Output};
use sha2::{Digest, Sha256};

/// A converted session file: its name, its bytes, and the running hash of
/// each `response`'s request before its members after `input`.
struct Converted {
    name: String,
    bytes: Vec<u8>,
    requests: Vec<RequestHasher>,
}

/// User and system CPU time of the calling thread so far, in seconds (of
/// the process where the system has no per-thread count).
fn cpu() -> (f64, f64) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let who = libc::RUSAGE_THREAD;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let who = libc::RUSAGE_SELF;
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    (t(u.ru_utime), t(u.ru_stime))
}

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [store, converted, out] = args.as_slice() else {
        eprintln!("usage: asf_floor STORE CONVERTED OUT");
        return ExitCode::from(2);
    };
    // The converted files' names, sorted (not measured).
    let Ok(rd) = std::fs::read_dir(converted) else {
        eprintln!("asf_floor: cannot list {}", converted.display());
        return ExitCode::from(2);
    };
    let mut names: Vec<String> = rd
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    names.sort();
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("asf_floor: {}: {e}", out.display());
        return ExitCode::from(2);
    }

    let (u0, s0) = cpu();
    // Read and parse what the converter reads.
    let mut buf = Vec::with_capacity(1 << 16);
    let mut tape = floor::TapeFloor::default();
    let mut read = 0u64;
    let read_bytes = floor::read_all(store, &mut buf, |b| {
        read += 1;
        tape.parse(b);
    });
    // Hash and write what it writes, the sessions loaded by a second thread.
    let mut check = 0u64;
    let (mut lines, mut tails, mut written, mut files) = (0u64, 0u64, 0u64, 0u64);
    let mut pending = Batch::new();
    let (tx, rx) = std::sync::mpsc::sync_channel::<Converted>(2);
    let loader = std::thread::spawn({
        let converted = converted.clone();
        move || {
            for name in names {
                let Ok(bytes) = std::fs::read(converted.join(&name)) else {
                    continue;
                };
                let requests = request_hashers::request_hashers_of(&bytes);
                if tx
                    .send(Converted {
                        name,
                        bytes,
                        requests,
                    })
                    .is_err()
                {
                    return;
                }
            }
        }
    });
    for f in rx {
        for line in f.bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            check += u64::from(Sha256::digest(line)[0]);
            lines += 1;
        }
        let requests: Vec<&RequestHasher> = f.requests.iter().collect();
        for h in RequestHasher::hash_many(&requests) {
            check += u64::from(h.as_bytes()[7]);
            tails += 1;
        }
        let written_ok = Output::create_entry(&out.join(&f.name))
            .map_err(|e| e.to_string())
            .and_then(|mut o| {
                o.write_all(&f.bytes).map_err(|e| e.to_string())?;
                pending.add(o).map_err(|e| e.to_string())
            });
        if let Err(e) = written_ok {
            eprintln!("asf_floor: {e}");
            return ExitCode::from(2);
        }
        written += f.bytes.len() as u64;
        files += 1;
    }
    let _ = loader.join();
    if let Err(e) = pending.finish() {
        eprintln!("asf_floor: {e}");
        return ExitCode::from(2);
    }
    let (u1, s1) = cpu();
    let (user, sys) = (u1 - u0, s1 - s0);
    println!(
        "read {read} files ({read_bytes} bytes, {} tape nodes, {} not JSON); \
         hashed {lines} lines and {tails} request tails (check {check}); \
         wrote {files} files ({written} bytes)",
        tape.nodes, tape.errors,
    );
    println!(
        "floor CPU: user {user:.3} s, sys {sys:.3} s, total {:.3} s",
        user + sys
    );
    ExitCode::SUCCESS
}
