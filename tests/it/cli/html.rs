//! HTML transcripts (`agentlog html`, `openhands::html::write_transcript`):
//! a golden page of a corpus conversation, the whole corpus rendered and
//! checked for structure, hostile event text that must stay text, OC Chat
//! sessions through the command, `-o -`, refusals and exit codes, and a
//! generated conversation of 30,000 events.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use agentlog::openhands::html::write_transcript;
use agentlog::openhands::view::{View, ViewEntry, ViewOptions};
use agentlog::openhands::{find_sessions, read_conversation};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agentlog"));
    c.stdin(Stdio::null());
    c.env_remove("OC_CHAT_SESSIONS_DIR");
    c.env("TZ", "UTC");
    c
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    let out = bin().args(args).output().expect("run agentlog");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    out
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

/// The one conversation directory under a corpus scenario.
fn scenario(version: &str, name: &str) -> PathBuf {
    let dir = common::corpus_dir()
        .join("openhands")
        .join(version)
        .join(name);
    let mut found = find_sessions(&dir).expect("scenario");
    found.sort();
    found.into_iter().next().expect("a conversation")
}

fn render(dir: &Path) -> (String, agentlog::openhands::html::TranscriptSummary) {
    let conv = read_conversation(dir).expect("read");
    let mut out = Vec::new();
    let s = write_transcript(&conv, &ViewOptions::default(), &mut out).expect("render");
    (String::from_utf8(out).expect("utf-8"), s)
}

/// Every `src="…"` and `href="…"` value of the page.
fn loads(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in [" src=\"", " href=\""] {
        for (at, _) in html.match_indices(attr) {
            let rest = &html[at + attr.len()..];
            out.push(rest[..rest.find('"').unwrap_or(rest.len())].to_owned());
        }
    }
    out
}

/// The page loads nothing: its only URLs are in-page links and data:
/// images, and the policy forbids everything else.
fn assert_loads_nothing(html: &str) {
    assert!(html.contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">"
    ));
    for url in loads(html) {
        assert!(
            url.starts_with('#') || url.starts_with("data:image/"),
            "a load: {url}"
        );
    }
    assert!(!html.to_ascii_lowercase().contains("<script"));
    assert!(!html.to_ascii_lowercase().contains("<link"));
}

fn count(h: &str, pat: &str) -> usize {
    h.matches(pat).count()
}

/// Elements open and close in pairs.
fn assert_balanced(html: &str) {
    for tag in [
        "article", "details", "summary", "section", "pre", "header", "dl",
    ] {
        assert_eq!(
            count(html, &format!("<{tag}>")) + count(html, &format!("<{tag} ")),
            count(html, &format!("</{tag}>")),
            "<{tag}> unbalanced"
        );
    }
}

#[test]
fn golden_transcript_of_a_corpus_conversation() {
    let dir = scenario("1.58.2", "subagent");
    let (html, summary) = render(&dir);
    assert_eq!(
        summary.conversations, 2,
        "the conversation and its sub-agent"
    );
    assert!(summary.unread.is_empty());
    let html = html
        .replace(
            &common::corpus_dir().to_string_lossy().into_owned(),
            "CORPUS",
        )
        .replace(
            &format!("agentlog {}", env!("CARGO_PKG_VERSION")),
            "agentlog VERSION",
        );
    let golden =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden/openhands_transcript.html");
    if std::env::var_os("AGENTLOG_BLESS").is_some() {
        fs::write(&golden, &html).expect("bless");
    }
    let want = fs::read_to_string(&golden).expect("golden page (AGENTLOG_BLESS=1 writes it)");
    assert!(html == want, "the page differs from {}", golden.display());
}

#[test]
fn every_corpus_conversation_renders_and_loads_nothing() {
    let root = common::corpus_dir().join("openhands");
    let dirs = find_sessions(&root).expect("corpus");
    assert!(dirs.len() >= 30, "{} conversations", dirs.len());
    for dir in dirs {
        let conv = read_conversation(&dir).expect("read");
        let view = View::from_conversation(&conv, &ViewOptions::default());
        let mut out = Vec::new();
        let s = write_transcript(&conv, &ViewOptions::default(), &mut out).expect("render");
        let html = String::from_utf8(out).expect("utf-8");
        assert_loads_nothing(&html);
        assert_balanced(&html);
        // The top conversation's messages come first; each is an article.
        let top = &html[..html
            .find("<section class=\"conversation subagent\"")
            .unwrap_or(html.len())];
        assert_eq!(
            count(top, "<article class=\"msg "),
            view.messages().len(),
            "{}",
            dir.display()
        );
        assert!(s.unread.is_empty(), "{:?}", s.unread);
        assert!(s.conversations > conv.subagents().len());
        // Each condensation of the branch is marked.
        let condensations = view
            .conversation()
            .iter()
            .filter(|&&p| {
                view.events()[p].kind.as_ref().map(|k| k.as_str()) == Some("Condensation")
            })
            .count();
        assert_eq!(
            count(top, "<div class=\"mark condensation\">"),
            condensations,
            "{}",
            dir.display()
        );
        // Every assistant response that names its call shows that call's
        // own counts, labelled.
        if top.contains("<article class=\"msg assistant\"") && conv.state().is_some() {
            assert!(
                top.contains("Token usage, total over all model calls"),
                "{}",
                dir.display()
            );
        }
    }
}

#[test]
fn token_counts_say_what_they_count() {
    let (html, _) = render(&scenario("1.58.2", "coding"));
    assert!(html.contains(
        "<caption>Token usage, total over all model calls of this conversation</caption>"
    ));
    assert!(html.contains("<th>Prompt tokens, summed over calls</th>"));
    // The first call of the coding scenario: 8,196 prompt + 144 completion.
    assert!(html.contains(
        "This call: <b>8,196</b> prompt tokens (the context sent with this call) + <b>144</b> completion tokens = 8,340 tokens \u{b7} cost <b>$0.0267</b>"
    ), "{}", &html[..html.len().min(400)]);
    // The header's sums: 147,017 prompt and 1,466 completion over 15 calls.
    assert!(html.contains(
        "<td>15</td><td>147,017</td><td>104,111</td><td>1,466</td><td>148,483</td><td>$0.46</td>"
    ));
}

#[test]
fn images_are_embedded_as_data_urls() {
    let (html, _) = render(&scenario("1.58.2", "image"));
    assert!(
        count(
            &html,
            "<img class=\"content\" alt=\"image\" src=\"data:image/png;base64,"
        ) >= 1
    );
    assert_loads_nothing(&html);
}

/// A conversation whose every string tries to become markup.
fn hostile_conversation(dir: &Path) {
    let ev = dir.join("events");
    fs::create_dir_all(&ev).expect("mkdir");
    let plain = "</script><img src=x onerror=alert(1)>'";
    let evil = r#"</script><script>alert(1)</script><img src=x onerror=alert(1)>\" onmouseover=\"alert(2)\" '</pre></details></article>"#;
    fs::write(
        dir.join("base_state.json"),
        format!(
            r#"{{"id":"0123456789abcdef0123456789abcdef","agent":{{"kind":"Agent","llm":{{"model":"m{evil}"}}}},"stats":{{"usage_to_metrics":{{"agent":{{"model_name":"m{evil}","accumulated_cost":0.5,"accumulated_token_usage":{{"prompt_tokens":10,"completion_tokens":5}},"costs":[{{"cost":0.5}}],"response_latencies":[{{"latency":1.0,"response_id":"r{evil}"}}],"token_usages":[{{"prompt_tokens":10,"completion_tokens":5,"response_id":"r{evil}"}}]}}}}}}}}"#
        ),
    )
    .expect("state");
    fs::write(
        dir.join("meta.json"),
        format!(r#"{{"id":"0123456789abcdef0123456789abcdef","title":"t{evil}"}}"#),
    )
    .expect("meta");
    let events = [
        format!(
            r#"{{"id":"e0","timestamp":"t{evil}","source":"agent","system_prompt":{{"type":"text","text":"sys{evil}"}},"tools":[],"kind":"SystemPromptEvent"}}"#
        ),
        format!(
            r#"{{"id":"e1","timestamp":"2026-01-01T00:00:00","source":"user","llm_message":{{"role":"user","content":[{{"type":"text","text":"hi{evil}"}},{{"type":"image","image_urls":["https://evil.example/x.png","javascript:alert(1)","data:image/png;base64,AAA\" onerror=\"alert(1)","data:image/svg+xml;base64,PHN2Zz4="]}}]}},"kind":"MessageEvent"}}"#
        ),
        format!(
            r#"{{"id":"e2","timestamp":"2026-01-01T00:00:01","source":"agent","thought":[{{"type":"text","text":"th{evil}"}}],"reasoning_content":"rc{evil}","action":{{"command":"ls","kind":"TerminalAction"}},"tool_name":"t{evil}","tool_call_id":"c{evil}","tool_call":{{"id":"c{evil}","name":"n{evil}","arguments":"{{\"command\": \"echo {plain}\", \"k{plain}\": 1}}","origin":"completion"}},"llm_response_id":"r{evil}","kind":"ActionEvent"}}"#
        ),
        format!(
            r#"{{"id":"e3","timestamp":"2026-01-01T00:00:02","source":"environment","tool_name":"t{evil}","tool_call_id":"c{evil}","observation":{{"content":[{{"type":"text","text":"out{evil}"}}],"is_error":false,"kind":"FileEditorObservation"}},"action_id":"e2","kind":"ObservationEvent"}}"#
        ),
        format!(
            r#"{{"id":"e4","timestamp":"2026-01-01T00:00:03","source":"agent","llm_message":{{"role":"assistant","content":[{{"type":"text","text":"done{evil}"}}]}},"llm_response_id":"q{evil}","kind":"MessageEvent"}}"#
        ),
        format!(
            r#"{{"id":"e5","timestamp":"2026-01-01T00:00:04","source":"user","kind":"Pause{evil}"}}"#
        ),
    ];
    for (i, e) in events.iter().enumerate() {
        fs::write(
            ev.join(format!(
                "event-{i:05}-0000000{i}-aaaa-bbbb-cccc-dddddddddddd.json"
            )),
            e,
        )
        .expect("event");
    }
}

#[test]
fn hostile_text_stays_text() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("0123456789abcdef0123456789abcdef");
    hostile_conversation(&dir);
    let (html, summary) = render(&dir);
    assert_eq!(
        summary.messages, 5,
        "system, user, assistant call, result, answer"
    );
    assert_loads_nothing(&html);
    assert_balanced(&html);
    // No markup from the files: the only elements are the page's own.
    assert!(!html.contains("<img src=x"));
    assert!(!html.contains("onerror=\"alert"));
    assert!(!html.contains("onmouseover=\""));
    assert!(html.contains("<dt>k&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&#39;</dt>"));
    assert_eq!(count(&html, "<img"), 0, "no image is embeddable here");
    assert_eq!(count(&html, "</article>"), 5);
    assert!(html.contains(
        "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
    ));
    // Every string of the files shows up escaped where it belongs.
    for shown in [
        "<title>OpenHands \u{2014} t&lt;/script&gt;",
        "sys&lt;/script&gt;",
        "hi&lt;/script&gt;",
        "th&lt;/script&gt;",
        "rc&lt;/script&gt;",
        "n&lt;/script&gt;",
        "out&lt;/script&gt;",
        "done&lt;/script&gt;",
        "Pause&lt;/script&gt;",
        "<td>m&lt;/script&gt;",
    ] {
        assert!(html.contains(shown), "missing {shown}");
    }
    // The usage of the call is found by its (hostile) response ID.
    assert!(html.contains("This call: <b>10</b> prompt tokens"));
    // Images that are not data: rasters are named, not loaded.
    assert_eq!(count(&html, "image not embedded"), 4);
}

#[test]
fn command_writes_a_file_and_standard_output() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = scenario("1.58.2", "coding");
    let file = tmp.path().join("t.html");
    let out = run(&[os("html"), dir.as_os_str(), os("-o"), file.as_os_str()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let page = fs::read(&file).expect("written");
    let out = run(&[os("html"), dir.as_os_str(), os("-o"), os("-")]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        out.stdout, page,
        "-o - writes the same page to standard output"
    );
    assert!(page.starts_with(b"<!DOCTYPE html>\n"));
    // Written again: replaced, no temporary file left.
    let out = run(&[os("html"), dir.as_os_str(), os("-o"), file.as_os_str()]);
    assert_eq!(out.status.code(), Some(0));
    let names: Vec<_> = fs::read_dir(tmp.path())
        .expect("ls")
        .map(|e| e.expect("e").file_name())
        .collect();
    assert_eq!(names, ["t.html"]);
}

#[test]
fn command_refuses_and_exits_as_documented() {
    let tmp = tempfile::tempdir().expect("tmp");
    let conv = tmp.path().join("conv");
    common::copy_tree(&scenario("1.58.2", "chat"), &conv);
    // Not into the conversation it shows.
    let inside = conv.join("events").join("page.html");
    let out = run(&[os("html"), conv.as_os_str(), os("-o"), inside.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("inside the conversation directory"));
    assert!(!inside.exists());
    // A path that is not there: 2.
    let out = run(&[
        os("html"),
        tmp.path().join("nothing").as_os_str(),
        os("-o"),
        os("-"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    // A branch that is not there: 1, and nothing written.
    let page = tmp.path().join("p.html");
    let out = run(&[
        os("html"),
        conv.as_os_str(),
        os("--branch"),
        os("nosuch"),
        os("-o"),
        page.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!page.exists());
    // Without -o the page is standard output, as `export` writes.
    let out = run(&[os("html"), conv.as_os_str()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout.starts_with(b"<!DOCTYPE html>"),
        "{}",
        String::from_utf8_lossy(&out.stdout[..out.stdout.len().min(80)])
    );
}

#[test]
fn command_renders_oc_chat_sessions() {
    let tmp = tempfile::tempdir().expect("tmp");
    let sessions = tmp.path().join("sessions");
    common::copy_tree(
        &common::corpus_dir().join("occhat/sample_basic/sessions"),
        &sessions,
    );
    let session = sessions.join("sql-tuning");
    // A session directory.
    let a = tmp.path().join("a.html");
    let out = run(&[os("html"), session.as_os_str(), os("-o"), a.as_os_str()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = fs::read_to_string(&a).expect("page");
    assert!(page.contains("<h1>OC Chat — sql-tuning</h1>"));
    assert!(page.contains("<dt>Tokens, all calls:</dt>"));
    assert!(page.contains(" tok <span class=\"dim\">(this call: prompt + completion)</span>"));
    // Its meta file, and --sessions-dir with a name to standard output: the same page.
    let meta = fs::read_dir(&session)
        .expect("ls")
        .map(|e| e.expect("e").path())
        .find(|p| p.to_string_lossy().ends_with("_meta.json"))
        .expect("meta");
    let b = tmp.path().join("b.html");
    let out = run(&[os("html"), meta.as_os_str(), os("-o"), b.as_os_str()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(fs::read_to_string(&b).expect("b"), page);
    let out = run(&[
        os("html"),
        os("--sessions-dir"),
        sessions.as_os_str(),
        os("sql-tuning"),
        os("-o"),
        os("-"),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), page);
    // A session that is not there: 1. The sessions root itself: 2, naming the way.
    let out = run(&[
        os("html"),
        os("--sessions-dir"),
        sessions.as_os_str(),
        os("nosuch"),
        os("-o"),
        os("-"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let out = run(&[os("html"), sessions.as_os_str(), os("-o"), os("-")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sessions-dir"));
    // A record of the store is never the output.
    let out = run(&[os("html"), session.as_os_str(), os("-o"), meta.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        fs::read_to_string(&meta)
            .expect("meta")
            .trim_start()
            .starts_with('{')
    );
}

#[test]
fn thirty_thousand_events_render() {
    // Without a condenser every event is in the context; with one, most
    // are forgotten and shown outside it.
    for condenser_ratio in [0.0, 1.0] {
        thirty_thousand(condenser_ratio);
    }
}

fn thirty_thousand(condenser_ratio: f64) {
    let tmp = tempfile::tempdir().expect("tmp");
    let cfg = agentlog::synth::GenConfig {
        conversations: 1,
        events_per_conversation: 30_000,
        seed: 13,
        subagent_ratio: 0.0,
        condenser_ratio,
        branch_ratio: 0.0,
        threads: 1,
        ..Default::default()
    };
    agentlog::synth::write_store(tmp.path(), &cfg).expect("generate");
    let dirs = find_sessions(tmp.path()).expect("find");
    let conv = read_conversation(dirs.first().expect("one")).expect("read");
    assert_eq!(conv.len(), 30_000);
    let view = View::from_conversation(&conv, &ViewOptions::default());
    let start = Instant::now();
    let mut out = Vec::new();
    let s = write_transcript(&conv, &ViewOptions::default(), &mut out).expect("render");
    let took = start.elapsed();
    let input = conv.event_bytes().len() + conv.state().map_or(0, |f| f.raw().len());
    eprintln!(
        "30,000 events (condenser ratio {condenser_ratio}): {} bytes of events -> {} bytes of HTML in {took:?} ({} messages, {} events outside the context)",
        input,
        out.len(),
        s.messages,
        s.outside
    );
    assert_eq!(s.messages, view.messages().len());
    assert_eq!(
        count(
            std::str::from_utf8(&out).expect("utf-8"),
            "<article class=\"msg "
        ),
        s.messages
    );
    // Every event of the branch is shown: in a message, or outside the context.
    let mut in_context = vec![false; view.events().len()];
    for e in view.context() {
        if let ViewEntry::Event(p) = *e {
            in_context[p] = true;
        }
    }
    let outside = view
        .conversation()
        .iter()
        .filter(|&&p| !in_context[p])
        .count();
    assert_eq!(s.outside, outside);
    if condenser_ratio > 0.0 {
        assert!(
            outside > 10_000,
            "the generated condensations forget events"
        );
    } else {
        assert!(s.messages > 10_000, "{} messages", s.messages);
    }
    // Sane size: escaping at most sextuples a byte, plus bounded markup per event.
    assert!(
        out.len() <= 6 * input + 4_000 * conv.len(),
        "{} bytes",
        out.len()
    );
    assert!(out.len() >= input / 4, "{} bytes", out.len());
    let html = String::from_utf8(out).expect("utf-8");
    assert_balanced(&html);
    assert!(html.contains("content-visibility: auto"));
    assert!(html.ends_with("</html>\n"));
}
