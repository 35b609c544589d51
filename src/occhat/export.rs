//! Exports: `persistence.py`'s Markdown export, byte for byte, and a
//! self-contained HTML export.
//!
//! `persistence.py` renders its HTML with `rich` (a recorded console saved with
//! inline styles). This renders the same content natively: one HTML file,
//! its CSS inline in a `<style>` element, no scripts and no external
//! assets (Markdown images become links, raw HTML in a message is shown as
//! text, link targets other than `http`, `https`, `mailto` and relative
//! ones are dropped); a header with the session name, model, reasoning
//! effort and token totals (with thousands separators, as `f"{n:,}"`);
//! then a panel per message whose stripped content is not empty, titled
//! `System`, `You`, or `Assistant` / `Assistant — N tok`, in `persistence.py`'s
//! colours (dim, blue, green). The two token counts are labelled with what
//! they count (`persistence.py` leaves them bare, and they look like they
//! disagree): the header's is the sum over every call of the session, a
//! panel's is its own call's prompt plus completion tokens. System and user text is shown as written
//! (pre-wrapped); assistant Markdown is rendered with `pulldown-cmark`
//! (tables, strikethrough, task lists) and fenced code is highlighted with
//! syntect's grammars in Monokai colours (`highlight.rs`). Tool messages
//! are not shown, as in `persistence.py`. The HTML export needs the `html`
//! feature.
//!
//! Message content that is not a string (`persistence.py` would raise) is shown as
//! its JSON text; a falsy content is empty.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

#[cfg(feature = "html")]
use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Tag, TagEnd};

use crate::json::{OwnedValue, Style};

use std::io::Write;

use crate::output::{OutputError, OutputPath};

use super::fsops::{self, WriteStep};
#[cfg(feature = "html")]
use super::highlight::{escape_into, highlight};
use super::layout::SessionTarget;
use super::save::SaveError;
use super::session::ChatSession;
use super::store::RecordKind;
use super::{ARCHIVE_DIR_NAME, CLEAN_EXIT_MARKER_NAME, LEGACY_DIR_NAME, SessionStore, py};
#[cfg(feature = "html")]
use crate::theme::Theme;

/// A message's content as the exports use it: `msg.get("content") or ""`,
/// with a non-string content written as its JSON text.
fn content_text(msg: &OwnedValue) -> Cow<'_, str> {
    match msg.get("content") {
        Some(v) if py::truthy(v) => match v.as_str() {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(v.to_string_styled(Style {
                indent: None,
                spaced: true,
                ensure_ascii: false,
            })),
        },
        _ => Cow::Borrowed(""),
    }
}

fn role(msg: &OwnedValue) -> &str {
    msg.get("role").and_then(OwnedValue::as_str).unwrap_or("")
}

/// `persistence.py`'s Markdown export text for `session`, stamped `exported`
/// (`YYYYMMDD_HHMMSS`): lines joined with `\n`, no final newline.
pub fn export_markdown_text(session: &ChatSession, exported: &str) -> String {
    let s = &session.stats;
    let mut lines: Vec<Cow<'_, str>> = vec![
        format!("# Chat Export — {}", session.name).into(),
        "".into(),
        format!("**Exported:** {exported}  ").into(),
        format!("**Model:** {}  ", session.model).into(),
        format!("**Reasoning effort:** {}", session.reasoning_effort).into(),
        format!(
            "**Total tokens:** {} (prompt: {}, completion: {})",
            s.total_tokens, s.total_prompt_tokens, s.total_completion_tokens
        )
        .into(),
        "".into(),
    ];
    for msg in &session.messages {
        let content = content_text(msg);
        match role(msg) {
            "system" => lines.extend([
                "---".into(),
                "**System**".into(),
                "".into(),
                content,
                "".into(),
            ]),
            "user" => lines.extend([
                "---".into(),
                "**You**".into(),
                "".into(),
                content,
                "".into(),
            ]),
            "assistant" if !content.is_empty() => {
                let usage = msg.get("usage").filter(|u| py::truthy(u));
                let usage_str = match usage {
                    Some(u) => {
                        let tok = u
                            .as_object()
                            .and_then(|m| m.get("total_tokens"))
                            .map_or(Cow::Borrowed("?"), py::to_str);
                        format!("  *(tokens: {tok})*")
                    }
                    None => String::new(),
                };
                lines.extend([
                    "---".into(),
                    format!("**Assistant**{usage_str}").into(),
                    "".into(),
                    content,
                    "".into(),
                ]);
            }
            _ => {}
        }
    }
    lines.join("\n")
}

#[cfg(feature = "html")]
/// `f"{n:,}"`.
fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(feature = "html")]
const CSS: &str = r#"
:root { color-scheme: dark; }
body { margin: 0; background: #1e1f1c; color: #e6e6e0; font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main, header.session { max-width: 980px; margin: 0 auto; padding: 0 20px; }
header.session { padding-top: 24px; padding-bottom: 8px; }
header.session h1 { font-size: 20px; font-weight: 600; color: #66d9ef; border-bottom: 1px solid #66d9ef; padding-bottom: 6px; margin: 0 0 12px; text-align: center; }
header.session dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 0 0 16px; }
header.session dt { font-weight: 700; }
header.session dd { margin: 0; color: #66d9ef; }
.dim { color: #8f908a; }
section.panel { border: 1px solid; border-radius: 6px; margin: 18px 0; padding: 0 14px 10px; }
section.panel > h2 { font-size: 14px; font-weight: 600; margin: 0; position: relative; top: -0.8em; display: inline-block; padding: 0 6px; background: #1e1f1c; }
section.system { border-color: #75715e; } section.system > h2 { color: #a6a58f; }
section.user { border-color: #3b82f6; } section.user > h2 { color: #60a5fa; }
section.assistant { border-color: #22c55e; } section.assistant > h2 { color: #4ade80; }
.plain { white-space: pre-wrap; overflow-wrap: anywhere; margin-top: -6px; }
.markdown { margin-top: -6px; overflow-wrap: anywhere; }
.markdown > :first-child { margin-top: 0; } .markdown > :last-child { margin-bottom: 0; }
.markdown a { color: #66d9ef; }
.markdown code { font: 13px/1.45 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; background: #272822; padding: 1px 4px; border-radius: 3px; }
.markdown pre { background: #272822; color: #f8f8f2; padding: 10px 12px; border-radius: 5px; overflow-x: auto; }
.markdown pre code { padding: 0; background: none; }
.markdown table { border-collapse: collapse; } .markdown th, .markdown td { border: 1px solid #49483e; padding: 3px 8px; }
.markdown blockquote { border-left: 3px solid #75715e; margin-left: 0; padding-left: 12px; color: #c0c0b8; }
pre .k { color: #f92672; } pre .s { color: #e6db74; } pre .n { color: #ae81ff; }
pre .c { color: #75715e; font-style: italic; } pre .f { color: #a6e22e; } pre .t { color: #66d9ef; }
pre .v { color: #fd971f; }
"#;

#[cfg(feature = "html")]
/// The light theme ([`Theme::Light`](crate::theme::Theme::Light)): written
/// after [`CSS`], it changes colours only.
const LIGHT: &str = r#"
:root { color-scheme: light; }
body { background: #ffffff; color: #1f2328; }
header.session h1 { color: #0969da; border-bottom-color: #0969da; }
header.session dd, .markdown a { color: #0969da; }
.dim { color: #656d76; }
section.panel > h2 { background: #ffffff; }
section.system { border-color: #8c959f; } section.system > h2 { color: #656d76; }
section.user { border-color: #0969da; } section.user > h2 { color: #0969da; }
section.assistant { border-color: #1a7f37; } section.assistant > h2 { color: #1a7f37; }
.markdown code { background: #f6f8fa; }
.markdown pre { background: #f6f8fa; color: #1f2328; }
.markdown th, .markdown td { border-color: #d0d7de; }
.markdown blockquote { border-left-color: #d0d7de; color: #656d76; }
pre .k { color: #cf222e; } pre .s { color: #0a3069; } pre .n { color: #0550ae; }
pre .c { color: #6e7781; } pre .f { color: #8250df; } pre .t { color: #953800; }
pre .v { color: #953800; }
"#;

#[cfg(feature = "html")]
/// Whether a link target is safe to keep (no `javascript:` and the like).
fn safe_url(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    match lower.find(':') {
        None => true,
        Some(colon) => {
            // A colon after a '/', '?' or '#' is not a scheme.
            if lower
                .get(..colon)
                .is_some_and(|s| s.contains(['/', '?', '#']))
            {
                return true;
            }
            lower.starts_with("http:")
                || lower.starts_with("https:")
                || lower.starts_with("mailto:")
        }
    }
}

#[cfg(feature = "html")]
/// Renders assistant Markdown to HTML: raw HTML shown as text, images as
/// links, unsafe link targets dropped, fenced code highlighted.
fn render_markdown(md: &str, out: &mut String) {
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    opts.insert(Options::ENABLE_STRIKETHROUGH);
    opts.insert(Options::ENABLE_TASKLISTS);
    let parser = pulldown_cmark::Parser::new_ext(md, opts);
    let mut events: Vec<Event<'_>> = Vec::new();
    let mut code: Option<(String, String)> = None;
    for ev in parser {
        if let Some((lang, buf)) = &mut code {
            match ev {
                Event::Text(t) => buf.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let mut html = String::from("<pre><code");
                    if !lang.is_empty() {
                        html.push_str(" class=\"language-");
                        escape_into(&mut html, lang);
                        html.push('"');
                    }
                    html.push('>');
                    html.push_str(&highlight(buf, lang));
                    html.push_str("</code></pre>\n");
                    events.push(Event::Html(CowStr::from(html)));
                    code = None;
                }
                _ => {}
            }
            continue;
        }
        let ev = match ev {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(l) => l.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new()));
                continue;
            }
            Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => Event::Start(Tag::Link {
                link_type,
                dest_url: if safe_url(&dest_url) {
                    dest_url
                } else {
                    CowStr::from("")
                },
                title,
                id,
            }),
            Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => Event::Start(Tag::Link {
                link_type,
                dest_url: if safe_url(&dest_url) {
                    dest_url
                } else {
                    CowStr::from("")
                },
                title,
                id,
            }),
            other => other,
        };
        events.push(ev);
    }
    pulldown_cmark::html::push_html(out, events.into_iter());
}

#[cfg(feature = "html")]
/// The HTML export of `session` (see the module docs), in OC Chat's own
/// dark theme.
pub fn render_html(session: &ChatSession) -> String {
    render_html_themed(session, Theme::Dark)
}

#[cfg(feature = "html")]
/// [`render_html`] in the colours of `theme` (the layout is the same).
pub fn render_html_themed(session: &ChatSession, theme: Theme) -> String {
    let s = &session.stats;
    let mut out = String::with_capacity(4096);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>OC Chat — ");
    escape_into(&mut out, &session.name);
    out.push_str("</title>\n<style>");
    out.push_str(CSS);
    if theme == Theme::Light {
        out.push_str(LIGHT);
    }
    out.push_str("</style>\n</head>\n<body>\n<header class=\"session\">\n<h1>OC Chat — ");
    escape_into(&mut out, &session.name);
    out.push_str("</h1>\n<dl>\n<dt>Model:</dt><dd class=\"model\">");
    escape_into(&mut out, &session.model);
    out.push_str("</dd>\n<dt>Reasoning effort:</dt><dd class=\"effort\">");
    escape_into(&mut out, &session.reasoning_effort);
    out.push_str("</dd>\n<dt>Tokens, all calls:</dt><dd class=\"tokens\">");
    out.push_str(&thousands(s.total_tokens));
    out.push_str("  <span class=\"dim\">(prompt: ");
    out.push_str(&thousands(s.total_prompt_tokens));
    out.push_str(", completion: ");
    out.push_str(&thousands(s.total_completion_tokens));
    out.push_str("; summed over every call of the session, each call's prompt counting the whole context sent)</span></dd>\n</dl>\n</header>\n<main>\n");
    for msg in &session.messages {
        let content = content_text(msg);
        let content = py::strip(&content);
        if content.is_empty() {
            continue;
        }
        match role(msg) {
            r @ ("system" | "user") => {
                let (class, title) = if r == "system" {
                    ("system", "System")
                } else {
                    ("user", "You")
                };
                out.push_str("<section class=\"panel ");
                out.push_str(class);
                out.push_str("\">\n<h2>");
                out.push_str(title);
                out.push_str("</h2>\n<div class=\"body plain\">");
                escape_into(&mut out, content);
                out.push_str("</div>\n</section>\n");
            }
            "assistant" => {
                let tok = msg
                    .get("usage")
                    .and_then(OwnedValue::as_object)
                    .and_then(|u| u.get("total_tokens"))
                    .filter(|v| !v.is_null());
                out.push_str("<section class=\"panel assistant\">\n<h2>");
                match tok {
                    None => out.push_str("Assistant"),
                    Some(t) => {
                        out.push_str("Assistant — ");
                        escape_into(&mut out, &py::to_str(t));
                        out.push_str(
                            " tok <span class=\"dim\">(this call: prompt + completion)</span>",
                        );
                    }
                }
                out.push_str("</h2>\n<div class=\"body markdown\">\n");
                render_markdown(content, &mut out);
                out.push_str("</div>\n</section>\n");
            }
            _ => {}
        }
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

impl SessionStore {
    /// Exports the conversation as Markdown, as `persistence.py` does: to
    /// `filepath` when given (written as [`crate::output`] writes every
    /// output path, `-` being standard output; refused with
    /// [`OutputError::Refused`] when it is a record of the store: anything
    /// under `archive/`, `legacy/` or `Chat_logs/`, the clean-exit marker,
    /// a `*_meta.json` or `*_chat_log.json`, a session's `*_export.*` or
    /// `artifacts/`, or the session's own meta, however the path reaches
    /// it), else to `{root}/{name}/{name}_{stamp}_export.md` after
    /// archiving the session's earlier exports (`*_export.*`, HTML ones
    /// included). The session directory is created either way (unless the
    /// given path is refused or cannot be written). Returns the path
    /// written.
    pub fn export_markdown(
        &self,
        session: &ChatSession,
        filepath: Option<&Path>,
    ) -> Result<PathBuf, SaveError> {
        let t = self.target_of(session)?;
        let now = self.now_local();
        let text = export_markdown_text(session, &now.compact_stamp());
        match filepath {
            Some(p) => self.export_to_path(&t, session, p, text.as_bytes()),
            None => {
                self.io().ensure_dir(&t.dir)?;
                let fname = Self::stamped_name(&t.name, &now.file_stamp(), "export", "md");
                self.export_into(&t, &fname, text.as_bytes(), &fsops::kind_any_ext("export"))
            }
        }
    }

    /// Writes an export into the session directory `t` under its lock,
    /// archiving the earlier exports `archived` matches.
    fn export_into(
        &self,
        t: &SessionTarget,
        fname: &str,
        bytes: &[u8],
        archived: &dyn Fn(&[u8]) -> bool,
    ) -> Result<PathBuf, SaveError> {
        self.recheck(t)?;
        let _lock = self.io().lock_dir(&t.dir)?;
        self.save_file_locked(t, fname, bytes, archived, None)
    }

    #[cfg(feature = "html")]
    /// Exports the conversation as one self-contained HTML file (see the
    /// module docs): to `filepath` when given (as
    /// [`export_markdown`](Self::export_markdown) writes it; its directory
    /// must exist), else to
    /// `{root}/{name}/{name}_{stamp}_export.html` after archiving the
    /// session's earlier `*_export.html` files with the same rules as every
    /// other archive step. Returns the path written.
    pub fn export_html(
        &self,
        session: &ChatSession,
        filepath: Option<&Path>,
    ) -> Result<PathBuf, SaveError> {
        self.export_html_themed(session, filepath, Theme::Dark)
    }

    #[cfg(feature = "html")]
    /// [`export_html`](Self::export_html) in the colours of `theme`
    /// ([`render_html_themed`]).
    pub fn export_html_themed(
        &self,
        session: &ChatSession,
        filepath: Option<&Path>,
        theme: Theme,
    ) -> Result<PathBuf, SaveError> {
        let t = self.target_of(session)?;
        let io = self.io();
        let html = render_html_themed(session, theme);
        match filepath {
            Some(p) => self.export_to_path(&t, session, p, html.as_bytes()),
            None => {
                io.ensure_dir(&t.dir)?;
                let now = self.now_local();
                let fname = Self::stamped_name(&t.name, &now.file_stamp(), "export", "html");
                self.export_into(
                    &t,
                    &fname,
                    html.as_bytes(),
                    &fsops::ends_with("_export.html"),
                )
            }
        }
    }
}

impl SessionStore {
    /// Writes an export to a path the caller gave, as [`crate::output`]
    /// writes every output path: a regular file (or nothing yet) replaced
    /// atomically, through a symbolic link to its target, a device, FIFO
    /// or socket in place, `-` to standard output; a directory or a missing
    /// parent is an error. The session directory (the one resolved) is created (as
    /// OC Chat's `persistence.py` does) once the path is known to be writable. Refused
    /// ([`OutputError::Refused`], nothing changed) when the path is a
    /// record of this store or of the session's own directory (see
    /// [`is_store_record`]) or the session's meta file itself, however it
    /// is reached (links, other names for the same directories).
    fn export_to_path(
        &self,
        t: &SessionTarget,
        session: &ChatSession,
        path: &Path,
        bytes: &[u8],
    ) -> Result<PathBuf, SaveError> {
        let target = OutputPath::classify(path)?;
        self.refuse_record(session, &target)?;
        let io = self.io();
        io.ensure_dir(&t.dir)?;
        io.step(WriteStep::CreateTemp, target.dest())?;
        let mut out = target.open()?;
        out.write_all(bytes)
            .map_err(|e| fsops::io_err("write", path, e))?;
        io.step(WriteStep::Publish, path)?;
        out.commit()?;
        Ok(path.to_path_buf())
    }

    /// An [`OutputError::Refused`] when `target` is a record of the store
    /// (or of the directory `session` was loaded from).
    fn refuse_record(&self, session: &ChatSession, target: &OutputPath) -> Result<(), OutputError> {
        let refused = || OutputError::Refused {
            path: target.given().to_path_buf(),
            what: "a record of the OC Chat store",
            conflict: target.dest().to_path_buf(),
        };
        if let Some(rel) = target.under(self.dir())
            && is_store_record(&rel)
        {
            return Err(refused());
        }
        if let Some(meta) = &session.filepath {
            target.refuse_input(meta)?;
            // The session's own directory, wherever it was loaded from.
            if let Some(rel) = target.under(&fsops::parent_of(meta))
                && is_store_record(&Path::new("session").join(rel))
            {
                return Err(refused());
            }
        }
        Ok(())
    }
}

/// Whether `rel`, a path relative to a sessions root, is (or would be) a
/// file of the store that only the store's own saves may write: anything
/// under `archive/`, `legacy/` or `Chat_logs/`; the clean-exit marker; a
/// `*_meta.json` or `*_chat_log.json` anywhere; a session's export
/// (`*_export.*`) or anything under its `artifacts/`.
fn is_store_record(rel: &Path) -> bool {
    let parts: Vec<&std::ffi::OsStr> = rel.iter().collect();
    let Some(name) = parts.last() else {
        return false;
    };
    let n = name.as_encoded_bytes();
    let first = parts.first().copied().unwrap_or_default();
    (parts.len() >= 2
        && [ARCHIVE_DIR_NAME, LEGACY_DIR_NAME, "Chat_logs"]
            .iter()
            .any(|d| first == *d))
        || (parts.len() == 1 && *name == CLEAN_EXIT_MARKER_NAME)
        || n.ends_with(RecordKind::Meta.file_suffix().as_bytes())
        || n.ends_with(RecordKind::ChatLog.file_suffix().as_bytes())
        || (parts.len() >= 2 && fsops::kind_any_ext("export")(n))
        || (parts.len() >= 3 && parts.get(1).is_some_and(|p| *p == "artifacts"))
}

#[cfg(test)]
#[cfg(all(test, feature = "html"))]
mod tests {
    use super::*;

    #[test]
    fn thousands_like_python() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(-1234567), "-1,234,567");
        assert_eq!(thousands(i64::MIN), "-9,223,372,036,854,775,808");
    }

    #[test]
    fn urls() {
        assert!(safe_url("https://x.org/a:b"));
        assert!(safe_url("/rel/a:b"));
        assert!(safe_url("#frag"));
        assert!(!safe_url("javascript:alert(1)"));
        assert!(!safe_url(" JAVASCRIPT:alert(1)"));
        assert!(!safe_url("data:text/html,x"));
    }

    #[test]
    fn store_records() {
        for r in [
            "archive/a/a_x_meta.json",
            "archive/a/notes.md",
            "legacy/x.json",
            "Chat_logs/x.txt",
            ".oc_chat_clean_exit",
            "a/a_2025_meta.json",
            "a/a_2025_chat_log.json",
            "flat_meta.json",
            "a/a_2025_export.md",
            "a/artifacts/a_tool.txt",
        ] {
            assert!(is_store_record(Path::new(r)), "{r}");
        }
        for r in ["notes.md", "a/notes.md", "archive", "a/.oc_chat_clean_exit"] {
            assert!(!is_store_record(Path::new(r)), "{r}");
        }
    }
}
