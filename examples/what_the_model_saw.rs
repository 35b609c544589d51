//! Prints what the model of an OpenHands conversation is sent next: the
//! messages of its view (condensations applied, tool calls paired), as the
//! SDK version that wrote the directory builds them.
//!
//! ```sh
//! cargo run --example what_the_model_saw -- examples/store/<id>
//! ```

use std::error::Error;
use std::process::ExitCode;

use agentlog::openhands::read_conversation;
use agentlog::openhands::view::{Content, View, ViewOptions};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("what_the_model_saw: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let dir = std::env::args_os()
        .nth(1)
        .ok_or("usage: what_the_model_saw CONVERSATION_DIR")?;
    let conv = read_conversation(&dir)?;
    let view = View::from_conversation(&conv, &ViewOptions::default());
    println!(
        "SDK {} ({} of {} events in the view)",
        view.version().version,
        view.entries().len(),
        conv.parsed_event_count()
    );
    for m in view.messages() {
        let mut text = String::new();
        for part in &m.content {
            match part {
                Content::Text(t) => text.push_str(&t.text),
                Content::Image(i) => text.push_str(&format!("[{} image(s)]", i.image_urls.len())),
            }
        }
        let first_line = text.lines().next().unwrap_or("");
        println!("{:<9} {first_line}", m.role.as_str());
        for call in m.tool_calls.iter().flatten() {
            println!("          → {}({})", call.name, call.arguments);
        }
    }
    Ok(())
}
