//! `agentlog asf convert PATH... -o OUT_DIR [--report]`: OpenHands
//! conversations (a store, a conversation directory or a file of one; every
//! sub-agent's conversation too) and OC Chat sessions (a sessions
//! directory: every session it lists) as ASF session files, one
//! `<session id>.jsonl` per conversation in OUT_DIR (sub-agents beside
//! their parent, naming it in `parent_session`), each written to a
//! temporary file in OUT_DIR and renamed into place once its bytes are
//! durable (a symbolic link at `OUT_DIR/<session id>.jsonl` is replaced by
//! the file, never written through: the files the command names are created
//! inside OUT_DIR, as [`agentlog::output::OutputPath::classify_entry`]
//! says; a directory, device or FIFO there is an error). The files are
//! written in batches ([`agentlog::output::Batch`]): a batch's temporary
//! files are made durable together (one `syncfs` where the kernel reports
//! write-back errors through it, else one `fsync` each), then renamed;
//! OUT_DIR is flushed once, after the last rename (so the renames are
//! durable once the command has exited, whatever its status; a name holds
//! its old file or its new one, never a part, at every moment before). A
//! file's path is printed once it is renamed into place.
//!
//! Standard output: one summary line (`converted N conversations: M session
//! files in OUT_DIR`, and how many could not be converted); with
//! `--verbose`, first the path of each file written, one a line; with
//! `--json`, instead, one JSON object per file written, `{"session",
//! "path"}`; with `--report`, instead of the files (nothing is written, and
//! `-o` is not needed), one JSON object per source event with the keys
//! `session`, `event`, `kind`, `outcome` (`mapped`, `kept-extension`,
//! `dropped`) and `detail`. A progress bar on standard error while it works
//! (a terminal only). Exit status 0 when everything converted, 1 when a
//! conversation could not be read or converted (the others are), 2 on a
//! PATH or OUT_DIR that cannot be used.
//!
//! One session id, one file: a conversation or session whose session id one
//! converted earlier in the run already has (a copied conversation
//! directory or sub-agent, a conversation named by its UUID in both
//! spellings, the same session in two PATHs) is not converted again: the
//! first one's file stays, and the later one is named on standard error and
//! counted as not converted (exit status 1). Before, the later one's file
//! replaced the earlier one's without a word.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use agentlog::convert::Converted;
use agentlog::convert::openhands::{Options, ParsedEvents, convert_parsed, session_id};
use agentlog::occhat::SessionStore;
use agentlog::openhands::{Parsed, Reader};
use agentlog::output::{Batch, Output};

use crate::out::{Fail, Obj, Out, Res, Status, error, plural};
use crate::progress::Progress;
use crate::target::{Target, nothing_found, resolve_listed, walk_with};

/// Arguments of `asf convert`.
#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    /// OpenHands stores, conversation directories or files of one, or OC Chat sessions directories.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The directory the session files go to (created if missing).
    #[arg(
        short = 'o',
        long = "out",
        value_name = "OUT_DIR",
        required_unless_present = "report"
    )]
    out_dir: Option<PathBuf>,
    /// Print what each source event became (JSON lines) instead of writing the files.
    #[arg(long, conflicts_with_all = ["verbose", "json"])]
    report: bool,
    /// Print the path of each file written, then the summary.
    #[arg(short, long, conflicts_with = "json")]
    verbose: bool,
    /// One JSON object per file written (`session`, `path`), no summary.
    #[arg(long)]
    json: bool,
}

/// What the conversion did, for the summary line.
#[derive(Default)]
struct Tally {
    /// Conversations and sessions converted (sub-agents included).
    converted: u64,
    /// Those that could not be read or converted.
    failed: u64,
    /// Those not converted because their session id was converted
    /// earlier in the run.
    repeated: u64,
}

/// Where the converted sessions go: written into a directory, or reported.
struct Sink<'a> {
    args: &'a ConvertArgs,
    out: &'a mut Out,
    pending: Batch,
    /// The files added to `pending` and not yet renamed, in order: their
    /// session ids and paths, printed once renamed.
    waiting: std::collections::VecDeque<(String, PathBuf)>,
    tally: Tally,
    /// Each session id converted so far, with what it was converted from.
    claimed: std::collections::HashMap<String, PathBuf>,
}

/// Runs `asf convert`.
pub fn run(a: ConvertArgs, out: &mut Out) -> Res<u8> {
    let mut targets = Vec::new();
    let mut status = Status::OK;
    for path in &a.paths {
        // Each conversation is read once and converted: the reads take
        // discovery's listings.
        let target = resolve_listed(path).map_err(Fail::Fatal)?;
        if let Some(msg) = nothing_found(path, &target) {
            crate::out::error(&msg);
            status.raise(Status::PROBLEMS);
            continue;
        }
        targets.push((path, target));
    }
    if let (Some(dir), false) = (&a.out_dir, a.report) {
        std::fs::create_dir_all(dir).map_err(|e| {
            Fail::Fatal(format!("{}: {e} (give another -o OUT_DIR)", dir.display()))
        })?;
    }
    let total: u64 = targets
        .iter()
        .map(|(_, t)| match t {
            Target::OpenHands { dirs, .. } => dirs.len() as u64,
            _ => 0,
        })
        .sum();
    let progress = Progress::new(total, "conversations");
    let mut sink = Sink {
        args: &a,
        out,
        pending: Batch::new(),
        waiting: Default::default(),
        tally: Tally::default(),
        claimed: Default::default(),
    };
    let mut reader = Reader::new();
    let mut conv = agentlog::openhands::Conversation::default();
    let mut parser = agentlog::json::Parser::new();
    for (path, target) in targets {
        let (dirs, events) = match target {
            Target::OpenHands { dirs, events, .. } => (dirs, events),
            Target::OcChat { root } => {
                occhat(&root, &mut sink, &mut status)?;
                continue;
            }
            Target::Asf { .. } => {
                crate::out::error(&format!(
                    "{}: already Agent Session Format; nothing to convert",
                    path.display()
                ));
                status.raise(Status::FATAL);
                continue;
            }
        };
        // Each event as the reader parsed it, for the conversion: one for
        // the whole store, emptied by each conversion (and cleared when a
        // conversation read is not converted).
        let parsed = RefCell::new(ParsedEvents::new());
        let mut events = events.into_iter();
        for top in dirs {
            if let Some(listed) = events.next().flatten() {
                reader.prime_events(&top, listed);
            }
            let on_doc = |p: Parsed, doc: &agentlog::json::Document<'_>| {
                if let Parsed::Event { index } = p {
                    parsed.borrow_mut().add(index, doc);
                }
            };
            walk_with(&mut reader, &mut conv, &mut parser, &top, on_doc, |node| {
                let mut parsed = parsed.borrow_mut();
                let c = match node.conv {
                    Ok(c) => c,
                    Err(e) => {
                        parsed.clear();
                        error(&format!("{}: {e}", node.dir.display()));
                        sink.tally.failed += 1;
                        status.raise(Status::PROBLEMS);
                        return Ok(());
                    }
                };
                if !sink.claim(session_id(c.name()), node.dir) {
                    parsed.clear();
                    status.raise(Status::PROBLEMS);
                    return Ok(());
                }
                let options = Options {
                    parent_session: node.parent.map(session_id),
                    subsessions: c.subagents().iter().map(|n| session_id(n)).collect(),
                };
                match convert_parsed(c, &options, &mut parsed) {
                    Ok(done) => {
                        sink.emit(&done)?;
                        parsed.recycle(done.bytes);
                    }
                    Err(e) => {
                        error(&format!("{}: {e}", node.dir.display()));
                        sink.tally.failed += 1;
                        status.raise(Status::PROBLEMS);
                    }
                }
                Ok(())
            })?;
            progress.inc(1);
        }
    }
    progress.finish();
    let done = std::mem::take(&mut sink.pending)
        .finish()
        .map_err(|e| Fail::Fatal(e.to_string()))?;
    sink.written(done)?;
    sink.summary()?;
    Ok(status.code())
}

/// Converts every session of an OC Chat sessions directory.
fn occhat(root: &Path, sink: &mut Sink<'_>, status: &mut Status) -> Res<()> {
    let store = SessionStore::new(root);
    let list = store.list_sessions();
    for skipped in &list.skipped {
        error(&format!(
            "{} (session not converted; the others are: repair or move the file, \
             `agentlog check {}` lists every problem)",
            skipped.error,
            root.display()
        ));
        sink.tally.failed += 1;
        status.raise(Status::PROBLEMS);
    }
    for entry in &list.sessions {
        let path = entry.filepath.display().to_string();
        let done = match store.load_session(&path).map_err(|e| e.to_string()) {
            Ok(s) => {
                if !sink.claim(agentlog::convert::occhat::session_id(&s), &entry.filepath) {
                    status.raise(Status::PROBLEMS);
                    continue;
                }
                agentlog::convert::occhat::convert(&s).map_err(|e| e.to_string())
            }
            Err(e) => Err(e),
        };
        let done = match done {
            Ok(d) => d,
            Err(e) => {
                error(&format!("{path}: {e}"));
                sink.tally.failed += 1;
                status.raise(Status::PROBLEMS);
                continue;
            }
        };
        sink.emit(&done)?;
    }
    Ok(())
}

impl Sink<'_> {
    /// Takes `session` for the conversation or session at `source`: false
    /// (said on standard error, counted) when one converted earlier in the
    /// run has it.
    fn claim(&mut self, session: String, source: &Path) -> bool {
        use std::collections::hash_map::Entry;
        match self.claimed.entry(session) {
            Entry::Vacant(v) => {
                v.insert(source.to_path_buf());
                true
            }
            Entry::Occupied(o) => {
                error(&format!(
                    "{}: not converted: its session id {} is that of {}, converted \
                     earlier in this run (a copy?); {}.jsonl is that one's",
                    source.display(),
                    o.key(),
                    o.get().display(),
                    o.key()
                ));
                self.tally.repeated += 1;
                false
            }
        }
    }

    /// Writes one converted session and prints its path (or its report).
    fn emit(&mut self, done: &Converted) -> Res<()> {
        self.tally.converted += 1;
        if self.args.report {
            for row in &done.report {
                self.out.json_line(
                    &Obj::new()
                        .put("session", done.session_id.as_str())
                        .put("event", row.event.as_str())
                        .put("kind", row.kind.as_str())
                        .put("outcome", row.outcome.code())
                        .put("detail", row.outcome.to_string())
                        .done(),
                )?;
            }
            return Ok(());
        }
        let Some(out_dir) = &self.args.out_dir else {
            return Ok(());
        };
        let file = out_dir.join(format!("{}.jsonl", done.session_id));
        let renamed = write(&file, &done.bytes, &mut self.pending)?;
        if self.args.json || self.args.verbose {
            self.waiting.push_back((done.session_id.clone(), file));
        }
        self.written(renamed)
    }

    /// Prints the paths of the `n` oldest files waiting (with `--json` or
    /// `--verbose`): they are renamed into place.
    fn written(&mut self, n: usize) -> Res<()> {
        if !(self.args.json || self.args.verbose) {
            return Ok(());
        }
        for _ in 0..n {
            let Some((session, file)) = self.waiting.pop_front() else {
                break;
            };
            if self.args.json {
                self.out.json_line(
                    &Obj::new()
                        .put("session", session.as_str())
                        .put("path", crate::out::path_str(&file))
                        .done(),
                )?;
            } else {
                self.out.line(&file.display().to_string())?;
            }
        }
        Ok(())
    }

    /// The summary line (plain output only).
    fn summary(&mut self) -> Res<()> {
        if self.args.report || self.args.json {
            return Ok(());
        }
        let Some(out_dir) = &self.args.out_dir else {
            return Ok(());
        };
        let mut failed = if self.tally.failed > 0 {
            format!("; {} could not be converted", self.tally.failed)
        } else {
            String::new()
        };
        if self.tally.repeated > 0 {
            failed.push_str(&format!(
                "; {} not converted again (a session id converted earlier in this run)",
                self.tally.repeated
            ));
        }
        self.out.line(&format!(
            "converted {}: {} in {}{failed}",
            plural(self.tally.converted, "conversation", "conversations"),
            plural(self.tally.converted, "session file", "session files"),
            out_dir.display()
        ))
    }
}

/// Writes a session file as [`agentlog::output`] says (the bytes in one
/// piece, no buffer between) and adds it to `batch`; how many of the files
/// added are now renamed into place ([`Batch::add`]).
fn write(path: &Path, bytes: &[u8], batch: &mut Batch) -> Res<usize> {
    use std::io::Write;
    let fatal = |e: agentlog::output::OutputError| Fail::Fatal(e.to_string());
    let mut f = Output::create_entry(path).map_err(fatal)?;
    f.write_all(bytes)
        .map_err(|e| Fail::write(e, &path.display().to_string()))?;
    batch.add(f).map_err(fatal)
}
