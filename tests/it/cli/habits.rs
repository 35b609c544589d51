//! One command, one set of habits (issue 35, section 3): one theme for
//! both stores' HTML pages, `stats` labels and unknown costs, the
//! top-level help naming what `follow` follows, `occhat show` numbers and
//! dates, a missing sessions directory, close names for a session that is
//! not there.

use super::*;

fn html_of(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// The `color-scheme` the last `:root` rule of the page's styles sets.
fn scheme(page: &str) -> &str {
    let at = page.rfind("color-scheme: ").expect("a color-scheme") + "color-scheme: ".len();
    let rest = &page[at..];
    &rest[..rest.find(';').unwrap()]
}

#[test]
fn html_pages_of_both_stores_share_one_theme() {
    let conv = scenario_dir("1.58.2", "chat");
    let sessions = occhat_support::corpus().join("sample_basic/sessions");
    let session = sessions.join("sql-tuning");
    let oh = html_of(&["html", p(&conv)]);
    let oc = html_of(&["html", p(&session)]);
    assert_eq!(scheme(&oh), "light");
    assert_eq!(scheme(&oc), "light");
    // The same background whichever store.
    assert!(oh.contains("--bg: #ffffff") && oc.contains("background: #ffffff"));
    for theme in ["light", "dark"] {
        let oh = html_of(&["html", p(&conv), "--theme", theme]);
        let oc = html_of(&["html", p(&session), "--theme", theme]);
        assert_eq!(scheme(&oh), theme);
        assert_eq!(scheme(&oc), theme);
        if theme == "dark" {
            assert!(oh.contains("--bg: #1e1f1c") && oc.contains("background: #1e1f1c"));
        }
        // Colours only: the same page otherwise.
        let strip = |s: &str| s[s.find("</style>").unwrap()..].to_owned();
        assert_eq!(strip(&oh), strip(&html_of(&["html", p(&conv)])));
    }
    // The library's OC Chat export keeps OC Chat's own dark page.
    let store = agentlog::occhat::SessionStore::new(&sessions);
    let s = store.load_session("sql-tuning").unwrap();
    let dark = agentlog::occhat::render_html(&s);
    assert_eq!(scheme(&dark), "dark");
    assert_eq!(
        dark,
        agentlog::occhat::render_html_themed(&s, agentlog::theme::Theme::Dark)
    );
    let out = run(&["html", p(&conv), "--theme", "sepia"]);
    assert_eq!(code(&out), 2);
}

#[test]
fn stats_labels_only_the_formats_read_and_unknown_costs_alike() {
    let occhat = occhat_support::corpus().join("sample_basic/sessions");
    let asf = common::data_dir().join("asf/sessions/basic.jsonl");
    let oh = scenario_dir("1.58.2", "chat");
    let text = |args: &[&str]| {
        let out = run(args);
        assert!(code(&out) <= 1, "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    let only_occhat = text(&["stats", p(&occhat)]);
    assert!(only_occhat.contains("sessions (OC Chat) "), "{only_occhat}");
    assert!(
        only_occhat.contains("messages by role (OC Chat) "),
        "{only_occhat}"
    );
    assert!(!only_occhat.contains("ASF"), "{only_occhat}");
    assert!(!only_occhat.contains("OpenHands"), "{only_occhat}");
    let only_asf = text(&["stats", p(&asf)]);
    assert!(only_asf.contains("sessions (ASF) "), "{only_asf}");
    assert!(!only_asf.contains("OC Chat") && !only_asf.contains("OpenHands"));
    let only_oh = text(&["stats", p(&oh)]);
    assert!(only_oh.contains("OpenHands conversations"), "{only_oh}");
    assert!(!only_oh.contains("OC Chat") && !only_oh.contains("ASF"));
    let all = text(&["stats", p(&occhat), p(&asf), p(&oh)]);
    assert!(all.contains("sessions (OC Chat, ASF) "), "{all}");
    // The usage rows: the cost is `-` where the format records none (OC
    // Chat, ASF), dollars where it does; calls `-` for OC Chat only.
    let usage = |t: &str, model_of: &str| -> Vec<String> {
        t.lines()
            .skip_while(|l| !l.starts_with("usage by model"))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter(|l| l.trim_start().starts_with(model_of))
            .map(|l| l.split_whitespace().map(str::to_owned).collect())
            .map(|v: Vec<String>| v.join(" "))
            .collect()
    };
    let last = |row: &str| row.rsplit(' ').next().unwrap().to_owned();
    let second = |row: &str| row.split(' ').nth(1).unwrap().to_owned();
    for row in usage(&all, "deepseek") {
        assert_eq!(last(&row), "-", "{row}");
        assert_eq!(second(&row), "-", "{row}");
    }
    let asf_rows = usage(&only_asf, "");
    assert!(!asf_rows.is_empty(), "{only_asf}");
    for row in &asf_rows {
        assert_eq!(last(row), "-", "{row}");
        assert!(second(row).parse::<u64>().is_ok(), "{row}");
    }
    for row in usage(&all, "openai/fake-model") {
        assert!(last(&row).starts_with('$'), "{row}");
    }
    // The JSON keeps its shape (cost 0 where none is recorded).
    let v = json(&ok(&["stats", "--json", p(&asf)]));
    for u in v["usage"].as_object().unwrap().values() {
        assert_eq!(
            keys(u),
            [
                "calls",
                "prompt_tokens",
                "completion_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
                "reasoning_tokens",
                "cost"
            ]
        );
    }
}

#[test]
fn top_level_help_says_follow_follows_oc_chat() {
    let help = ok(&["--help"]);
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("follow "))
        .expect("follow listed");
    assert!(line.contains("OC Chat"), "{line}");
}

#[test]
fn occhat_show_groups_numbers_and_shows_dates() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("sessions");
    let (store, _) = occhat_support::store_at(&sessions, 1_744_016_143_000_000_000);
    let mut s = agentlog::occhat::ChatSession::new("big", "deepseek-chat");
    s.stats.total_prompt_tokens = 1_234_567;
    s.stats.total_completion_tokens = 8_901;
    s.stats.total_tokens = 1_243_468;
    s.messages
        .push(agentlog::json::OwnedValue::parse(br#"{"role": "user", "content": "hi"}"#).unwrap());
    store.save_all(&mut s).unwrap();
    let text = ok(&["occhat", "--sessions-dir", p(&sessions), "show", "big"]);
    assert!(
        text.contains("tokens:    1,234,567 prompt, 8,901 completion, 1,243,468 total"),
        "{text}"
    );
    let created = text
        .lines()
        .find(|l| l.starts_with("created:"))
        .expect("created");
    let date = created["created:".len()..].trim();
    // YYYY-MM-DD HH:MM:SS.
    let b = date.as_bytes();
    assert_eq!(b.len(), 19, "{created}");
    assert!(b[4] == b'-' && b[7] == b'-' && b[10] == b' ' && b[13] == b':' && b[16] == b':');
    // --json keeps the numbers and stamps as recorded.
    let v = json(&ok(&[
        "occhat",
        "--sessions-dir",
        p(&sessions),
        "show",
        "big",
        "--json",
    ]));
    assert_eq!(
        keys(&v),
        [
            "filepath",
            "validated",
            "metadata",
            "messages",
            "chat_log_load_failed"
        ]
    );
}

#[test]
fn occhat_missing_sessions_dir_and_close_names() {
    for cmd in [
        vec!["list"],
        vec!["show", "x"],
        vec!["tail", "x"],
        vec!["export-md", "x"],
        vec!["migrate", "--dry-run"],
    ] {
        let mut args = vec!["occhat", "--sessions-dir", "/nonexistent/sessions"];
        args.extend(&cmd);
        let out = run(&args);
        assert_eq!(code(&out), 2, "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains("/nonexistent/sessions") && err.contains("missing"),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // The default directory, missing, says it is the default.
    let tmp = tempfile::tempdir().unwrap();
    let out = run_in(Some(tmp.path()), &["occhat", "list"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--sessions-dir"), "{}", stderr(&out));
    // A name that is not there: status 1 and the close names.
    let sessions = occhat_support::corpus().join("sample_basic/sessions");
    for (asked, close) in [("weekly-reprot", "weekly-report"), ("sql", "sql-tuning")] {
        for sub in ["show", "tail", "export-md"] {
            let out = run(&["occhat", "--sessions-dir", p(&sessions), sub, asked]);
            assert_eq!(code(&out), 1, "{sub} {asked}");
            let err = stderr(&out);
            assert!(
                err.contains(&format!("close names: {close}")),
                "{sub}: {err}"
            );
        }
        let out = run(&["html", "--sessions-dir", p(&sessions), asked]);
        assert_eq!(code(&out), 1);
        assert!(stderr(&out).contains(close), "{}", stderr(&out));
    }
    let out = run(&[
        "occhat",
        "--sessions-dir",
        p(&sessions),
        "show",
        "qqqqqqqqqq",
    ]);
    assert_eq!(code(&out), 1);
    assert!(!stderr(&out).contains("close names"), "{}", stderr(&out));
}
