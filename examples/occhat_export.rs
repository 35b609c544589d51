//! Exports an OC Chat session as Markdown, as OC Chat's `persistence.py`
//! writes it, to a file of your choosing (replaced atomically).
//! `examples/occhat-sessions/` is a small OC Chat sessions directory to try
//! it on (two sessions with archived snapshots, written by OC Chat's own
//! code).
//!
//! ```sh
//! cargo run --example occhat_export -- examples/occhat-sessions weekly-report /tmp/report.md
//! ```

use std::error::Error;
use std::path::Path;
use std::process::ExitCode;

use agentlog::occhat::SessionStore;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("occhat_export: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [sessions_dir, name, out] = args.as_slice() else {
        return Err("usage: occhat_export SESSIONS_DIR SESSION OUT.md".into());
    };
    let store = SessionStore::new(sessions_dir);
    let session = store.load_session(name)?;
    let written = store.export_markdown(&session, Some(Path::new(out)))?;
    println!(
        "{}: {} messages, {} tokens",
        written.display(),
        session.messages.len(),
        session.stats.total_tokens
    );
    Ok(())
}
