//! The body of one message: its text (long text collapsed), images
//! (embedded when they are `data:` images, else named and not loaded),
//! reasoning, and tool calls with their arguments, each collapsible.

use std::io::{self, Write};

use crate::json::Parser;
use crate::openhands::view::{Content, Message, Role, ThinkingBlock, ToolCall};

use super::escape::{preview, text};

/// Text longer than this many lines is collapsed behind its first line.
const LONG_LINES: usize = 24;
/// Text longer than this many bytes is collapsed behind its first line.
const LONG_BYTES: usize = 2_000;
/// Characters of a collapsed text's first line shown in its summary.
const PREVIEW: usize = 120;

/// Writes the body of `m` (everything below its heading).
pub(crate) fn body(w: &mut impl Write, m: &Message<'_>, parser: &mut Parser) -> io::Result<()> {
    match m.role {
        Role::System => {
            for c in &m.content {
                match c {
                    Content::Text(t) => {
                        w.write_all(b"<details class=\"prompt\"><summary>")?;
                        write!(w, "{}", size_note(&t.text))?;
                        w.write_all(b"</summary><pre>")?;
                        text(w, &t.text)?;
                        w.write_all(b"</pre></details>\n")?;
                    }
                    Content::Image(i) => images(w, &i.image_urls)?,
                }
            }
        }
        Role::Tool => {
            let all: String = m
                .content
                .iter()
                .filter_map(Content::as_text)
                .collect::<Vec<_>>()
                .join("\n");
            w.write_all(b"<details class=\"result\"><summary>")?;
            if let Some(name) = &m.name {
                w.write_all(b"<span class=\"tool\">")?;
                text(w, name)?;
                w.write_all(b"</span> ")?;
            }
            text(w, &preview(&all, PREVIEW))?;
            w.write_all(b" <span class=\"meta\">(")?;
            write!(w, "{}", size_note(&all))?;
            w.write_all(b")</span></summary>\n")?;
            for c in &m.content {
                match c {
                    Content::Text(t) => {
                        w.write_all(b"<pre>")?;
                        text(w, &t.text)?;
                        w.write_all(b"</pre>\n")?;
                    }
                    Content::Image(i) => images(w, &i.image_urls)?,
                }
            }
            w.write_all(b"</details>\n")?;
        }
        Role::User | Role::Assistant => {
            reasoning(w, m)?;
            for c in &m.content {
                match c {
                    Content::Text(t) => text_part(w, &t.text)?,
                    Content::Image(i) => images(w, &i.image_urls)?,
                }
            }
            for call in m.tool_calls.iter().flatten() {
                tool_call(w, call, parser)?;
            }
        }
    }
    Ok(())
}

/// `N lines, M characters`.
fn size_note(s: &str) -> String {
    let lines = s.lines().count().max(1);
    let chars = s.chars().count();
    format!(
        "{} line{}, {} character{}",
        super::escape::thousands(lines as u64),
        if lines == 1 { "" } else { "s" },
        super::escape::thousands(chars as u64),
        if chars == 1 { "" } else { "s" }
    )
}

/// A text part: shown as written, collapsed behind its first line when long.
fn text_part(w: &mut impl Write, s: &str) -> io::Result<()> {
    if s.trim().is_empty() {
        return Ok(());
    }
    let long = s.len() > LONG_BYTES || s.lines().nth(LONG_LINES).is_some();
    if long {
        w.write_all(b"<details class=\"long\"><summary>")?;
        text(w, &preview(s, PREVIEW))?;
        w.write_all(b" <span class=\"meta\">(")?;
        write!(w, "{}", size_note(s))?;
        w.write_all(b")</span></summary><div class=\"text\">")?;
        text(w, s)?;
        w.write_all(b"</div></details>\n")
    } else {
        w.write_all(b"<div class=\"text\">")?;
        text(w, s)?;
        w.write_all(b"</div>\n")
    }
}

/// Reasoning text, thinking blocks and a reasoning item's summary, collapsed.
fn reasoning(w: &mut impl Write, m: &Message<'_>) -> io::Result<()> {
    let mut parts: Vec<&str> = Vec::new();
    if let Some(r) = &m.reasoning_content {
        parts.push(r);
    }
    for b in &m.thinking_blocks {
        match b {
            ThinkingBlock::Thinking { thinking, .. } => parts.push(thinking),
            ThinkingBlock::Redacted { .. } => parts.push("[redacted thinking]"),
        }
    }
    if let Some(item) = &m.responses_reasoning_item {
        parts.extend(item.summary.iter().map(|s| s.as_ref()));
        parts.extend(item.content.iter().flatten().map(|s| s.as_ref()));
    }
    parts.retain(|p| !p.trim().is_empty());
    if parts.is_empty() {
        return Ok(());
    }
    w.write_all(b"<details class=\"thinking\"><summary>Reasoning: ")?;
    text(
        w,
        &preview(parts.first().copied().unwrap_or_default(), PREVIEW),
    )?;
    w.write_all(b"</summary>")?;
    for p in parts {
        w.write_all(b"<pre>")?;
        text(w, p)?;
        w.write_all(b"</pre>")?;
    }
    w.write_all(b"</details>\n")
}

/// A tool call: its name and first argument in the summary, every
/// argument below (strings as written, other values as JSON).
fn tool_call(w: &mut impl Write, call: &ToolCall<'_>, parser: &mut Parser) -> io::Result<()> {
    w.write_all(b"<details class=\"call\"><summary><span class=\"tool\">")?;
    text(w, &call.name)?;
    w.write_all(b"</span> <code>")?;
    let doc = parser.parse(call.arguments.as_bytes()).ok();
    let obj = doc.as_ref().and_then(|d| d.root().as_object());
    let first = obj
        .and_then(|o| o.iter().next())
        .map(|m| m.value.as_str().unwrap_or(m.value.raw_str()).to_owned())
        .unwrap_or_else(|| call.arguments.to_string());
    text(w, &preview(&first, PREVIEW))?;
    w.write_all(b"</code></summary>\n")?;
    match obj {
        Some(o) if !o.is_empty() => {
            w.write_all(b"<dl class=\"args\">")?;
            for m in o.iter() {
                w.write_all(b"<dt>")?;
                text(w, m.key)?;
                w.write_all(b"</dt><dd><pre>")?;
                text(w, m.value.as_str().unwrap_or(m.value.raw_str()))?;
                w.write_all(b"</pre></dd>")?;
            }
            w.write_all(b"</dl>\n")?;
        }
        _ => {
            w.write_all(b"<pre>")?;
            text(w, &call.arguments)?;
            w.write_all(b"</pre>\n")?;
        }
    }
    w.write_all(b"<p class=\"meta\">call ")?;
    text(w, &call.id)?;
    w.write_all(b"</p></details>\n")
}

/// Whether `url` is an image this page may embed: a base64 `data:` URL of
/// a raster image type (PNG, JPEG, GIF, WebP, BMP). Anything else — a
/// network URL, SVG, another data type — is named and not loaded.
pub(crate) fn embeddable_image(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("data:image/") else {
        return false;
    };
    let Some((ty, data)) = rest.split_once(";base64,") else {
        return false;
    };
    matches!(
        ty.to_ascii_lowercase().as_str(),
        "png" | "jpeg" | "jpg" | "gif" | "webp" | "bmp"
    ) && data
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'\n' | b'\r'))
}

/// Images: embedded, or named and not loaded.
fn images(w: &mut impl Write, urls: &[std::borrow::Cow<'_, str>]) -> io::Result<()> {
    for url in urls {
        if embeddable_image(url) {
            w.write_all(b"<img class=\"content\" alt=\"image\" src=\"")?;
            text(w, url)?;
            w.write_all(b"\">\n")?;
        } else {
            w.write_all(b"<p class=\"note\">image not embedded (only data: images are; this page loads nothing): <code>")?;
            text(w, &preview(url, 200))?;
            w.write_all(b"</code></p>\n")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_raster_data_images_are_embedded() {
        assert!(embeddable_image("data:image/png;base64,iVBORw0KGgo="));
        assert!(embeddable_image("data:image/JPEG;base64,/9j/4AAQ"));
        assert!(!embeddable_image("https://example.com/a.png"));
        assert!(!embeddable_image("data:image/svg+xml;base64,PHN2Zz4="));
        assert!(!embeddable_image("data:image/png;base64,abc\"onerror=x"));
        assert!(!embeddable_image("data:text/html;base64,PGI+"));
    }
}
