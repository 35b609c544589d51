//! Lists the conversations of an OpenHands store with their token totals,
//! sub-agents indented under their parent, and the store's total.
//!
//! ```sh
//! cargo run --example store_usage -- examples/store
//! ```
//!
//! `Conversation::usage` counts each call once: a parent's copies of its
//! sub-agents' metrics (`task:<id>`, `delegate:<id>`) are left out when the
//! sub-agents' own directories are there to be read.

use std::error::Error;
use std::process::ExitCode;

use agentlog::openhands::{Store, Usage};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line for people, not the error's `Debug`.
            eprintln!("store_usage: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let root = std::env::args_os()
        .nth(1)
        .ok_or("usage: store_usage STORE")?;
    let store = Store::open(&root)?;
    let mut total = Usage::default();
    let mut stream = store.stream();
    while let Some(item) = stream.next() {
        // A conversation that cannot be read is reported; the stream goes on.
        let item = match item {
            Ok(item) => item,
            Err(e) => {
                eprintln!("store_usage: {e}");
                continue;
            }
        };
        let conv = item.conversation;
        let mut sum = Usage::default();
        match conv.usage(item.parser) {
            Ok(by_model) => by_model.values().for_each(|u| sum.add(u)),
            Err(e) => eprintln!("store_usage: {}: {e}", conv.dir().display()),
        }
        println!(
            "{:indent$}{}  {} events  {} calls  {} prompt + {} completion tokens  ${:.4}",
            "",
            conv.name(),
            conv.parsed_event_count(),
            sum.calls,
            sum.prompt_tokens,
            sum.completion_tokens,
            sum.cost,
            indent = 2 * item.depth,
        );
        total.add(&sum);
    }
    println!(
        "total  {} calls  {} prompt + {} completion tokens  ${:.4}",
        total.calls, total.prompt_tokens, total.completion_tokens, total.cost
    );
    Ok(())
}
