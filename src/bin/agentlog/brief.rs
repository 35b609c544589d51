//! An event at a glance, for `agentlog events`: the tool and a short
//! argument of an action, the exit code or error of an observation, the
//! first words of a message.

use agentlog::json::Value;

/// A short name for an event kind: `Event` dropped, `ConversationStateUpdate`
/// said as `StateUpdate`.
pub fn kind_label(kind: &str) -> &str {
    let k = kind.strip_suffix("Event").unwrap_or(kind);
    match k {
        "ConversationStateUpdate" => "StateUpdate",
        "ConversationError" => "ConvError",
        other => other,
    }
}

/// `s` on one line with runs of white space made one space.
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text parts of a content list (or a string), joined.
fn text_of(v: Value<'_>) -> String {
    if let Some(s) = v.as_str() {
        return squeeze(s);
    }
    let mut out = String::new();
    if let Some(items) = v.as_array() {
        for item in items.iter() {
            if let Some(t) = item.get("text").and_then(|t| t.as_str()) {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(&squeeze(t));
            } else if item.get("type").and_then(|t| t.as_str()) == Some("image_url")
                || item.get("type").and_then(|t| t.as_str()) == Some("image")
            {
                out.push_str(" [image]");
            }
        }
    }
    out
}

/// The members an action's argument is most often in, in the order tried.
const ARGUMENT_KEYS: &[&str] = &[
    "command",
    "cmd",
    "path",
    "file_path",
    "query",
    "url",
    "code",
    "message",
    "thought",
    "prompt",
];

/// An action's short argument: from `action`, else from the tool call's
/// JSON `arguments`.
fn action_argument(root: Value<'_>) -> String {
    let pick = |v: Value<'_>| -> Option<String> {
        ARGUMENT_KEYS.iter().find_map(|k| {
            v.get(k).and_then(|x| x.as_str()).map(|s| {
                if *k == "command" && v.get("path").and_then(|p| p.as_str()).is_some() {
                    // file_editor: `view /path`.
                    format!(
                        "{} {}",
                        s,
                        v.get("path").and_then(|p| p.as_str()).unwrap_or("")
                    )
                } else {
                    s.to_owned()
                }
            })
        })
    };
    if let Some(a) = root.get("action")
        && let Some(s) = pick(a)
    {
        return squeeze(&s);
    }
    let args = root
        .get("tool_call")
        .and_then(|c| c.get("arguments"))
        .and_then(|a| a.as_str());
    if let Some(args) = args
        && let Ok(v) = agentlog::json::OwnedValue::parse(args.as_bytes())
    {
        for k in ARGUMENT_KEYS {
            if let Some(s) = v.get(k).and_then(|x| x.as_str()) {
                return squeeze(s);
            }
        }
    }
    String::new()
}

/// What an event says at a glance (empty when nothing is worth saying).
pub fn describe(root: Value<'_>) -> String {
    let kind = root.get("kind").and_then(|k| k.as_str()).unwrap_or("");
    let tool = root.get("tool_name").and_then(|t| t.as_str());
    match kind {
        "ActionEvent" => {
            let arg = action_argument(root);
            match tool {
                Some(t) if arg.is_empty() => t.to_owned(),
                Some(t) => format!("{t}: {arg}"),
                None => arg,
            }
        }
        "ObservationEvent" => {
            let obs = root.get("observation");
            let mut s = tool.unwrap_or("").to_owned();
            let exit = obs.and_then(|o| {
                o.get("exit_code")
                    .or_else(|| o.get("metadata").and_then(|m| m.get("exit_code")))
                    .and_then(|c| c.as_i64())
            });
            if let Some(c) = exit {
                s.push_str(&format!(" exit {c}"));
            }
            if obs
                .and_then(|o| o.get("is_error"))
                .and_then(|e| e.as_bool())
                == Some(true)
            {
                s.push_str(" ERROR");
            }
            if let Some(c) = obs.and_then(|o| o.get("content")) {
                let t = text_of(c);
                if !t.is_empty() {
                    s.push_str(": ");
                    s.push_str(&t);
                }
            }
            s.trim_start().to_owned()
        }
        "MessageEvent" => {
            let m = root.get("llm_message");
            let role = m
                .and_then(|m| m.get("role"))
                .and_then(|r| r.as_str())
                .unwrap_or("?");
            let text = m
                .and_then(|m| m.get("content"))
                .map(text_of)
                .unwrap_or_default();
            format!("{role}: {text}")
        }
        "SystemPromptEvent" => {
            let n = root
                .get("system_prompt")
                .and_then(|p| p.get("text"))
                .and_then(|t| t.as_str())
                .map_or(0, |t| t.chars().count());
            let tools = root
                .get("tools")
                .and_then(|t| t.as_array())
                .map_or(0, |t| t.len());
            format!("system prompt, {n} characters, {tools} tools")
        }
        "AgentErrorEvent" | "ConversationErrorEvent" => {
            let e = root
                .get("error")
                .or_else(|| root.get("detail"))
                .and_then(|e| e.as_str())
                .map(squeeze)
                .unwrap_or_default();
            match tool {
                Some(t) => format!("{t}: {e}"),
                None => e,
            }
        }
        "Condensation" => {
            let n = root
                .get("forgotten_event_ids")
                .and_then(|f| f.as_array())
                .map_or(0, |f| f.len());
            let summary = root
                .get("summary")
                .and_then(|s| s.as_str())
                .map(squeeze)
                .unwrap_or_default();
            format!(
                "forgets {n} event{}{}{summary}",
                if n == 1 { "" } else { "s" },
                if summary.is_empty() { "" } else { ": " }
            )
        }
        "UserRejectObservation" => {
            let r = root
                .get("rejection_reason")
                .and_then(|r| r.as_str())
                .map(squeeze)
                .unwrap_or_default();
            format!("{}: rejected: {r}", tool.unwrap_or("?"))
        }
        _ => String::new(),
    }
}

/// `s` cut to `width` characters, `…` marking a cut.
pub fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `s` cut to its last `width` characters, `…` marking a cut (a path keeps
/// its end: the file's name).
pub fn fit_end(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        return s.to_owned();
    }
    let mut out = String::from('…');
    out.extend(s.chars().skip(n - width.saturating_sub(1)));
    out
}

/// The width human output fits in: `COLUMNS` when set, else 100.
pub fn columns() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c >= 40)
        .unwrap_or(100)
}
