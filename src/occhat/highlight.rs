//! A small lexer-based syntax highlighter for code blocks in the HTML
//! export: comments, strings, numbers, keywords, type-like and function
//! names, for the languages assistants write most (Rust, Python,
//! JavaScript/TypeScript, C-family, Go, Java, shell, SQL, JSON, TOML, YAML);
//! anything else gets strings and numbers only. Output is escaped HTML with
//! `<span class="..">` around tokens; the classes are styled by the export's
//! inline stylesheet (a Monokai palette, `persistence.py`'s default code theme).

/// One language's lexical conventions.
struct Lang {
    line_comments: &'static [&'static str],
    block_comment: Option<(&'static str, &'static str)>,
    quotes: &'static [char],
    triple_quotes: bool,
    keywords: &'static [&'static str],
    /// Keywords match without regard to case (SQL).
    keywords_any_case: bool,
    /// `$name` is a variable (shell).
    dollar_vars: bool,
}

const RUST_KW: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "yield",
];
const PY_KW: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "match", "case", "nonlocal", "not", "or", "pass", "raise", "return",
    "try", "while", "with", "yield", "self",
];
const JS_KW: &[&str] = &[
    "async",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "from",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "new",
    "null",
    "of",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "type",
    "typeof",
    "undefined",
    "var",
    "void",
    "while",
    "yield",
    "enum",
    "implements",
    "private",
    "public",
    "readonly",
];
const C_KW: &[&str] = &[
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "continue",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "extends",
    "extern",
    "false",
    "final",
    "float",
    "for",
    "func",
    "go",
    "goto",
    "if",
    "implements",
    "import",
    "int",
    "interface",
    "long",
    "map",
    "namespace",
    "new",
    "nil",
    "null",
    "package",
    "private",
    "protected",
    "public",
    "range",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "throws",
    "true",
    "try",
    "typedef",
    "union",
    "unsigned",
    "var",
    "virtual",
    "void",
    "volatile",
    "while",
    "chan",
    "defer",
    "select",
    "type",
];
const SH_KW: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "in", "function", "return", "export", "local", "echo", "exit", "set", "unset", "cd", "source",
    "true", "false",
];
const SQL_KW: &[&str] = &[
    "select",
    "from",
    "where",
    "and",
    "or",
    "not",
    "insert",
    "into",
    "values",
    "update",
    "set",
    "delete",
    "create",
    "table",
    "index",
    "on",
    "join",
    "left",
    "right",
    "inner",
    "outer",
    "group",
    "by",
    "order",
    "having",
    "limit",
    "offset",
    "as",
    "distinct",
    "union",
    "all",
    "null",
    "is",
    "in",
    "like",
    "between",
    "exists",
    "case",
    "when",
    "then",
    "else",
    "end",
    "primary",
    "key",
    "foreign",
    "references",
    "drop",
    "alter",
    "add",
    "desc",
    "asc",
    "with",
    "count",
    "sum",
    "avg",
    "min",
    "max",
];
const JSON_KW: &[&str] = &["true", "false", "null"];

fn lang(tag: &str) -> Option<Lang> {
    let tag = tag.trim().to_ascii_lowercase();
    let tag = tag.split([' ', ',', '{']).next().unwrap_or("");
    let c_like = |keywords| Lang {
        line_comments: &["//"],
        block_comment: Some(("/*", "*/")),
        quotes: &['"', '\''],
        triple_quotes: false,
        keywords,
        keywords_any_case: false,
        dollar_vars: false,
    };
    Some(match tag {
        "rust" | "rs" => Lang {
            quotes: &['"'],
            ..c_like(RUST_KW)
        },
        "python" | "py" | "python3" => Lang {
            line_comments: &["#"],
            block_comment: None,
            quotes: &['"', '\''],
            triple_quotes: true,
            keywords: PY_KW,
            keywords_any_case: false,
            dollar_vars: false,
        },
        "js" | "javascript" | "ts" | "typescript" | "jsx" | "tsx" => Lang {
            quotes: &['"', '\'', '`'],
            ..c_like(JS_KW)
        },
        "c" | "h" | "cpp" | "c++" | "cc" | "hpp" | "go" | "java" | "kotlin" | "cs" | "csharp"
        | "swift" => c_like(C_KW),
        "sh" | "bash" | "shell" | "zsh" | "console" => Lang {
            line_comments: &["#"],
            block_comment: None,
            quotes: &['"', '\''],
            triple_quotes: false,
            keywords: SH_KW,
            keywords_any_case: false,
            dollar_vars: true,
        },
        "sql" | "postgres" | "postgresql" | "mysql" | "sqlite" => Lang {
            line_comments: &["--"],
            block_comment: Some(("/*", "*/")),
            quotes: &['\''],
            triple_quotes: false,
            keywords: SQL_KW,
            keywords_any_case: true,
            dollar_vars: false,
        },
        "json" | "jsonc" | "json5" => Lang {
            line_comments: &["//"],
            block_comment: Some(("/*", "*/")),
            quotes: &['"'],
            triple_quotes: false,
            keywords: JSON_KW,
            keywords_any_case: false,
            dollar_vars: false,
        },
        "toml" | "yaml" | "yml" | "ini" => Lang {
            line_comments: &["#"],
            block_comment: None,
            quotes: &['"', '\''],
            triple_quotes: false,
            keywords: JSON_KW,
            keywords_any_case: false,
            dollar_vars: false,
        },
        _ => return None,
    })
}

const GENERIC: Lang = Lang {
    line_comments: &[],
    block_comment: None,
    quotes: &['"', '\''],
    triple_quotes: false,
    keywords: &[],
    keywords_any_case: false,
    dollar_vars: false,
};

/// Appends `s` to `out`, HTML-escaped.
pub(crate) fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

fn span(out: &mut String, class: &str, text: &str) {
    if text.is_empty() {
        return;
    }
    out.push_str("<span class=\"");
    out.push_str(class);
    out.push_str("\">");
    escape_into(out, text);
    out.push_str("</span>");
}

/// The byte length of the string literal starting at `rest` (which starts
/// with a quote), through the closing quote or the end of the input.
fn string_len(rest: &str, lang: &Lang) -> usize {
    let mut chars = rest.char_indices();
    let Some((_, q)) = chars.next() else {
        return 0;
    };
    if lang.triple_quotes {
        let triple: String = [q, q, q].iter().collect();
        if rest.starts_with(&triple) {
            let body = rest.get(3..).unwrap_or("");
            return match body.find(&triple) {
                Some(i) => 3 + i + 3,
                None => rest.len(),
            };
        }
    }
    let mut escaped = false;
    for (i, c) in chars {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' && !lang.keywords_any_case && !(lang.dollar_vars && q == '\'') {
            escaped = true;
            continue;
        }
        if c == q {
            return i + c.len_utf8();
        }
        if c == '\n' && q != '`' && !lang.triple_quotes && lang.block_comment.is_some() {
            // An unterminated literal ends at the line in C-like languages.
            return i;
        }
    }
    rest.len()
}

fn number_len(rest: &str) -> usize {
    let b = rest.as_bytes();
    let mut i = 0;
    if b.starts_with(b"0x") || b.starts_with(b"0X") || b.starts_with(b"0b") || b.starts_with(b"0o")
    {
        i = 2;
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_hexdigit() || *c == b'_')
        {
            i += 1;
        }
        return i;
    }
    while let Some(&c) = b.get(i) {
        let prev = i.checked_sub(1).and_then(|p| b.get(p)).copied();
        let ok = c.is_ascii_digit()
            || c == b'_'
            || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
            || ((c == b'e' || c == b'E') && i > 0)
            || ((c == b'+' || c == b'-') && matches!(prev, Some(b'e' | b'E')));
        if !ok {
            break;
        }
        i += 1;
    }
    // A type suffix (1u8, 2.0f32, 10L).
    while b.get(i).is_some_and(|c| c.is_ascii_alphanumeric()) {
        i += 1;
    }
    i
}

/// The code as highlighted HTML (escaped; no surrounding `<pre>`).
pub(crate) fn highlight(code: &str, tag: &str) -> String {
    let lang = lang(tag);
    let lang = lang.as_ref().unwrap_or(&GENERIC);
    let mut out = String::with_capacity(code.len() * 2);
    let mut i = 0;
    let mut plain_start = 0;
    let flush = |out: &mut String, from: usize, to: usize| {
        if let Some(t) = code.get(from..to) {
            escape_into(out, t);
        }
    };
    while i < code.len() {
        let Some(rest) = code.get(i..) else { break };
        let Some(c) = rest.chars().next() else { break };
        // Comments.
        if lang.line_comments.iter().any(|lc| rest.starts_with(*lc)) {
            let len = rest.find('\n').unwrap_or(rest.len());
            flush(&mut out, plain_start, i);
            span(&mut out, "c", rest.get(..len).unwrap_or(""));
            i += len;
            plain_start = i;
            continue;
        }
        if let Some((open, close)) = lang.block_comment
            && rest.starts_with(open)
        {
            let len = rest
                .get(open.len()..)
                .and_then(|r| r.find(close))
                .map_or(rest.len(), |k| open.len() + k + close.len());
            flush(&mut out, plain_start, i);
            span(&mut out, "c", rest.get(..len).unwrap_or(""));
            i += len;
            plain_start = i;
            continue;
        }
        if lang.quotes.contains(&c) {
            // A Rust lifetime or char: 'a is not a string.
            let len = string_len(rest, lang).max(c.len_utf8());
            flush(&mut out, plain_start, i);
            span(&mut out, "s", rest.get(..len).unwrap_or(""));
            i += len;
            plain_start = i;
            continue;
        }
        if lang.dollar_vars && c == '$' {
            let len = 1 + rest.get(1..).map_or(0, |r| {
                r.find(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '{' || ch == '}'))
                    .unwrap_or(r.len())
            });
            flush(&mut out, plain_start, i);
            span(&mut out, "v", rest.get(..len).unwrap_or(""));
            i += len;
            plain_start = i;
            continue;
        }
        if c.is_ascii_digit() {
            let prev_ident = code
                .get(..i)
                .and_then(|p| p.chars().next_back())
                .is_some_and(|p| p.is_alphanumeric() || p == '_');
            if !prev_ident {
                let len = number_len(rest).max(1);
                flush(&mut out, plain_start, i);
                span(&mut out, "n", rest.get(..len).unwrap_or(""));
                i += len;
                plain_start = i;
                continue;
            }
        }
        if c.is_alphabetic() || c == '_' {
            let len = rest
                .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                .unwrap_or(rest.len());
            let word = rest.get(..len).unwrap_or("");
            let is_kw = if lang.keywords_any_case {
                lang.keywords.iter().any(|k| k.eq_ignore_ascii_case(word))
            } else {
                lang.keywords.contains(&word)
            };
            let after = rest.get(len..).unwrap_or("");
            let class = if is_kw {
                Some("k")
            } else if std::ptr::eq(lang, &GENERIC) {
                None
            } else if after.starts_with('(') || after.starts_with("!(") {
                Some("f")
            } else if word.chars().next().is_some_and(char::is_uppercase)
                && word.chars().any(char::is_lowercase)
            {
                Some("t")
            } else {
                None
            };
            if let Some(class) = class {
                flush(&mut out, plain_start, i);
                span(&mut out, class, word);
                i += len;
                plain_start = i;
            } else {
                i += len;
            }
            continue;
        }
        i += c.len_utf8();
    }
    flush(&mut out, plain_start, code.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_tokens() {
        let h = highlight("fn main() { let x = \"a<b\"; // hi\n 0x1F }", "rust");
        assert!(h.contains(r#"<span class="k">fn</span>"#), "{h}");
        assert!(h.contains(r#"<span class="f">main</span>"#), "{h}");
        assert!(
            h.contains(r#"<span class="s">&quot;a&lt;b&quot;</span>"#),
            "{h}"
        );
        assert!(h.contains(r#"<span class="c">// hi</span>"#), "{h}");
        assert!(h.contains(r#"<span class="n">0x1F</span>"#), "{h}");
    }

    #[test]
    fn python_and_sql() {
        let h = highlight("def f(x):\n    return '''doc''' # c\n", "python");
        assert!(h.contains(r#"<span class="k">def</span>"#));
        assert!(
            h.contains(r#"<span class="s">&#39;&#39;&#39;doc&#39;&#39;&#39;</span>"#),
            "{h}"
        );
        let h = highlight("SELECT id FROM t WHERE a = 'x' -- why\n", "sql");
        assert!(h.contains(r#"<span class="k">SELECT</span>"#));
        assert!(h.contains(r#"<span class="c">-- why</span>"#));
    }

    #[test]
    fn unknown_language_and_odd_input() {
        let h = highlight("x = \"unterminated <", "nope");
        assert_eq!(h, "x = <span class=\"s\">&quot;unterminated &lt;</span>");
        for s in ["\"", "'", "/*", "1e", "0x", "é'", "$"] {
            let _ = highlight(s, "rust");
            let _ = highlight(s, "sh");
            let _ = highlight(s, "python");
        }
    }

    fn unhighlight(h: &str) -> String {
        let mut out = String::new();
        let mut rest = h;
        while let Some(i) = rest.find('<') {
            out.push_str(&rest[..i]);
            let j = rest[i..].find('>').unwrap();
            rest = &rest[i + j + 1..];
        }
        out.push_str(rest);
        out.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&")
    }

    proptest::proptest! {
        #[test]
        fn highlighting_keeps_every_character(
            code in "[a-zA-Z0-9_ \n\t'\"`#$/*{}().=+<>&\\\\é日-]{0,80}",
            lang in proptest::sample::select(vec!["rust", "python", "js", "c", "sh", "sql", "json", "toml", "other", ""]),
        ) {
            proptest::prop_assert_eq!(unhighlight(&highlight(&code, lang)), code);
        }
    }
}
