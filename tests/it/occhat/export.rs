//! Exports: the Markdown text rule by rule (the corpus export is compared
//! byte for byte in `replay.rs`) and the HTML export's structure.

use crate::common::occhat as occhat_support;

use agentlog::json::OwnedValue;
use agentlog::occhat::{ChatSession, TokenStats, export_markdown_text, render_html};

fn session(messages: &str) -> ChatSession {
    let mut s = ChatSession::new("demo <&>", "model-x");
    s.reasoning_effort = "medium".into();
    s.stats = TokenStats {
        total_prompt_tokens: 1_234_567,
        total_completion_tokens: 89,
        total_tokens: 1_234_656,
        ..TokenStats::default()
    };
    s.messages = OwnedValue::parse(messages.as_bytes())
        .unwrap()
        .as_array()
        .unwrap()
        .clone();
    s
}

/// Messages OC Chat's `persistence.py` (`export_markdown`) accepts, one per
/// rule of its loop: system and user content as is (`None` as empty), an
/// assistant message only when its content is non-empty, its usage shown
/// only when the usage dict is non-empty (`total_tokens`, else `?`, a float
/// as Python prints it), tool messages left out.
const REFERENCE_MESSAGES: &str = r#"
    {"role": "system", "content": "sys"},
    {"role": "user", "content": null},
    {"role": "assistant", "content": ""},
    {"role": "assistant", "content": "no usage"},
    {"role": "assistant", "content": "with usage", "usage": {"total_tokens": 42}},
    {"role": "assistant", "content": "usage without total", "usage": {"prompt_tokens": 1}},
    {"role": "assistant", "content": "empty usage", "usage": {}},
    {"role": "assistant", "content": "float total", "usage": {"total_tokens": 1.50}},
    {"role": "tool", "content": "tool output is not exported"}
"#;

/// The reference's output for [`REFERENCE_MESSAGES`]: what `persistence.py`'s
/// `export_markdown` writes for them, line by line (`"\n".join(lines)`).
const REFERENCE_OUTPUT: &str = "# Chat Export — demo <&>\n\n**Exported:** 20250101_000000  \n**Model:** model-x  \n**Reasoning effort:** medium\n**Total tokens:** 1234656 (prompt: 1234567, completion: 89)\n\n---\n**System**\n\nsys\n\n---\n**You**\n\n\n\n---\n**Assistant**\n\nno usage\n\n---\n**Assistant**  *(tokens: 42)*\n\nwith usage\n\n---\n**Assistant**  *(tokens: ?)*\n\nusage without total\n\n---\n**Assistant**\n\nempty usage\n\n---\n**Assistant**  *(tokens: 1.5)*\n\nfloat total\n";

/// Messages the reference rejects: a list as content (`"\n".join` raises
/// `TypeError`) and a message that is not an object (`msg.get` raises
/// `AttributeError`). The reference writes nothing for a session holding
/// them; the crate exports the rest.
const REJECTED_MESSAGES: &str = r#"
    {"role": "user", "content": ["part"]},
    7
"#;

/// The crate's own choice for [`REJECTED_MESSAGES`], appended to the
/// reference's output: non-text content is written as its JSON, and a
/// message that is not an object is left out.
const CRATE_CHOICE_OUTPUT: &str = "\n---\n**You**\n\n[\"part\"]\n";

#[test]
fn markdown_rules() {
    // The reference's output, for what the reference accepts.
    let s = session(&format!("[{REFERENCE_MESSAGES}]"));
    assert_eq!(
        export_markdown_text(&s, "20250101_000000"),
        REFERENCE_OUTPUT
    );
    // The crate's own choice, for what it rejects.
    let s = session(&format!("[{REFERENCE_MESSAGES}, {REJECTED_MESSAGES}]"));
    assert_eq!(
        export_markdown_text(&s, "20250101_000000"),
        format!("{REFERENCE_OUTPUT}{CRATE_CHOICE_OUTPUT}")
    );
}

#[test]
fn markdown_export_file_and_explicit_path() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, _) = occhat_support::store_at(&root, 1_744_016_143_000_000_000);
    let mut s = session(r#"[{"role": "user", "content": "q"}]"#);
    s.name = "a/b".into();
    let p = store.export_markdown(&s, None).unwrap();
    assert_eq!(p, root.join("a--b/a--b_2025-04-07--08-55-43_export.md"));
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(
        text.starts_with("# Chat Export — a/b\n"),
        "the title keeps the raw name"
    );
    let explicit = tmp.path().join("out.md");
    assert_eq!(
        store.export_markdown(&s, Some(&explicit)).unwrap(),
        explicit
    );
    assert_eq!(std::fs::read_to_string(&explicit).unwrap(), text);
    // A missing parent directory is an error, as open(..., "w") is.
    assert!(
        store
            .export_markdown(&s, Some(&tmp.path().join("no/such/dir.md")))
            .is_err()
    );
}

fn count(h: &str, needle: &str) -> usize {
    h.matches(needle).count()
}

#[test]
fn html_structure() {
    let s = session(
        r##"[
        {"role": "system", "content": "You are <b>terse</b>."},
        {"role": "user", "content": "  Show me *code* & a table  "},
        {"role": "user", "content": "   "},
        {"role": "tool", "content": "hidden"},
        {"role": "assistant", "content": "Here:\n\n```rust\nfn main() { println!(\"hi\"); }\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<script>alert(1)</script>\n\nSee ![img](http://example.com/x.png) [bad](javascript:alert(1)) [ok](https://example.com) <i>x</i>", "usage": {"total_tokens": 321}},
        {"role": "assistant", "content": "**plain** answer"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c"}]}
    ]"##,
    );
    let h = render_html(&s);
    assert!(h.starts_with("<!DOCTYPE html>\n<html"));
    assert!(h.trim_end().ends_with("</html>"));
    // Self-contained: inline CSS, no scripts, no external resources.
    assert_eq!(count(&h, "<style>"), 1);
    assert_eq!(count(&h, "<script"), 0);
    assert_eq!(count(&h, "<link"), 0);
    assert_eq!(count(&h, "<img"), 0);
    assert_eq!(count(&h, " src="), 0);
    assert_eq!(count(&h, "javascript:"), 0, "{h}");
    assert!(h.contains("href=\"https://example.com\""));
    assert!(
        h.contains("href=\"http://example.com/x.png\""),
        "the image became a link"
    );
    // Header: name (escaped), model, reasoning effort, token totals.
    assert!(h.contains("<h1>OC Chat — demo &lt;&amp;&gt;</h1>"));
    assert!(h.contains("<dd class=\"model\">model-x</dd>"));
    assert!(h.contains("<dd class=\"effort\">medium</dd>"));
    assert!(
        h.contains("<dt>Tokens, all calls:</dt><dd class=\"tokens\">1,234,656  <span class=\"dim\">(prompt: 1,234,567, completion: 89; summed over every call of the session")
    );
    // One panel per message with non-blank content; titles are the roles.
    assert_eq!(count(&h, "<section class=\"panel "), 4);
    assert_eq!(
        count(&h, "<section class=\"panel system\">\n<h2>System</h2>"),
        1
    );
    assert_eq!(count(&h, "<section class=\"panel user\">\n<h2>You</h2>"), 1);
    assert_eq!(
        count(
            &h,
            "<h2>Assistant — 321 tok <span class=\"dim\">(this call: prompt + completion)</span></h2>"
        ),
        1
    );
    assert_eq!(count(&h, "<h2>Assistant</h2>"), 1);
    assert!(!h.contains("hidden"), "tool messages are not exported");
    // System and user text is text: escaped, stripped, not rendered.
    assert!(h.contains("You are &lt;b&gt;terse&lt;/b&gt;."));
    assert!(h.contains("<div class=\"body plain\">Show me *code* &amp; a table</div>"));
    // Assistant Markdown is rendered; raw HTML in it is shown as text.
    assert!(h.contains("<strong>plain</strong> answer"));
    assert!(h.contains("<table>"));
    assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(h.contains("&lt;i&gt;x&lt;/i&gt;"), "inline HTML too");
    assert!(h.contains("<a href=\"\">bad</a>"), "unsafe target dropped");
    // Code is highlighted.
    assert!(h.contains("<pre><code class=\"language-rust\"><span class=\"k\">fn</span> <span class=\"f\">main</span>"));
    assert!(h.contains("<span class=\"s\">&quot;hi&quot;</span>"));
}

#[test]
fn html_export_file() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, clock) = occhat_support::store_at(&root, 1_744_016_143_000_000_000);
    let s = session(r#"[{"role": "user", "content": "q"}]"#);
    let p1 = store.export_html(&s, None).unwrap();
    assert!(
        p1.ends_with("demo _&_/demo _&__2025-04-07--08-55-43_export.html"),
        "{}",
        p1.display()
    );
    assert_eq!(std::fs::read_to_string(&p1).unwrap(), render_html(&s));
    clock.advance(std::time::Duration::from_secs(1));
    let p2 = store.export_html(&s, None).unwrap();
    assert_ne!(p1, p2);
    assert!(!p1.exists());
    assert!(
        root.join("archive/demo _&_")
            .join(p1.file_name().unwrap())
            .exists()
    );
    // A missing directory is an error, as for every output path (the seed
    // creates it): nothing is created.
    let explicit = tmp.path().join("nested/dir/x.html");
    let e = store.export_html(&s, Some(&explicit)).unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
    assert!(!tmp.path().join("nested").exists());
    std::fs::create_dir_all(explicit.parent().unwrap()).unwrap();
    store.export_html(&s, Some(&explicit)).unwrap();
    assert_eq!(std::fs::read_to_string(&explicit).unwrap(), render_html(&s));
}
