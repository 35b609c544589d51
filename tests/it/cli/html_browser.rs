//! HTML transcripts in a real browser: headless Chromium (Debian's
//! `chromium` package) loads pages `agentlog html` wrote from the corpus,
//! with every host name mapped to nowhere. The DOM it reports
//! (`--dump-dom`) must hold the messages, the collapsible tool calls and
//! results and the labelled token counts; a screenshot must not be blank.
//! Without `chromium` on PATH the test says so and passes, unless `CI` is
//! set, where it fails.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `chromium` on PATH.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
}

/// Runs chromium headless on `page` with `args`, with a fresh profile and
/// no name resolution; standard output, or a failure after two minutes.
fn headless(chromium: &Path, profile: &Path, page: &Path, args: &[String]) -> Vec<u8> {
    let mut c = Command::new(chromium);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(args)
    .arg(format!("file://{}", page.display()))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    let mut child = c.spawn().expect("start chromium");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish in two minutes");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    assert!(out.status.success(), "chromium failed: {:?}", out.status);
    out.stdout
}

fn render(conv: &Path, page: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_agentlog"))
        .args([
            "html".as_ref(),
            conv.as_os_str(),
            "-o".as_ref(),
            page.as_os_str(),
        ])
        .output()
        .expect("run agentlog");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn scenario(version: &str, name: &str) -> PathBuf {
    let dir = common::corpus_dir()
        .join("openhands")
        .join(version)
        .join(name);
    let mut found = agentlog::openhands::find_sessions(&dir).expect("scenario");
    found.sort();
    found.into_iter().next().expect("a conversation")
}

/// Every `src`/`href` of the page is in-page or a data: image.
fn assert_no_network_urls(html: &str) {
    for attr in [" src=\"", " href=\""] {
        for (at, _) in html.match_indices(attr) {
            let rest = &html[at + attr.len()..];
            let url = &rest[..rest.find('"').unwrap_or(rest.len())];
            assert!(
                url.starts_with('#') || url.starts_with("data:image/"),
                "a load: {url}"
            );
        }
    }
}

#[test]
fn chromium_shows_the_transcript() {
    let Some(chromium) = chromium() else {
        if std::env::var_os("CI").is_some() {
            panic!("chromium is not on PATH and CI is set (.ci/run installs Debian's chromium)");
        }
        eprintln!("html_browser: chromium is not on PATH; skipped (CI unset)");
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let profile = tmp.path().join("profile");
    let page = tmp.path().join("subagent.html");
    render(&scenario("1.58.2", "subagent"), &page);
    let html = fs::read_to_string(&page).expect("page");
    assert_no_network_urls(&html);

    // The DOM the browser built.
    let dom = String::from_utf8(headless(&chromium, &profile, &page, &["--dump-dom".into()]))
        .expect("utf-8 DOM");
    assert!(
        dom.contains("<section class=\"conversation\" id=\"c-"),
        "{}",
        &dom[..dom.len().min(500)]
    );
    assert!(dom.contains("<section class=\"conversation subagent\""));
    assert!(
        dom.matches("<article class=\"msg ").count() >= 20,
        "both conversations' messages"
    );
    assert!(dom.contains("<article class=\"msg assistant\""));
    assert!(dom.contains("<article class=\"msg tool\""));
    assert!(dom.contains("<details class=\"call\"><summary><span class=\"tool\">task</span>"));
    assert!(dom.contains("<details class=\"result\">"));
    assert!(dom.contains("Token usage, total over all model calls of this conversation"));
    assert!(dom.contains("prompt tokens (the context sent with this call"));
    assert!(dom.contains("Have a sub-agent review deploy.sh"));
    assert!(!dom.contains("<script"));

    // A screenshot that is not blank: the page's text and panels vary the pixels.
    let png = tmp.path().join("shot.png");
    headless(
        &chromium,
        &profile,
        &page,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1280,2000".into(),
            "--hide-scrollbars".into(),
        ],
    );
    let decoder = png::Decoder::new(fs::File::open(&png).expect("screenshot"));
    let mut reader = decoder.read_info().expect("png");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("frame");
    assert_eq!((info.width, info.height), (1280, 2000));
    let channels = info.color_type.samples();
    let bytes = buf.get(..info.buffer_size()).expect("frame bytes");
    let lum: Vec<f64> = bytes
        .chunks_exact(channels)
        .map(|p| {
            let [r, g, b] = [p[0], p[1.min(channels - 1)], p[2.min(channels - 1)]];
            0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)
        })
        .collect();
    let mean = lum.iter().sum::<f64>() / lum.len() as f64;
    let var = lum.iter().map(|l| (l - mean) * (l - mean)).sum::<f64>() / lum.len() as f64;
    let dark = lum.iter().filter(|&&l| l < 128.0).count();
    eprintln!("screenshot: mean luminance {mean:.1}, variance {var:.1}, {dark} dark pixels");
    assert!(
        var > 100.0,
        "a blank-looking screenshot (variance {var:.1})"
    );
    assert!(dark > 10_000, "too little text drawn ({dark} dark pixels)");
    assert!(
        mean > 128.0,
        "the page is light; a dark screenshot is not the page"
    );
}

#[test]
fn chromium_shows_an_oc_chat_session() {
    let Some(chromium) = chromium() else {
        if std::env::var_os("CI").is_some() {
            panic!("chromium is not on PATH and CI is set");
        }
        eprintln!("html_browser: chromium is not on PATH; skipped (CI unset)");
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let sessions = common::corpus_dir().join("occhat/sample_basic/sessions");
    let page = tmp.path().join("session.html");
    let out = Command::new(env!("CARGO_BIN_EXE_agentlog"))
        .args([
            "html".as_ref(),
            "--sessions-dir".as_ref(),
            sessions.as_os_str(),
            "sql-tuning".as_ref(),
            "-o".as_ref(),
            page.as_os_str(),
        ])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_no_network_urls(&fs::read_to_string(&page).expect("page"));
    let dom = String::from_utf8(headless(
        &chromium,
        &tmp.path().join("profile"),
        &page,
        &["--dump-dom".into()],
    ))
    .expect("utf-8");
    assert!(dom.contains("<h1>OC Chat — sql-tuning</h1>"));
    assert!(dom.contains("<dt>Tokens, all calls:</dt>"));
    assert!(dom.contains("<section class=\"panel assistant\">"));
}
