//! `agentlog asf convert PATH... -o OUT_DIR [--report]`: OpenHands
//! conversations (a store, a conversation directory or a file of one; every
//! sub-agent's conversation too) as ASF session files, one
//! `<session id>.jsonl` per conversation in OUT_DIR (sub-agents beside
//! their parent, naming it in `parent_session`), each written to a
//! temporary file and renamed into place.
//!
//! Standard output: the path of each file written, one a line; with
//! `--report`, instead, one JSON object per source event with the keys
//! `session`, `event`, `kind`, `outcome` (`mapped`, `kept-extension`,
//! `dropped`) and `detail`. Exit status 0 when everything converted, 1 when
//! a conversation could not be read or converted (the others are), 2 on a
//! PATH or OUT_DIR that cannot be used.

use std::path::{Path, PathBuf};

use agentlog::convert::openhands::{Options, convert_with, session_id};
use agentlog::openhands::Reader;

use crate::out::{Fail, Obj, Out, Res, Status, error};
use crate::target::{Target, resolve, walk};

/// Arguments of `asf convert`.
#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    /// OpenHands stores, conversation directories or files of one.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The directory the session files go to (created if missing).
    #[arg(short = 'o', long = "out", value_name = "OUT_DIR")]
    out_dir: PathBuf,
    /// Print what each source event became (JSON lines) instead of the files.
    #[arg(long)]
    report: bool,
}

/// Runs `asf convert`.
pub fn run(a: ConvertArgs, out: &mut Out) -> Res<u8> {
    std::fs::create_dir_all(&a.out_dir)
        .map_err(|e| Fail::Fatal(format!("{}: {e}", a.out_dir.display())))?;
    let mut status = Status::OK;
    let mut reader = Reader::new();
    let mut conv = agentlog::openhands::Conversation::default();
    let mut parser = agentlog::json::Parser::new();
    for path in &a.paths {
        let dirs = match resolve(path) {
            Ok(Target::OpenHands { dirs, .. }) => dirs,
            Ok(Target::OcChat { root }) => {
                return Err(Fail::Fatal(format!(
                    "{}: an OC Chat sessions directory; `asf convert` converts OpenHands conversations",
                    root.display()
                )));
            }
            Err(e) => return Err(Fail::Fatal(e)),
        };
        for top in dirs {
            walk(&mut reader, &mut conv, &mut parser, &top, |node| {
                let c = match node.conv {
                    Ok(c) => c,
                    Err(e) => {
                        error(&format!("{}: {e}", node.dir.display()));
                        status.raise(Status::PROBLEMS);
                        return Ok(());
                    }
                };
                let options = Options {
                    parent_session: node.parent.map(session_id),
                };
                match convert_with(c, &options) {
                    Ok(done) => {
                        let file = a.out_dir.join(format!("{}.jsonl", done.session_id));
                        write(&file, &done.bytes)?;
                        if a.report {
                            for row in &done.report {
                                out.json_line(
                                    &Obj::new()
                                        .put("session", done.session_id.as_str())
                                        .put("event", row.event.as_str())
                                        .put("kind", row.kind.as_str())
                                        .put("outcome", row.outcome.code())
                                        .put("detail", row.outcome.to_string())
                                        .done(),
                                )?;
                            }
                        } else {
                            out.line(&file.display().to_string())?;
                        }
                    }
                    Err(e) => {
                        error(&format!("{}: {e}", node.dir.display()));
                        status.raise(Status::PROBLEMS);
                    }
                }
                Ok(())
            })?;
        }
    }
    Ok(status.code())
}

fn write(path: &Path, bytes: &[u8]) -> Res<()> {
    let mut f = Out::file(path)?;
    f.bytes(bytes)?;
    f.finish()
}
