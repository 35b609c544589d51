//! A self-contained HTML transcript of an OpenHands conversation (feature
//! `html`): one page a person reads in a browser, showing what the model
//! saw.
//!
//! [`write_transcript`] writes the page to any [`Write`] as it goes (each
//! message is written when it is reached; no string of the whole page is
//! built). The page:
//!
//! - **Loads nothing.** Its stylesheet is inline, it has no script and no
//!   external URL; a `Content-Security-Policy` meta element
//!   (`default-src 'none'; img-src data:; style-src 'unsafe-inline'`)
//!   forbids the browser every other load. Images the model was sent as
//!   `data:` URLs of raster types are embedded as they are; any other
//!   image (an `http(s)` URL, SVG) is named in the text, never loaded.
//! - **Escapes everything.** Every string from the files (messages, tool
//!   arguments and outputs, names, IDs, paths) is written HTML-escaped, so
//!   event text holding `</script>`, `<img onerror=…>` or a quote cannot
//!   become markup or leave an attribute.
//! - **Shows the model's view** ([`View`]): the messages the agent builds
//!   from the active branch with the condensations on disk applied, in
//!   order — the system prompt (collapsed), user and assistant text (long
//!   text collapsed behind its first line), reasoning (collapsed), each
//!   tool call with its arguments and each tool result in a collapsed
//!   `<details>`. A condensation's summary is marked as one. Events of the
//!   branch that are not in the model's context are shown where they
//!   happened, collapsed and marked: what a condensation forgot, and a
//!   one-line marker for events that never become messages (state
//!   updates, pauses…); a condensation is a marker naming how many events
//!   it forgot, with its summary. Events on other branches are counted in
//!   the header, not shown.
//! - **Says what each token count counts.** The header's table sums every
//!   call of the conversation, by model, from `base_state.json`'s
//!   `stats.usage_to_metrics` (sub-agents' calls are in their own
//!   sections when their directories are there); each assistant message
//!   shows the prompt and completion tokens, cost and latency of the one
//!   call that produced it, found by the event's `llm_response_id` (a
//!   call's cost is known when its metrics entry has as many `costs` as
//!   `response_latencies`: the SDK records no response ID with a cost).
//!   A call's prompt tokens count the whole context sent with that call,
//!   so the header's sum counts earlier messages again in every later call;
//!   the page says so.
//! - **Marks and embeds sub-agents.** Each sub-agent's conversation under
//!   `subagents/` is rendered as a section of its own after its parent's,
//!   linked from the parent's header; nested sub-agents follow, depth
//!   first, at most [`SUBAGENT_DEPTH_LIMIT`] deep (no recursion over the
//!   input). A sub-agent directory that cannot be read is a marked note.
//! - **Stays usable when large.** Messages and markers are laid out only
//!   near the viewport (CSS `content-visibility: auto`), long outputs are
//!   collapsed, and there is no per-element script: tens of thousands of
//!   events render and scroll.
//!
//! Text is shown as written (pre-wrapped), not rendered as Markdown: the
//! page shows the characters the model was sent.

mod calls;
mod escape;
mod message;
mod style;

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::json::Parser;
use crate::openhands::view::{Role, View, ViewEntry, ViewOptions};
use crate::openhands::{Conversation, Reader, hex_id};
use crate::theme::Theme;

use calls::CallBook;
use escape::{preview, text, thousands};

/// The deepest nesting of sub-agents rendered.
pub const SUBAGENT_DEPTH_LIMIT: usize = 64;

/// What [`write_transcript`] rendered.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TranscriptSummary {
    /// Conversations rendered: the conversation and its sub-agents.
    pub conversations: usize,
    /// Messages shown, over all conversations.
    pub messages: usize,
    /// Events shown outside the model's context, over all conversations.
    pub outside: usize,
    /// Sub-agent directories that could not be read (or nested too deep),
    /// with why; each is a note on the page too.
    pub unread: Vec<(PathBuf, String)>,
}

/// Writes the HTML transcript of `conv` and its sub-agents to `w` (see
/// the module docs). `options` choose the SDK version and branch of the
/// top conversation; sub-agents are viewed as their files say. Returns
/// what was rendered; an error only when writing fails.
pub fn write_transcript(
    conv: &Conversation,
    options: &ViewOptions,
    w: &mut impl Write,
) -> io::Result<TranscriptSummary> {
    write_transcript_themed(conv, options, Theme::Light, w)
}

/// [`write_transcript`] in the colours of `theme` (the layout is the
/// same; [`Theme::Light`] is the transcript's own).
pub fn write_transcript_themed(
    conv: &Conversation,
    options: &ViewOptions,
    theme: Theme,
    w: &mut impl Write,
) -> io::Result<TranscriptSummary> {
    let mut parser = Parser::new();
    let mut summary = TranscriptSummary::default();
    let info = Info::of(conv, &mut parser);
    w.write_all(b"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")?;
    w.write_all(b"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">\n")?;
    w.write_all(b"<meta name=\"referrer\" content=\"no-referrer\">\n")?;
    w.write_all(b"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")?;
    w.write_all(b"<title>OpenHands \xe2\x80\x94 ")?;
    text(w, info.title.as_deref().unwrap_or(&info.id))?;
    w.write_all(b"</title>\n<style>")?;
    w.write_all(style::CSS.as_bytes())?;
    if theme == Theme::Dark {
        w.write_all(style::DARK.as_bytes())?;
    }
    w.write_all(b"</style>\n</head>\n<body>\n")?;
    let mut seen: HashSet<PathBuf> = HashSet::new();
    if let Ok(c) = std::fs::canonicalize(conv.dir()) {
        seen.insert(c);
    }
    let mut stack: Vec<(PathBuf, String, usize)> = Vec::new();
    section(w, conv, &info, options, None, &mut parser, &mut summary)?;
    push_subagents(&mut stack, conv, &anchor(conv), 1);
    let mut reader = Reader::new();
    while let Some((dir, parent, depth)) = stack.pop() {
        if let Ok(c) = std::fs::canonicalize(&dir)
            && !seen.insert(c)
        {
            continue;
        }
        let why = if depth > SUBAGENT_DEPTH_LIMIT {
            Err(format!(
                "a sub-agent nested deeper than {SUBAGENT_DEPTH_LIMIT} levels: not rendered"
            ))
        } else {
            reader.read(&dir).map_err(|e| e.to_string())
        };
        match why {
            Ok(sub) => {
                let info = Info::of(&sub, &mut parser);
                let opts = ViewOptions::default();
                section(
                    w,
                    &sub,
                    &info,
                    &opts,
                    Some(&parent),
                    &mut parser,
                    &mut summary,
                )?;
                push_subagents(&mut stack, &sub, &anchor(&sub), depth + 1);
            }
            Err(why) => {
                w.write_all(b"<section class=\"conversation subagent\"><div class=\"mark subagent\">Sub-agent ")?;
                text(w, &dir.to_string_lossy())?;
                w.write_all(b" (of <a href=\"#")?;
                text(w, &parent)?;
                w.write_all(b"\">its parent</a>): ")?;
                text(w, &why)?;
                w.write_all(b"</div></section>\n")?;
                summary.unread.push((dir, why));
            }
        }
    }
    w.write_all(b"<footer>Written by agentlog ")?;
    text(w, env!("CARGO_PKG_VERSION"))?;
    w.write_all(b" from the conversation's files; nothing on this page is loaded from elsewhere.</footer>\n</body>\n</html>\n")?;
    Ok(summary)
}

/// Queues `conv`'s sub-agents, first one on top.
fn push_subagents(
    stack: &mut Vec<(PathBuf, String, usize)>,
    conv: &Conversation,
    parent: &str,
    depth: usize,
) {
    let subs: Vec<PathBuf> = conv.subagent_dirs().collect();
    for s in subs.into_iter().rev() {
        stack.push((s, parent.to_owned(), depth));
    }
}

/// The HTML id of a conversation's section: `c-` and its directory's name.
fn anchor(conv: &Conversation) -> String {
    format!("c-{}", conv.name())
}

/// What the header says about a conversation, from its state and meta.
struct Info {
    id: String,
    title: Option<String>,
    model: Option<String>,
}

impl Info {
    fn of(conv: &Conversation, parser: &mut Parser) -> Info {
        let mut info = Info {
            id: conv.name().to_owned(),
            title: None,
            model: None,
        };
        if let Some(meta) = conv.meta()
            && let Ok(doc) = parser.parse(meta.raw())
        {
            info.title = doc
                .root()
                .get("title")
                .and_then(|t| t.as_str())
                .filter(|t| !t.trim().is_empty())
                .map(str::to_owned);
        }
        if let Some(state) = conv.state()
            && let Ok(doc) = parser.parse(state.raw())
        {
            let root = doc.root();
            if let Some(id) = root.get("id").and_then(|v| v.as_str()) {
                info.id = hex_id(id);
            }
            info.model = root
                .get("agent")
                .and_then(|a| a.get("llm"))
                .and_then(|l| l.get("model"))
                .and_then(|m| m.as_str())
                .map(str::to_owned);
        }
        info
    }
}

/// Writes one conversation's section: its header and its messages.
fn section(
    w: &mut impl Write,
    conv: &Conversation,
    info: &Info,
    options: &ViewOptions,
    parent: Option<&str>,
    parser: &mut Parser,
    summary: &mut TranscriptSummary,
) -> io::Result<()> {
    let view = View::from_conversation(conv, options);
    let cid = anchor(conv);
    summary.conversations += 1;
    w.write_all(b"<section class=\"conversation")?;
    if parent.is_some() {
        w.write_all(b" subagent")?;
    }
    w.write_all(b"\" id=\"")?;
    text(w, &cid)?;
    w.write_all(b"\">\n<header>\n<h1><span class=\"kind\">")?;
    w.write_all(if parent.is_some() {
        b"Sub-agent".as_slice()
    } else {
        b"OpenHands conversation".as_slice()
    })?;
    w.write_all(b"</span> ")?;
    text(w, info.title.as_deref().unwrap_or(&info.id))?;
    w.write_all(b"</h1>\n<dl>\n")?;
    if let Some(p) = parent {
        w.write_all(b"<dt>Sub-agent of</dt><dd><a href=\"#")?;
        text(w, p)?;
        w.write_all(b"\">")?;
        text(w, p.strip_prefix("c-").unwrap_or(p))?;
        w.write_all(b"</a></dd>\n")?;
    }
    dd(w, "Conversation", &info.id)?;
    dd(w, "Directory", &conv.dir().to_string_lossy())?;
    if let Some(m) = &info.model {
        dd(w, "Model", m)?;
    }
    let det = view.version();
    dd(
        w,
        "SDK version",
        &format!(
            "{} ({})",
            det.version,
            if det.forced {
                "as asked"
            } else {
                "inferred from the files"
            }
        ),
    )?;
    let branch = view.conversation();
    let others = view.events().len().saturating_sub(branch.len());
    let mut events_line = format!(
        "{} event files; {} in the conversation{}; {} in the model's context, as {} messages",
        thousands(conv.event_file_count() as u64),
        thousands(branch.len() as u64),
        if others > 0 {
            format!(
                " ({} on other branches, not shown)",
                thousands(others as u64)
            )
        } else {
            String::new()
        },
        thousands(view.context().len() as u64),
        thousands(view.messages().len() as u64)
    );
    let condensations = branch
        .iter()
        .filter(|&&p| view.condensation(p).is_some())
        .count();
    if condensations > 0 {
        events_line.push_str(&format!(
            "; {} condensation{}",
            thousands(condensations as u64),
            if condensations == 1 { "" } else { "s" }
        ));
    }
    dd(w, "Events", &events_line)?;
    if !conv.subagents().is_empty() {
        w.write_all(b"<dt>Sub-agents</dt><dd>")?;
        for (i, name) in conv.subagents().iter().enumerate() {
            if i > 0 {
                w.write_all(b", ")?;
            }
            w.write_all(b"<a href=\"#c-")?;
            text(w, name)?;
            w.write_all(b"\">")?;
            text(w, name)?;
            w.write_all(b"</a>")?;
        }
        w.write_all(b" (below)</dd>\n")?;
    }
    w.write_all(b"</dl>\n")?;
    totals(w, conv, parser)?;
    if !view.issues().is_empty() {
        w.write_all(b"<ul class=\"issues\">")?;
        for issue in view.issues() {
            w.write_all(b"<li>")?;
            text(w, &format!("{issue:?}"))?;
            w.write_all(b"</li>")?;
        }
        w.write_all(b"</ul>\n")?;
    }
    w.write_all(b"</header>\n<div class=\"messages\">\n")?;
    messages(w, conv, &view, &cid, parser, summary)?;
    w.write_all(b"</div>\n</section>\n")
}

/// `<dt>term</dt><dd>value</dd>`, the value escaped.
fn dd(w: &mut impl Write, term: &str, value: &str) -> io::Result<()> {
    w.write_all(b"<dt>")?;
    text(w, term)?;
    w.write_all(b"</dt><dd>")?;
    text(w, value)?;
    w.write_all(b"</dd>\n")
}

/// Dollars: to the cent, or to a hundredth of a cent below a cent.
fn dollars(c: f64) -> String {
    if c > 0.0 && c < 0.01 {
        format!("${c:.4}")
    } else {
        format!("${c:.2}")
    }
}

/// The header's table of token totals over every call, by model.
fn totals(w: &mut impl Write, conv: &Conversation, parser: &mut Parser) -> io::Result<()> {
    let Ok(by_model) = conv.usage(parser) else {
        return w.write_all(b"<p class=\"explain\">Token usage: base_state.json does not read as a JSON object.</p>\n");
    };
    if by_model.is_empty() {
        return w.write_all(
            b"<p class=\"explain\">Token usage: none recorded (no calls in base_state.json).</p>\n",
        );
    }
    w.write_all(b"<table class=\"usage\"><caption>Token usage, total over all model calls of this conversation</caption>\n<tr><th>Model</th><th>Calls</th><th>Prompt tokens, summed over calls</th><th>of which read from cache</th><th>Completion tokens</th><th>Prompt + completion</th><th>Cost</th></tr>\n")?;
    let mut all = crate::openhands::Usage::default();
    let row = |w: &mut dyn Write, name: &str, u: &crate::openhands::Usage| -> io::Result<()> {
        let mut cells = Vec::new();
        text(&mut cells, name)?;
        writeln!(
            w,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            String::from_utf8_lossy(&cells),
            thousands(u.calls),
            thousands(u.prompt_tokens),
            thousands(u.cache_read_tokens),
            thousands(u.completion_tokens),
            thousands(u.prompt_tokens.saturating_add(u.completion_tokens)),
            dollars(u.cost)
        )
    };
    for (model, u) in &by_model {
        row(w, model, u)?;
        all.add(u);
    }
    if by_model.len() > 1 {
        row(w, "all models", &all)?;
    }
    w.write_all(b"</table>\n<p class=\"explain\">These totals add up every call. Each call's prompt tokens count the whole context sent with it, so earlier messages are counted again in every later call; each response below shows the tokens of its own call only (prompt tokens of that call + completion tokens of that call).")?;
    if !conv.subagents().is_empty() {
        w.write_all(b" Sub-agents' calls are counted in their own sections.")?;
    }
    w.write_all(b"</p>\n")
}

/// The label of a message's role.
fn role_label(role: Role) -> &'static str {
    match role {
        Role::System => "System prompt",
        Role::User => "User",
        Role::Assistant => "Assistant",
        Role::Tool => "Tool result",
    }
}

/// Writes the messages, with the branch's events that are not in the
/// context where they happened.
fn messages(
    w: &mut impl Write,
    conv: &Conversation,
    view: &View<'_>,
    cid: &str,
    parser: &mut Parser,
    summary: &mut TranscriptSummary,
) -> io::Result<()> {
    let events = view.events();
    let branch = view.conversation();
    let mut in_context = vec![false; events.len()];
    for e in view.context() {
        if let ViewEntry::Event(p) = *e
            && let Some(slot) = in_context.get_mut(p)
        {
            *slot = true;
        }
    }
    let mut branch_at: Vec<Option<usize>> = vec![None; events.len()];
    for (i, &p) in branch.iter().enumerate() {
        if let Some(slot) = branch_at.get_mut(p) {
            *slot = Some(i);
        }
    }
    let mut cursor = 0;
    let books = CallBook::of(conv, parser);
    for (i, m) in view.messages().iter().enumerate() {
        let entries = view.message_entries(i);
        let first_event = entries.iter().find_map(|e| match *e {
            ViewEntry::Event(p) => Some(p),
            ViewEntry::Summary(_) => None,
        });
        // The events of the branch before this message that are not in
        // the context.
        if let Some(p) = first_event
            && let Some(Some(at)) = branch_at.get(p)
            && *at >= cursor
        {
            while cursor < *at {
                if let Some(&q) = branch.get(cursor)
                    && !in_context.get(q).copied().unwrap_or(false)
                {
                    outside(w, conv, view, q, parser)?;
                    summary.outside += 1;
                }
                cursor += 1;
            }
            cursor += 1;
        }
        let summary_of = entries.iter().find_map(|e| match *e {
            ViewEntry::Summary(p) => Some(p),
            ViewEntry::Event(_) => None,
        });
        let indexes: Vec<usize> = entries
            .iter()
            .filter_map(|e| match *e {
                ViewEntry::Event(p) => events.get(p).map(|ev| ev.index),
                ViewEntry::Summary(_) => None,
            })
            .collect();
        let class = match (summary_of, m.role) {
            (Some(_), _) => "user summary",
            (None, r) => r.as_str(),
        };
        write!(w, "<article class=\"msg {class}\" id=\"")?;
        text(w, cid)?;
        write!(w, "-m{i}\">\n<div class=\"head\"><span class=\"role\">")?;
        match summary_of {
            Some(_) => w.write_all(b"Condensation summary")?,
            None => w.write_all(role_label(m.role).as_bytes())?,
        }
        write!(w, "</span><span class=\"meta\">message {}", i + 1)?;
        match (summary_of, indexes.as_slice()) {
            (Some(p), _) => {
                let idx = events.get(p).map_or(0, |e| e.index);
                write!(w, " · stands for what condensation event {idx} forgot")?;
            }
            (None, []) => {}
            (None, [one]) => write!(w, " · event {one}")?,
            (None, many) => {
                let shown: Vec<String> = many.iter().take(6).map(usize::to_string).collect();
                write!(
                    w,
                    " · events {}{}",
                    shown.join(", "),
                    if many.len() > 6 { ", …" } else { "" }
                )?;
            }
        }
        if let Some(ts) = indexes
            .first()
            .and_then(|&ix| conv.event(ix))
            .and_then(|e| e.timestamp())
        {
            w.write_all(b" \xc2\xb7 ")?;
            text(w, ts)?;
        }
        if let Some(tool_call_id) = &m.tool_call_id {
            w.write_all(b" \xc2\xb7 answers call ")?;
            text(w, tool_call_id)?;
        }
        w.write_all(b"</span></div>\n")?;
        message::body(w, m, parser)?;
        if m.role == Role::Assistant
            && let Some(&ix) = indexes.first()
        {
            call_usage(w, conv, ix, &books, parser)?;
        }
        w.write_all(b"</article>\n")?;
        summary.messages += 1;
    }
    while cursor < branch.len() {
        if let Some(&q) = branch.get(cursor)
            && !in_context.get(q).copied().unwrap_or(false)
        {
            outside(w, conv, view, q, parser)?;
            summary.outside += 1;
        }
        cursor += 1;
    }
    Ok(())
}

/// The usage line of an assistant message: the call that produced it,
/// found by its event's `llm_response_id`.
fn call_usage(
    w: &mut impl Write,
    conv: &Conversation,
    index: usize,
    book: &CallBook,
    parser: &mut Parser,
) -> io::Result<()> {
    let Some(ev) = conv.event(index) else {
        return Ok(());
    };
    let Ok(doc) = parser.parse(ev.raw()) else {
        return Ok(());
    };
    let Some(rid) = doc
        .root()
        .get("llm_response_id")
        .and_then(|r| r.as_str())
        .filter(|r| !r.is_empty())
    else {
        return Ok(());
    };
    w.write_all(b"<p class=\"usage\">")?;
    match book.get(rid) {
        None => {
            w.write_all(b"No usage recorded for this response (")?;
            text(w, rid)?;
            w.write_all(b")")?;
        }
        Some(c) => {
            w.write_all(b"This call: ")?;
            if c.has_tokens {
                write!(
                    w,
                    "<b>{}</b> prompt tokens (the context sent with this call",
                    thousands(c.prompt)
                )?;
                if c.cache_read > 0 {
                    write!(w, "; {} read from cache", thousands(c.cache_read))?;
                }
                if c.cache_write > 0 {
                    write!(w, "; {} written to cache", thousands(c.cache_write))?;
                }
                write!(
                    w,
                    ") + <b>{}</b> completion tokens",
                    thousands(c.completion)
                )?;
                if c.reasoning > 0 {
                    write!(w, " (of which {} reasoning)", thousands(c.reasoning))?;
                }
                write!(
                    w,
                    " = {} tokens",
                    thousands(c.prompt.saturating_add(c.completion))
                )?;
            } else {
                w.write_all(b"no token counts recorded")?;
            }
            match c.cost {
                Some(cost) => write!(w, " \u{b7} cost <b>${cost:.4}</b>")?,
                None => w.write_all(b" \xc2\xb7 cost not recorded per call")?,
            }
            if let Some(l) = c.latency {
                write!(w, " \u{b7} {l:.2} s")?;
            }
        }
    }
    w.write_all(b"</p>\n")
}

/// An event of the branch that is not in the model's context.
fn outside(
    w: &mut impl Write,
    conv: &Conversation,
    view: &View<'_>,
    p: usize,
    parser: &mut Parser,
) -> io::Result<()> {
    let Some(ev) = view.events().get(p) else {
        return Ok(());
    };
    let ix = ev.index;
    let envelope = conv.event(ix);
    let ts = envelope.and_then(|e| e.timestamp());
    if let Some((forgot, summ)) = view.condensation(p) {
        write!(
            w,
            "<div class=\"mark condensation\"><b>Condensation</b> \u{b7} event {ix}"
        )?;
        if let Some(ts) = ts {
            w.write_all(b" \xc2\xb7 ")?;
            text(w, ts)?;
        }
        write!(
            w,
            " \u{b7} forgets {} earlier event{} (out of the model's context from here on)",
            thousands(forgot as u64),
            if forgot == 1 { "" } else { "s" }
        )?;
        if let Some(s) = summ {
            w.write_all(b"<details><summary>Its summary: ")?;
            text(w, &preview(s, 120))?;
            w.write_all(b"</summary><pre>")?;
            text(w, s)?;
            w.write_all(b"</pre></details>")?;
        }
        return w.write_all(b"</div>\n");
    }
    if let Some(m) = view.lone_message(p) {
        let gist: String = m
            .content
            .iter()
            .find_map(|c| c.as_text())
            .map(|t| preview(t, 100))
            .or_else(|| {
                m.tool_calls
                    .as_ref()
                    .and_then(|c| c.first())
                    .map(|c| c.name.to_string())
            })
            .unwrap_or_default();
        write!(
            w,
            "<details class=\"outside\"><summary>Not in the model's context \u{b7} event {ix} \u{b7} {}: ",
            role_label(m.role)
        )?;
        text(w, &gist)?;
        w.write_all(b"</summary>\n")?;
        message::body(w, &m, parser)?;
        return w.write_all(b"</details>\n");
    }
    write!(w, "<div class=\"mark\">event {ix} \u{b7} ")?;
    text(
        w,
        envelope.and_then(|e| e.kind_name()).unwrap_or("(no kind)"),
    )?;
    if let Some(ts) = ts {
        w.write_all(b" \xc2\xb7 ")?;
        text(w, ts)?;
    }
    if let Some(problem) = &ev.problem {
        w.write_all(b" \xc2\xb7 not usable: ")?;
        text(w, &format!("{problem:?}"))?;
    }
    w.write_all(b"</div>\n")
}
