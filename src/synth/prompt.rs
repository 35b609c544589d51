//! Synthetic system prompts and tool definitions for `SystemPromptEvent`.
//!
//! Real system prompts are the same for every conversation of an SDK
//! version (apart from the workspace path inside the file editor's
//! description), so a store shares a few prompt variants: they are built
//! once per store and copied into each conversation. The text is our own
//! generated prose with the real prompt's structure (tagged sections of
//! bullet points) and size: about 15 KB of prompt and 12 KB of tool
//! definitions (1.58 style; 1.0 style writes OpenAI function dicts with a
//! JSON schema instead, about 25 KB together).

use super::Sdk;
use super::jw::{Jw, Spelling};
use super::rng::Rng;
use super::text;

/// One prompt variant, pre-serialised.
pub(crate) struct Prompt {
    /// The `system_prompt` member's value (a `TextContent` object).
    pub system_prompt: Vec<u8>,
    /// The `tools` member's value, split where the workspace path goes (it
    /// sits inside a JSON string: escape it without quotes).
    pub tools_head: Vec<u8>,
    pub tools_tail: Vec<u8>,
}

const SECTIONS: &[&str] = &[
    "ROLE",
    "MEMORY",
    "EFFICIENCY",
    "FILE_SYSTEM_GUIDELINES",
    "CODE_QUALITY",
    "VERSION_CONTROL",
    "PULL_REQUESTS",
    "PROBLEM_SOLVING_WORKFLOW",
    "SECURITY",
    "SECURITY_RISK_ASSESSMENT",
    "EXTERNAL_SERVICES",
    "ENVIRONMENT_SETUP",
    "TROUBLESHOOTING",
    "PROCESS_MANAGEMENT",
];

/// (name, action kind, observation kind, tool kind, read-only, destructive)
const TOOLS: &[(&str, &str, &str, &str, bool, bool)] = &[
    (
        "terminal",
        "TerminalAction",
        "TerminalObservation",
        "TerminalTool",
        false,
        true,
    ),
    (
        "file_editor",
        "FileEditorAction",
        "FileEditorObservation",
        "FileEditorTool",
        false,
        true,
    ),
    (
        "task_tracker",
        "TaskTrackerAction",
        "TaskTrackerObservation",
        "TaskTrackerTool",
        false,
        false,
    ),
    (
        "finish",
        "FinishAction",
        "FinishObservation",
        "FinishTool",
        true,
        false,
    ),
    (
        "think",
        "ThinkAction",
        "ThinkObservation",
        "ThinkTool",
        true,
        false,
    ),
];

const WORKSPACE_MARK: &str = "\u{0}WORKSPACE\u{0}";

fn prompt_text(rng: &mut Rng, target: usize) -> String {
    let mut s = String::with_capacity(target + 2048);
    s.push_str("<SOUL>\nYou are a careful software agent that works in a terminal and an editor.\n</SOUL>\n");
    let mut i = 0;
    while s.len() < target {
        let name = SECTIONS[i % SECTIONS.len()];
        i += 1;
        s.push_str("\n<");
        s.push_str(name);
        s.push_str(">\n");
        let bullets = rng.range(3, 9);
        for _ in 0..bullets {
            s.push_str("* ");
            let n = rng.range(8, 30);
            text::sentence(rng, &mut s, n);
            if rng.below(4) == 0 {
                s.push(' ');
                let n = rng.range(6, 20);
                text::sentence(rng, &mut s, n);
            }
            s.push('\n');
        }
        s.push_str("</");
        s.push_str(name);
        s.push_str(">\n");
    }
    s
}

fn tool_description(rng: &mut Rng, name: &str, target: usize, with_workspace: bool) -> String {
    let mut s = String::with_capacity(target + 512);
    text::sentence(rng, &mut s, 12);
    s.push_str("\n\n");
    while s.len() < target {
        s.push_str("### ");
        text::title(rng, &mut s, 3);
        s.push('\n');
        for _ in 0..rng.range(2, 6) {
            s.push_str("* ");
            let n = rng.range(8, 24);
            text::sentence(rng, &mut s, n);
            s.push('\n');
        }
        s.push('\n');
    }
    s.push_str("Use `");
    s.push_str(name);
    s.push_str("` only when it helps.");
    if with_workspace {
        s.push_str("\n\nYour current working directory is: ");
        s.push_str(WORKSPACE_MARK);
        s.push_str("\nWhen exploring project structure, start with this directory.");
    }
    s
}

/// Builds `n` prompt variants for an SDK style.
pub(crate) fn build(seed: u64, sdk: Sdk, n: usize) -> Vec<Prompt> {
    (0..n.max(1))
        .map(|v| {
            let mut rng = Rng::new(super::rng::derive(seed, 0x5157_0000 + v as u64));
            build_one(&mut rng, sdk)
        })
        .collect()
}

fn build_one(rng: &mut Rng, sdk: Sdk) -> Prompt {
    let (sp, prompt_len, desc_len) = match sdk {
        Sdk::V158 => (Spelling::PYDANTIC, rng.range(12_500, 14_000), 1_250),
        Sdk::V10 => (Spelling::LEGACY, rng.range(11_000, 12_000), 1_000),
    };
    let text = prompt_text(rng, prompt_len);
    let mut w = Jw::new(Vec::new(), sp);
    w.text_content(&text);
    let system_prompt = w.into_inner();

    let mut w = Jw::new(Vec::new(), sp);
    w.begin_arr();
    for &(name, action, observation, kind, ro, destructive) in TOOLS {
        let target = desc_len + rng.below(desc_len);
        let desc = tool_description(rng, name, target, name == "file_editor");
        w.elem();
        match sdk {
            Sdk::V158 => {
                w.begin(Some(kind));
                w.kv_str("description", &desc);
                w.kv_str("action_type", action);
                w.kv_str("observation_type", observation);
                w.key("annotations");
                w.begin(None);
                w.kv_str("title", name);
                w.kv_bool("readOnlyHint", ro);
                w.kv_bool("destructiveHint", destructive);
                w.kv_bool("idempotentHint", ro);
                w.kv_bool("openWorldHint", name == "terminal");
                w.end();
                w.end();
                // `title` follows `kind` in the real dumps (a computed field).
                let close = w.out.pop();
                w.out.extend_from_slice(b",\"title\":");
                crate::json::write::write_str(&mut w.out, name, false);
                if let Some(c) = close {
                    w.out.push(c);
                }
            }
            Sdk::V10 => {
                w.begin(None);
                w.kv_str("type", "function");
                w.key("function");
                w.begin(None);
                w.kv_str("name", name);
                w.kv_str("description", &desc);
                w.key("parameters");
                w.begin(None);
                w.kv_str("type", "object");
                w.key("description");
                let mut d = String::new();
                text::sentence(rng, &mut d, 8);
                w.str(&d);
                w.key("properties");
                w.begin(None);
                let props = rng.range(2, 6);
                for p in 0..props {
                    let pname = if p == 0 { "command" } else { text::ident(rng) };
                    w.key(pname);
                    w.begin(None);
                    w.kv_str("type", if p % 3 == 2 { "boolean" } else { "string" });
                    let mut d = String::new();
                    let n = rng.range(6, 30);
                    text::sentence(rng, &mut d, n);
                    w.kv_str("description", &d);
                    w.end();
                }
                w.key("security_risk");
                w.begin(None);
                w.kv_str("type", "string");
                w.kv_str_arr("enum", &["LOW", "MEDIUM", "HIGH"]);
                w.kv_str("description", "The risk of this action.");
                w.end();
                w.end();
                w.kv_str_arr("required", &["command"]);
                w.end();
                w.end();
                w.end();
            }
        }
    }
    w.end_arr();
    let tools = w.into_inner();
    // Split at the (escaped) workspace mark.
    let mut mark = Vec::new();
    crate::json::write::write_str(&mut mark, WORKSPACE_MARK, sp.ascii);
    let inner = &mark[1..mark.len() - 1];
    let (tools_head, tools_tail) = match find(&tools, inner) {
        Some(at) => (tools[..at].to_vec(), tools[at + inner.len()..].to_vec()),
        None => (tools, Vec::new()),
    };
    Prompt {
        system_prompt,
        tools_head,
        tools_tail,
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}
