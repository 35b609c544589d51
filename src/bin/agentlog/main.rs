//! `agentlog`: list, inspect, check, total and export the conversation
//! stores of AI coding agents (OpenHands SDK conversation directories and
//! OC Chat session stores), over the `agentlog` library.
//!
//! Exit status: 0 on success, 1 when `check` found problems (or what was
//! asked for is not there: an event `show` cannot find, a file that does
//! not parse), 2 on a usage error or a path that cannot be read at all.
//! Output to a closed pipe ends quietly with status 0.
//!
//! The JSON shapes each command prints are documented on its `--help` and
//! in the module of the command; they are a stable contract.

mod asf;
mod asf_convert;
mod asf_files;
mod check;
mod events;
mod export;
#[cfg(feature = "parquet")]
mod export_parquet;
mod follow;
mod ls;
mod occhat;
mod out;
mod progress;
mod since;
mod stats;
mod target;
mod view;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use out::{Fail, Out};

const EXAMPLES: &str = "\
Examples:
  agentlog ls ~/.openhands/conversations
  agentlog stats examples/store
  agentlog events ~/.openhands/conversations/<id> --json | head
  agentlog check ~/.openhands/conversations oc_chat/sessions
  agentlog export ~/.openhands/conversations --jsonl -o events.jsonl
  agentlog follow ~/.openhands/conversations --checkpoint follow.cp
  agentlog view ~/.openhands/conversations/<id> --json
  agentlog occhat --sessions-dir oc_chat/sessions list
  agentlog asf check session.jsonl

PATH is told apart by itself: an OpenHands store, conversation directory or
file of one (base_state.json, meta.json, events/event-*.json), or an OC Chat
sessions directory.

Exit status: 0 success; 1 problems found (check) or the thing asked for is
missing or unparsable; 2 usage error or a path that cannot be read at all.";

/// Reads AI coding agents' conversation stores (OpenHands SDK, OC Chat).
#[derive(Parser, Debug)]
#[command(name = "agentlog", version, about, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    Ls(ls::Args),
    Events(events::EventsArgs),
    Files(events::FilesArgs),
    Show(events::ShowArgs),
    Stats(stats::Args),
    Check(check::Args),
    Export(export::Args),
    Follow(follow::Args),
    View(view::Args),
    Occhat(occhat::Args),
    Asf(asf::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Help and version go to standard output (status 0), usage
            // errors to standard error (status 2); a closed pipe is ignored.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let mut out = Out::stdout();
    let result = match cli.cmd {
        Cmd::Ls(a) => ls::run(a, &mut out),
        Cmd::Events(a) => events::run_events(a, &mut out),
        Cmd::Files(a) => events::run_files(a, &mut out),
        Cmd::Show(a) => events::run_show(a, &mut out),
        Cmd::Stats(a) => stats::run(a, &mut out),
        Cmd::Check(a) => check::run(a, &mut out),
        Cmd::Export(a) => export::run(a, &mut out),
        Cmd::Follow(a) => follow::run(a, &mut out),
        Cmd::View(a) => view::run(a, &mut out),
        Cmd::Occhat(a) => occhat::run(a, &mut out),
        Cmd::Asf(a) => asf::run(a, &mut out),
    };
    let result = result.and_then(|code| out.flush().map(|()| code));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Fail::Pipe) => ExitCode::SUCCESS,
        Err(Fail::Fatal(msg)) => {
            out::error(&msg);
            ExitCode::from(2)
        }
        Err(Fail::Problem(msg)) => {
            out::error(&msg);
            ExitCode::from(1)
        }
    }
}
