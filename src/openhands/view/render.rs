//! Each event's `to_llm_message`, and each observation kind's
//! `to_llm_content` (SDK `openhands/sdk/event/llm_convertible/*.py`,
//! `openhands/sdk/tool/schema.py` and the tools' `definition.py`), at a
//! given SDK version.

use std::borrow::Cow;

use super::event::{ActionData, Body, ObservationData, Special};
use super::message::{Content, ImageContent, Message, Role, TextContent};
use super::text::{Persist, join_path, maybe_truncate};
use super::version::SdkVersion;
use crate::hash::sha256_hex;

/// `Observation.ERROR_MESSAGE_HEADER`.
pub const ERROR_HEADER: &str = "[An error occurred during execution.]\n";
/// Terminal output is middle-truncated to this many characters
/// (`MAX_CMD_OUTPUT_SIZE`).
pub const MAX_CMD_OUTPUT_SIZE: usize = 30_000;
/// Browser text is middle-truncated to this many characters.
pub const MAX_BROWSER_OUTPUT_SIZE: usize = 50_000;

fn joined_text<'a>(content: &[Content<'a>]) -> Cow<'a, str> {
    let mut texts = content.iter().filter_map(|c| match c {
        Content::Text(t) => Some(&t.text),
        Content::Image(_) => None,
    });
    let Some(first) = texts.next() else {
        return Cow::Borrowed("");
    };
    match texts.next() {
        None => first.clone(),
        Some(second) => {
            let mut s = String::with_capacity(first.len() + second.len());
            s.push_str(first);
            s.push_str(second);
            for t in texts {
                s.push_str(t);
            }
            Cow::Owned(s)
        }
    }
}

fn text<'a>(t: impl Into<Cow<'a, str>>) -> Content<'a> {
    Content::Text(TextContent::new(t))
}

/// MIME type of base64 image data, by its first characters.
fn image_mime(data: &str) -> &'static str {
    if data.starts_with("/9j/") {
        "image/jpeg"
    } else if data.starts_with("iVBORw0KGgo") {
        "image/png"
    } else if data.starts_with("R0lGODlh") {
        "image/gif"
    } else if data.starts_with("UklGR") {
        "image/webp"
    } else {
        "image/png"
    }
}

/// Whether Python's lenient `base64.b64decode` would accept `data`:
/// characters outside the alphabet are discarded; what is left must be
/// whole 4-character groups.
fn b64_decodes(data: &str) -> bool {
    let n = data
        .bytes()
        .filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        .count();
    n % 4 == 0
}

/// `observation.to_llm_content` followed by the event's `extended_content`.
pub(crate) fn observation_content<'a>(o: ObservationData<'a>, v: SdkVersion) -> Vec<Content<'a>> {
    let ObservationData {
        content,
        is_error,
        special,
        extended,
        ..
    } = o;
    let mut out: Vec<Content<'a>> = Vec::with_capacity(content.len() + 2 + extended.len());
    match special {
        Special::Plain => {
            if is_error {
                out.push(text(ERROR_HEADER));
            }
            out.extend(content);
        }
        Special::Terminal {
            prefix,
            suffix,
            working_dir,
            py_interpreter,
            exit_code,
            save_dir,
        } => {
            if is_error {
                out.push(text(ERROR_HEADER));
            }
            let body = joined_text(&content);
            let plain = prefix.is_empty()
                && suffix.is_empty()
                && working_dir.as_deref().is_none_or(str::is_empty)
                && py_interpreter.as_deref().is_none_or(str::is_empty)
                && exit_code == -1;
            let ret: Cow<'a, str> = if plain {
                body
            } else {
                let mut s = String::with_capacity(prefix.len() + body.len() + suffix.len() + 160);
                s.push_str(&prefix);
                s.push_str(&body);
                s.push_str(&suffix);
                if let Some(wd) = working_dir.as_deref().filter(|w| !w.is_empty()) {
                    s.push_str("\n[Current working directory: ");
                    s.push_str(wd);
                    s.push(']');
                }
                if let Some(py) = py_interpreter.as_deref().filter(|w| !w.is_empty()) {
                    s.push_str("\n[Python interpreter: ");
                    s.push_str(py);
                    s.push(']');
                }
                if exit_code != -1 {
                    s.push_str("\n[Command finished with exit code ");
                    s.push_str(&exit_code.to_string());
                    s.push(']');
                }
                Cow::Owned(s)
            };
            let persist = if v >= SdkVersion::V1_4_0 {
                save_dir.as_deref().map(|d| Persist {
                    save_dir: d,
                    prefix: if v >= SdkVersion::V1_19_1 {
                        "terminal"
                    } else {
                        "bash"
                    },
                })
            } else {
                None
            };
            let ret = if crate::chars::char_count(&ret) > MAX_CMD_OUTPUT_SIZE {
                Cow::Owned(maybe_truncate(&ret, MAX_CMD_OUTPUT_SIZE, persist))
            } else {
                ret
            };
            out.push(text(ret));
        }
        Special::Browser {
            screenshot,
            save_dir,
        } => {
            if is_error {
                out.push(text(ERROR_HEADER));
            }
            let body = joined_text(&content);
            if !body.is_empty() {
                let persist = if v >= SdkVersion::V1_4_0 {
                    save_dir.as_deref().map(|d| Persist {
                        save_dir: d,
                        prefix: "browser",
                    })
                } else {
                    None
                };
                let body = if crate::chars::char_count(&body) > MAX_BROWSER_OUTPUT_SIZE {
                    Cow::Owned(maybe_truncate(&body, MAX_BROWSER_OUTPUT_SIZE, persist))
                } else {
                    body
                };
                out.push(text(body));
            }
            if let Some(shot) = screenshot.filter(|s| !s.is_empty()) {
                let mime = image_mime(&shot);
                if v >= SdkVersion::V1_7_2
                    && let Some(dir) = save_dir.as_deref().filter(|d| !d.is_empty())
                    && b64_decodes(&shot)
                {
                    let ext = match mime.rsplit('/').next().unwrap_or("png") {
                        "jpeg" => "jpg",
                        other => other,
                    };
                    let hash = sha256_hex(shot.as_bytes());
                    let name = format!("browser_screenshot_{}.{ext}", hash.get(..8).unwrap_or(""));
                    out.push(text(format!(
                        "Screenshot saved to: {}",
                        join_path(dir, &name)
                    )));
                }
                out.push(Content::Image(ImageContent {
                    image_urls: vec![Cow::Owned(format!("data:{mime};base64,{shot}"))],
                    cache_prompt: false,
                }));
            }
        }
        Special::Task {
            task_id,
            subagent,
            status,
        } => {
            out.push(text(format!(
                "Task ID: {task_id}\nSubagent: {subagent}\nStatus: {status}"
            )));
            if is_error {
                out.push(text(ERROR_HEADER));
            }
            out.extend(content);
        }
        Special::Tom {
            suggestions,
            confidence,
            reasoning,
        } => {
            if suggestions.is_empty() {
                out.push(text("Tom agent did not provide suggestions."));
            } else {
                let mut parts = vec![format!("Tom agent's guidance:\n{suggestions}")];
                if let Some(r) = reasoning.filter(|r| !r.is_empty()) {
                    parts.push(format!("\nReasoning: {r}"));
                }
                if let Some(c) = confidence {
                    parts.push(format!("\nConfidence: {}", percent(c)));
                }
                out.push(text(parts.join("\n")));
            }
        }
        Special::Sleeptime { message, sessions } => {
            out.push(text(if sessions > 0 {
                format!(
                    "Successfully indexed {sessions} conversation(s) for user modeling.\n{message}"
                )
            } else {
                format!("Sleeptime compute completed.\n{message}")
            }));
        }
    }
    out.extend(extended);
    out
}

/// Python's `f"{x:.0%}"`.
fn percent(x: f64) -> String {
    let scaled = x * 100.0;
    if scaled.is_nan() {
        "nan%".to_owned()
    } else if scaled.is_infinite() {
        if scaled > 0.0 { "inf%" } else { "-inf%" }.to_owned()
    } else {
        format!("{scaled:.0}%")
    }
}

/// An action's own message (one call).
pub(crate) fn action_message<'a>(a: ActionData<'a>) -> Message<'a> {
    let mut m = Message::new(Role::Assistant);
    m.content = a.thought;
    m.tool_calls = Some(vec![a.tool_call]);
    m.reasoning_content = a.reasoning_content;
    m.thinking_blocks = a.thinking_blocks;
    m.responses_reasoning_item = a.reasoning_item;
    m
}

/// `_combine_action_events`: one assistant message for a batch of parallel
/// calls; before 1.43.0 the merged message loses the reasoning item.
pub(crate) fn combine_actions<'a>(batch: Vec<ActionData<'a>>, v: SdkVersion) -> Message<'a> {
    let mut it = batch.into_iter();
    let Some(first) = it.next() else {
        return Message::new(Role::Assistant);
    };
    let rest: Vec<ActionData<'a>> = it.collect();
    if rest.is_empty() {
        return action_message(first);
    }
    let mut m = Message::new(Role::Assistant);
    let mut calls = Vec::with_capacity(rest.len() + 1);
    calls.push(first.tool_call);
    calls.extend(rest.into_iter().map(|a| a.tool_call));
    m.content = first.thought;
    m.tool_calls = Some(calls);
    m.reasoning_content = first.reasoning_content;
    m.thinking_blocks = first.thinking_blocks;
    if v >= SdkVersion::V1_43_0 {
        m.responses_reasoning_item = first.reasoning_item;
    }
    m
}

/// The message of any other LLM-convertible event body.
pub(crate) fn event_message<'a>(body: Body<'a>, v: SdkVersion) -> Option<Message<'a>> {
    Some(match body {
        Body::System { prompt, dynamic } => {
            let mut m = Message::new(Role::System);
            m.content.push(Content::Text(prompt));
            if let Some(d) = dynamic {
                m.content.push(Content::Text(d));
            }
            m
        }
        Body::Message(m, extended) => {
            let mut m = *m;
            m.content.extend(extended);
            m
        }
        Body::Action(a) => action_message(*a),
        Body::Observation(o) => {
            let mut m = Message::new(Role::Tool);
            m.name = o.tool_name.clone();
            m.tool_call_id = Some(o.tool_call_id.clone());
            m.content = observation_content(*o, v);
            m
        }
        Body::Reject {
            tool_name,
            tool_call_id,
            reason,
        } => {
            let mut m = Message::new(Role::Tool);
            m.content.push(text(format!("Action rejected: {reason}")));
            m.name = tool_name;
            m.tool_call_id = Some(tool_call_id);
            m
        }
        Body::Error {
            tool_name,
            tool_call_id,
            error,
        } => {
            let mut m = Message::new(Role::Tool);
            m.content.push(text(error));
            m.name = tool_name;
            m.tool_call_id = Some(tool_call_id);
            m
        }
        Body::Summary(s) => summary_message(s),
        Body::Condensation { .. } | Body::None => return None,
    })
}

/// A condensation summary's message.
pub(crate) fn summary_message(summary: Cow<'_, str>) -> Message<'_> {
    let mut m = Message::new(Role::User);
    m.content.push(text(summary));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs<'a>(special: Special<'a>, content: &'a str, is_error: bool) -> ObservationData<'a> {
        ObservationData {
            tool_name: Some("t".into()),
            tool_call_id: "c".into(),
            content: vec![text(content)],
            is_error,
            special,
            extended: vec![text("rule")],
        }
    }

    fn texts(c: &[Content<'_>]) -> Vec<String> {
        c.iter()
            .map(|c| c.as_text().unwrap_or("<image>").to_owned())
            .collect()
    }

    #[test]
    fn terminal_rendering() {
        let special = Special::Terminal {
            prefix: "".into(),
            suffix: "".into(),
            working_dir: Some("/w".into()),
            py_interpreter: None,
            exit_code: 1,
            save_dir: None,
        };
        let c = observation_content(obs(special, "out", true), SdkVersion::LATEST);
        assert_eq!(
            texts(&c),
            [
                ERROR_HEADER,
                "out\n[Current working directory: /w]\n[Command finished with exit code 1]",
                "rule"
            ]
        );
    }

    #[test]
    fn terminal_truncation_names_the_saved_file_by_version() {
        let long = "y".repeat(MAX_CMD_OUTPUT_SIZE + 5);
        let special = || Special::Terminal {
            prefix: "".into(),
            suffix: "".into(),
            working_dir: None,
            py_interpreter: None,
            exit_code: -1,
            save_dir: Some("/c/observations".into()),
        };
        let new = observation_content(obs(special(), &long, false), SdkVersion::LATEST);
        assert!(texts(&new)[0].contains("/c/observations/terminal_output_"));
        let mid = observation_content(obs(special(), &long, false), SdkVersion::V1_4_0);
        assert!(texts(&mid)[0].contains("/c/observations/bash_output_"));
        let old = observation_content(obs(special(), &long, false), SdkVersion::V1_3_0);
        assert!(!texts(&old)[0].contains("saved to"));
        assert_eq!(texts(&old)[0].chars().count(), MAX_CMD_OUTPUT_SIZE);
    }

    #[test]
    fn task_tom_browser() {
        let t = Special::Task {
            task_id: "task_00000001".into(),
            subagent: "default".into(),
            status: "error".into(),
        };
        let c = observation_content(obs(t, "boom", true), SdkVersion::LATEST);
        assert_eq!(
            texts(&c),
            [
                "Task ID: task_00000001\nSubagent: default\nStatus: error",
                ERROR_HEADER,
                "boom",
                "rule"
            ]
        );
        let tom = Special::Tom {
            suggestions: "ask".into(),
            confidence: Some(0.855),
            reasoning: Some("why".into()),
        };
        let c = observation_content(obs(tom, "", false), SdkVersion::LATEST);
        assert_eq!(
            texts(&c)[0],
            "Tom agent's guidance:\nask\n\nReasoning: why\n\nConfidence: 86%"
        );
        let b = Special::Browser {
            screenshot: Some("iVBORw0KGgoAAAAA".into()),
            save_dir: Some("/o".into()),
        };
        let c = observation_content(obs(b, "page", false), SdkVersion::LATEST);
        let t = texts(&c);
        assert_eq!(t[0], "page");
        assert!(t[1].starts_with("Screenshot saved to: /o/browser_screenshot_"));
        assert!(t[1].ends_with(".png"));
        match &c[2] {
            Content::Image(i) => assert!(i.image_urls[0].starts_with("data:image/png;base64,")),
            Content::Text(_) => panic!("expected an image"),
        }
        let b = Special::Browser {
            screenshot: Some("/9j/AAAA".into()),
            save_dir: Some("/o".into()),
        };
        let c = observation_content(obs(b, "", false), SdkVersion::new(1, 7, 1));
        assert_eq!(texts(&c), ["<image>", "rule"]);
    }
}
