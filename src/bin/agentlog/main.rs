//! `agentlog`: list, inspect, check, total and export the conversation
//! stores of AI coding agents (OpenHands SDK conversation directories and
//! OC Chat session stores), over the `agentlog` library.
//!
//! Exit status: one table for every command, [`EXIT_STATUS`], printed at
//! the end of each command's `--help`.
//!
//! The JSON shapes each command prints are documented on its `--help` and
//! in the module of the command; they are a stable contract.

mod asf;
mod asf_convert;
mod asf_files;
mod brief;
mod check;
mod events;
mod export;
#[cfg(feature = "parquet")]
mod export_parquet;
mod find;
mod follow;
mod html;
mod ids;
mod index;
mod ls;
mod occhat;
mod out;
mod progress;
mod search;
mod since;
mod stats;
mod suggest;
mod table;
mod target;
mod tree;
mod view;
mod when;

use std::process::ExitCode;

use clap::{Command, CommandFactory, FromArgMatches, Subcommand};

use out::{Fail, Out};

const EXAMPLES: &str = "\
Examples:
  agentlog ls ~/.openhands/conversations
  agentlog stats examples/store
  agentlog events ~/.openhands/conversations/<id> --json | head
  agentlog events 3e806943 --store ~/.openhands/conversations
  agentlog ls --sort updated -r --since 2026-01-01
  agentlog check ~/.openhands/conversations oc_chat/sessions
  agentlog export ~/.openhands/conversations -o events.jsonl
  agentlog follow ~/.openhands/conversations --checkpoint follow.cp
  agentlog view ~/.openhands/conversations/<id> --json
  agentlog tree ~/.openhands/conversations/<id>
  agentlog html ~/.openhands/conversations/<id> -o transcript.html
  agentlog occhat --sessions-dir oc_chat/sessions list
  agentlog asf check session.jsonl
  agentlog index ~/.openhands/conversations --index ~/.cache/agentlog-index
  agentlog search ~/.cache/agentlog-index 'flaky test'

PATH is told apart by itself: an OpenHands store, conversation directory or
file of one (base_state.json, meta.json, events/event-*.json), or an OC Chat
sessions directory. No PATH: $AGENTLOG_STORE, else ~/.openhands/conversations.
A conversation's ID or a unique prefix of it names it under --store.";

/// The exit statuses of every command, appended to each `--help`.
pub const EXIT_STATUS: &str = "\
Exit status (every command):
  0  success
  1  problems found (check, tail, files that do not read), nothing found
     under a PATH, or what was asked for is not there (no such event,
     session or branch; an ID prefix that names several, listed)
  2  usage error (an unknown option or value, the wrong kind of PATH), or a
     PATH or output that cannot be read or written at all
A closed output pipe ends the command quietly with status 0.";

/// Reads AI coding agents' conversation stores (OpenHands SDK, OC Chat).
#[derive(clap::Parser, Debug)]
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
    Tree(tree::Args),
    Html(html::Args),
    Occhat(occhat::Args),
    Asf(asf::Args),
    Index(index::Args),
    Search(search::Args),
}

/// `cmd` and every subcommand under it, with [`EXIT_STATUS`] after the
/// help text of each.
fn with_exit_status(cmd: Command) -> Command {
    let help = match cmd.get_after_help() {
        Some(h) => format!("{h}\n\n{EXIT_STATUS}"),
        None => EXIT_STATUS.to_owned(),
    };
    // Help wrapped to the terminal, never wider than 100 columns.
    cmd.after_help(help)
        .max_term_width(100)
        .mut_subcommands(with_exit_status)
}

fn main() -> ExitCode {
    let parsed = with_exit_status(Cli::command())
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
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
        Cmd::Tree(a) => tree::run(a, &mut out),
        Cmd::Html(a) => html::run(a),
        Cmd::Occhat(a) => occhat::run(a, &mut out),
        Cmd::Asf(a) => asf::run(a, &mut out),
        Cmd::Index(a) => index::run(a, &mut out),
        Cmd::Search(a) => search::run(a, &mut out),
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
