//! The HTML export's code highlighting, language by language, against a
//! golden page (`tests/data/golden/occhat_languages.html`, reviewed in a
//! browser). Each language that the export highlighted before syntect
//! (Rust, Python, JavaScript/TypeScript, C-family, Go, Java, shell, SQL,
//! JSON, TOML, YAML) must still colour its comments, strings, numbers and
//! keywords. `AGENTLOG_BLESS=1` rewrites the golden page after a reviewed
//! change.

use agentlog::json::OwnedValue;
use agentlog::occhat::{ChatSession, render_html};

/// (fence tag, code, the token classes that must appear).
const SAMPLES: &[(&str, &str, &[&str])] = &[
    (
        "rust",
        "// Sum the squares.\nfn squares(v: &[i64]) -> i64 {\n    let s = \"<done>\";\n    v.iter().map(|x| x * x).sum::<i64>() + 0x1F\n}\n",
        &["c", "k", "f", "s", "n", "t"],
    ),
    (
        "python",
        "# A class.\nclass Point:\n    def norm(self, scale=2.5):\n        \"\"\"Doc.\"\"\"\n        label = f'{scale}x'\n        return (self.x ** 2) * scale if True else None\n",
        &["c", "k", "f", "s", "n"],
    ),
    (
        "js",
        "// fetch it\nasync function load(url) {\n  const r = await fetch(url, { retries: 3 });\n  return `got ${r.status}`;\n}\n",
        &["c", "k", "f", "s", "n"],
    ),
    (
        "ts",
        "/* typed */\nexport function add(a: number, b: number): number {\n  const label = 'sum';\n  return a + b + 1;\n}\n",
        &["c", "k", "f", "s", "n"],
    ),
    (
        "c",
        "#include <stdio.h>\n/* entry */\nint main(void) {\n    printf(\"%d\\n\", 42);\n    return 0;\n}\n",
        &["c", "k", "s", "n", "t"],
    ),
    (
        "cpp",
        "// vector\n#include <vector>\nint total(const std::vector<int>& v) {\n    auto s = 0; for (int x : v) s += x; return s + 7;\n}\nconst char* name = \"cpp\";\n",
        &["c", "k", "s", "n", "t"],
    ),
    (
        "go",
        "// Package main.\npackage main\n\nimport \"fmt\"\n\nfunc main() {\n\tx := 10\n\tfmt.Println(\"x =\", x)\n}\n",
        &["c", "k", "f", "s", "n"],
    ),
    (
        "java",
        "// Hello.\npublic class Hello {\n    public static void main(String[] args) {\n        int n = 3;\n        System.out.println(\"hi \" + n);\n    }\n}\n",
        &["c", "k", "f", "s", "n"],
    ),
    (
        "sh",
        "#!/bin/sh\n# copy files\nfor f in *.txt; do\n  cp \"$f\" /tmp/ && echo 'ok' $HOME 2\ndone\n",
        &["c", "k", "s", "v"],
    ),
    (
        "sql",
        "-- active users\nSELECT id, name FROM users WHERE active = 1 AND name <> 'x';\n",
        &["c", "k", "s", "n"],
    ),
    (
        "json",
        "{\"name\": \"agentlog\", \"version\": 1.5, \"ok\": true, \"tags\": [null]}\n",
        &["s", "n"],
    ),
    (
        "toml",
        "# manifest\n[package]\nname = \"agentlog\"\nversion = \"0.1.0\"\nedition = 2024\npublish = false\n",
        &["c", "f", "s", "n", "k"],
    ),
    (
        "yaml",
        "# config\nname: agentlog\nversion: 1.5\nenabled: true\nlist:\n  - 'a'\n",
        &["c", "k", "s", "n"],
    ),
    (
        "html",
        "<!-- page -->\n<a href=\"x\" onclick=\"alert(1)\">link</a>\n<script>alert('x')</script>\n",
        &["c", "k", "f", "s"],
    ),
];

fn page() -> String {
    let mut s = ChatSession::new("highlighting <golden>", "model-x");
    let mut md = String::from("Every language the export highlights.\n\n");
    for (tag, code, _) in SAMPLES {
        md.push_str(&format!("**{tag}**\n\n```{tag}\n{code}```\n\n"));
    }
    md.push_str("An unknown tag stays plain:\n\n```nope\nx = \"<b>\" # 1\n```\n");
    let msg = OwnedValue::parse(
        format!(
            "[{{\"role\": \"user\", \"content\": \"Show me code.\"}}, {{\"role\": \"assistant\", \"content\": {}}}]",
            serde_json::to_string(&md).unwrap()
        )
        .as_bytes(),
    )
    .unwrap();
    s.messages = msg.as_array().unwrap().clone();
    render_html(&s)
}

/// The HTML of the code block fenced with `tag`.
fn block<'a>(html: &'a str, tag: &str) -> &'a str {
    let open = format!("<pre><code class=\"language-{tag}\">");
    let start = html.find(&open).unwrap_or_else(|| panic!("no {tag} block")) + open.len();
    let len = html[start..].find("</code></pre>").unwrap();
    &html[start..start + len]
}

#[test]
fn every_language_colours_its_tokens() {
    let html = page();
    for (tag, _, classes) in SAMPLES {
        let b = block(&html, tag);
        for class in *classes {
            assert!(
                b.contains(&format!("<span class=\"{class}\">")),
                "{tag}: no `{class}` token in\n{b}"
            );
        }
    }
    assert!(!block(&html, "nope").contains("<span"));
    // Markup in code is text: the only tags inside a block are our spans.
    let h = block(&html, "html");
    let stripped = h.replace("<span class=\"", "").replace("</span>", "");
    assert!(!stripped.contains('<'), "{h}");
    assert!(h.contains("&lt;<span class=\"k\">script</span>&gt;"), "{h}");
    assert!(!html.contains("<script"));
}

#[test]
fn golden_page() {
    let html = page();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden/occhat_languages.html");
    if std::env::var_os("AGENTLOG_BLESS").is_some() {
        std::fs::write(&path, &html).unwrap();
    }
    let golden = std::fs::read_to_string(&path).expect("golden page (AGENTLOG_BLESS=1 writes it)");
    assert!(
        golden == html,
        "the HTML export changed: review it in a browser, then AGENTLOG_BLESS=1"
    );
}
