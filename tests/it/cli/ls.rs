//! `agentlog ls`: conversations and their meta, as JSON and text.

use super::*;

#[test]
fn ls_json_over_the_corpus() {
    let root = openhands_corpus();
    let rows = json_lines(&ok(&["ls", "--json", p(&root)]));
    let oracles = oracles();
    let top: Vec<&Oracle> = oracles.iter().filter(|o| !o.subagent).collect();
    assert_eq!(rows.len(), top.len());
    let mut paths: Vec<&str> = rows.iter().map(|r| r["path"].as_str().unwrap()).collect();
    let sorted = {
        let mut s = paths.clone();
        s.sort();
        s
    };
    assert_eq!(paths, sorted, "sorted paths");
    paths.dedup();
    assert_eq!(paths.len(), rows.len());
    for r in &rows {
        assert_eq!(keys(r), LS_KEYS);
        assert_eq!(r["format"], "openhands");
        assert!(r["title"].is_null(), "no meta.json in the corpus");
        let dir = PathBuf::from(r["path"].as_str().unwrap());
        let o = top.iter().find(|o| o.dir == dir).expect("an oracle");
        assert_eq!(r["id"], o.conv["base_state"]["id_hex"]);
        assert_eq!(r["model"], o.conv["base_state"]["llm_model"]);
        assert_eq!(r["events"], o.conv["event_count"]);
        let first_ts = r["created"].as_str().unwrap();
        assert!(first_ts.starts_with("20"), "{first_ts}");
        assert!(r["updated"].as_str().unwrap() >= first_ts);
        let subs = oracles
            .iter()
            .filter(|s| s.subagent && s.dir.starts_with(&o.dir))
            .count();
        assert_eq!(r["subagents"], subs as u64, "{}", o.dir.display());
    }
    assert!(rows.iter().any(|r| r["subagents"] == 1));
}

#[test]
fn ls_text_and_a_conversation_given_by_a_file() {
    let dir = scenario_dir("1.58.2", "chat");
    let out = ok(&["ls", p(&dir)]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("FORMAT"));
    let id = dir.file_name().unwrap().to_str().unwrap();
    assert!(lines[1].starts_with("openhands") && lines[1].contains(&id[..8]));
    // A file of the conversation names it too.
    let rows = json_lines(&ok(&["ls", "--json", p(&dir.join("base_state.json"))]));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], id);
}

#[test]
fn ls_uses_meta_json_when_present() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp
        .path()
        .join(scenario_dir("1.58.2", "chat").file_name().unwrap());
    common::copy_tree(&scenario_dir("1.58.2", "chat"), &dir);
    let id = dir.file_name().unwrap().to_str().unwrap().to_owned();
    fs::write(
        dir.join("meta.json"),
        format!(
            r#"{{"id":"{id}","title":"Fix the build","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T04:00:00Z","forked_from_conversation_id":null}}"#
        ),
    )
    .unwrap();
    let rows = json_lines(&ok(&["ls", "--json", p(tmp.path())]));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["title"], "Fix the build");
    assert_eq!(rows[0]["created"], "2026-01-02T03:04:05Z");
    assert_eq!(rows[0]["updated"], "2026-01-02T04:00:00Z");
}

/// The `ls` table at 100 columns with a 180-character name, CJK and emoji
/// names, an NFD name and a CJK title: every column kept, every line within
/// 100 display columns, the widest column cut in the middle (golden
/// `tests/data/golden/cli/ls_wide_names.txt`; `AGENTLOG_BLESS=1` rewrites it).
#[test]
fn ls_table_of_long_wide_and_nfd_names_fits_100_columns() {
    use agentlog::json::OwnedValue;
    use agentlog::occhat::ChatSession;
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("sessions");
    let (store, _) = occhat_support::store_at(&sessions, 1_744_016_143_000_000_000);
    let long = format!("quarterly-{}-review", "x".repeat(166));
    let names = [
        long.as_str(),
        "会议记录：项目计划与预算",
        "🚀 launch day 🎉",
        "Cafe\u{301} re\u{301}sume\u{301}",
        "Café résumé",
    ];
    for name in names {
        let mut s = ChatSession::new(name, "deepseek-chat");
        s.messages
            .push(OwnedValue::parse(br#"{"role": "user", "content": "hi"}"#).unwrap());
        store.save_all(&mut s).unwrap();
    }
    for e in fs::read_dir(&sessions).unwrap().flatten() {
        for f in fs::read_dir(e.path()).unwrap().flatten() {
            occhat_support::set_mtime(
                &f.path(),
                occhat_support::from_ns(1_744_016_143_000_000_000),
            );
        }
    }
    let src = scenario_dir("1.58.2", "chat");
    let conv = tmp.path().join("openhands").join(src.file_name().unwrap());
    common::copy_tree(&src, &conv);
    fs::write(
        conv.join("meta.json"),
        r#"{"title": "调试登录页面的问题 🐛 and a title long enough to need cutting somewhere"}"#,
    )
    .unwrap();
    let mut c = bin();
    c.args(["ls", p(&sessions), p(&conv)])
        .env("TZ", "UTC")
        .env("COLUMNS", "100");
    let out = c.output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let width = |l: &str| {
        // Display width: two columns for CJK and emoji, none for a
        // combining mark (the few ranges the names above use).
        l.chars()
            .map(|ch| match ch as u32 {
                0x300..=0x36f => 0,
                0x3000..=0x9fff | 0xff00..=0xffef | 0x1f300..=0x1faff => 2,
                _ => 1,
            })
            .sum::<usize>()
    };
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + names.len() + 1, "{text}");
    assert!(
        lines[0].contains("  PATH  ") && lines[0].ends_with("  TITLE"),
        "{text}"
    );
    for l in &lines {
        assert!(width(l) <= 100, "{} columns: {l}", width(l));
        assert!(l.starts_with("FORMAT") || l.starts_with("occhat") || l.starts_with("openhands"));
    }
    // The NFD and NFC spellings of a name line up alike.
    let nfd = lines.iter().find(|l| l.contains("Cafe\u{301}")).unwrap();
    let nfc = lines.iter().find(|l| l.contains("Café")).unwrap();
    assert_eq!(width(nfd), width(nfc), "{nfd}\n{nfc}");
    // The long name keeps both ends.
    assert!(text.contains("quar…view"), "{text}");
    let golden = common::data_dir().join("golden/cli/ls_wide_names.txt");
    if std::env::var_os("AGENTLOG_BLESS").is_some() {
        fs::write(&golden, &text).unwrap();
    }
    let want = fs::read_to_string(&golden).unwrap_or_default();
    assert_eq!(text, want, "golden {}", golden.display());
}
