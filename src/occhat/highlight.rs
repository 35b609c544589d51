//! Syntax highlighting of code blocks in the HTML export, with real
//! grammars: `syntect` and the Sublime Text syntaxes it bundles (pure-Rust
//! regex engine), plus a TOML grammar of this crate's
//! (`highlight/toml.sublime-syntax`), which the bundle lacks; TypeScript
//! takes the JavaScript grammar. A fence tag no grammar claims is shown
//! plain.
//!
//! Colours are OC Chat's export theme, Monokai, as a syntect theme built
//! here ([`monokai`]): each of its colours stands for one class of token
//! (`k` keyword, `s` string, `n` number and constant, `c` comment, `f`
//! function and type name, `t` built-in type and storage, `v` parameter and
//! variable), and the output is `<span class="..">` around tokens, styled by
//! the export's inline stylesheet.
//!
//! Escaping is this module's, not syntect's: syntect only splits the code
//! into tokens; every byte of code goes through [`escape_into`], and the
//! only other text written is the fixed class names. A line that a grammar
//! fails on (a regex hitting its backtracking limit), and code past the
//! size limits below, is written escaped without colours.

use std::sync::OnceLock;

use syntect::highlighting::{
    Color, FontStyle, HighlightIterator, HighlightState, Highlighter, ScopeSelectors,
    StyleModifier, Theme, ThemeItem, ThemeSettings,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

/// Code blocks larger than this are shown without colours.
const MAX_HIGHLIGHT_BYTES: usize = 256 * 1024;
/// Lines longer than this are shown without colours (and so is the rest of
/// their block: a grammar's state after an unread line is unknown).
const MAX_HIGHLIGHT_LINE: usize = 16 * 1024;

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

/// The token classes and their Monokai colours, in the order
/// [`class_of`] looks them up.
const CLASSES: [(&str, Color); 7] = [
    ("k", rgb(0xf9, 0x26, 0x72)),
    ("s", rgb(0xe6, 0xdb, 0x74)),
    ("n", rgb(0xae, 0x81, 0xff)),
    ("c", rgb(0x75, 0x71, 0x5e)),
    ("f", rgb(0xa6, 0xe2, 0x2e)),
    ("t", rgb(0x66, 0xd9, 0xef)),
    ("v", rgb(0xfd, 0x97, 0x1f)),
];

/// Monokai's plain text colour.
const FOREGROUND: Color = rgb(0xf8, 0xf8, 0xf2);

const fn rgb(r: u8, g: u8, b: u8) -> Color {
    Color { r, g, b, a: 0xff }
}

/// Which scopes take which class: Monokai's assignments (Sublime Text's
/// Monokai colour scheme), the more specific selector winning.
const SCOPES: &[(&str, &str)] = &[
    ("comment, punctuation.definition.comment", "c"),
    ("string, punctuation.definition.string", "s"),
    ("constant.character.escape", "n"),
    (
        "constant.numeric, constant.language, constant.character, constant.other",
        "n",
    ),
    ("keyword, storage, keyword.operator.word", "k"),
    // Operators stay plain (the old export's look; Monokai proper colours
    // symbolic operators as keywords).
    ("keyword.operator - keyword.operator.word", "-"),
    (
        "keyword.declaration, storage.type.function, storage.type.class",
        "k",
    ),
    (
        "storage.type, support.type, support.class, support.function",
        "t",
    ),
    (
        "entity.name.function, entity.name.class, entity.name.struct, entity.name.enum, \
         entity.name.trait, entity.name.type, entity.name.section, entity.other.inherited-class, \
         entity.other.attribute-name, variable.function",
        "f",
    ),
    ("entity.name.tag, meta.mapping.key string", "k"),
    ("meta.mapping.key string, string.unquoted.key", "k"),
    (
        "variable.parameter, variable.other.readwrite.shell, variable.other.normal.shell, \
         variable.other.special.shell, variable.other.positional.shell",
        "v",
    ),
];

/// OC Chat's export theme, Monokai, as a syntect theme.
fn monokai() -> Theme {
    let scopes = SCOPES
        .iter()
        .filter_map(|&(selectors, class)| {
            let foreground = if class == "-" {
                FOREGROUND
            } else {
                CLASSES.iter().find(|(c, _)| *c == class)?.1
            };
            Some(ThemeItem {
                scope: selectors.parse::<ScopeSelectors>().ok()?,
                style: StyleModifier {
                    foreground: Some(foreground),
                    background: None,
                    font_style: Some(FontStyle::empty()),
                },
            })
        })
        .collect();
    Theme {
        name: Some("Monokai".into()),
        settings: ThemeSettings {
            foreground: Some(FOREGROUND),
            background: Some(rgb(0x27, 0x28, 0x22)),
            ..ThemeSettings::default()
        },
        scopes,
        ..Theme::default()
    }
}

/// The class a token's colour stands for; `None` for plain text.
fn class_of(c: Color) -> Option<&'static str> {
    CLASSES.iter().find(|(_, k)| *k == c).map(|(name, _)| *name)
}

struct Grammars {
    /// syntect's bundled syntaxes.
    bundled: SyntaxSet,
    /// The grammars this crate adds (TOML).
    extra: SyntaxSet,
    theme: Theme,
}

fn grammars() -> &'static Grammars {
    static G: OnceLock<Grammars> = OnceLock::new();
    G.get_or_init(|| {
        let mut extra = syntect::parsing::SyntaxSetBuilder::new();
        if let Ok(toml) = syntect::parsing::SyntaxDefinition::load_from_str(
            include_str!("highlight/toml.sublime-syntax"),
            true,
            None,
        ) {
            extra.add(toml);
        }
        Grammars {
            bundled: SyntaxSet::load_defaults_newlines(),
            extra: extra.build(),
            theme: monokai(),
        }
    })
}

/// The grammar for a fence tag (`rust`, `py`, `ts`, `toml`, ...) and the
/// set it belongs to.
fn grammar(tag: &str) -> Option<(&'static SyntaxSet, &'static SyntaxReference)> {
    let g = grammars();
    let tag = tag.trim().to_ascii_lowercase();
    // `python {.class}`, `rust,ignore`: the first word names the language.
    let tag = tag.split([' ', ',', '{']).next().unwrap_or("");
    let tag = match tag {
        "" => return None,
        "ts" | "typescript" | "tsx" | "mjs" | "cjs" | "jsx" => "js",
        "shell" | "console" | "zsh" => "sh",
        "golang" => "go",
        "py3" | "python3" => "py",
        "c++" => "cpp",
        "c#" | "csharp" => "cs",
        "yml" => "yaml",
        t => t,
    };
    if let Some(s) = g.extra.find_syntax_by_token(tag) {
        return Some((&g.extra, s));
    }
    g.bundled
        .find_syntax_by_token(tag)
        .map(|s| (&g.bundled, s))
        .filter(|(_, s)| s.name != "Plain Text")
}

/// `code` as escaped HTML with the tokens of the language `tag` names in
/// `<span class="..">`.
pub(crate) fn highlight(code: &str, tag: &str) -> String {
    let mut out = String::with_capacity(code.len() * 2);
    let found = if code.len() <= MAX_HIGHLIGHT_BYTES {
        grammar(tag)
    } else {
        None
    };
    let Some((set, syntax)) = found else {
        escape_into(&mut out, code);
        return out;
    };
    let highlighter = Highlighter::new(&grammars().theme);
    let mut parse = ParseState::new(syntax);
    let mut state = HighlightState::new(&highlighter, ScopeStack::new());
    let mut rest = code;
    // The class of the span left open: tokens of one class in a row share
    // one span.
    let mut open: Option<&str> = None;
    for line in LinesWithEndings::from(code) {
        if line.len() > MAX_HIGHLIGHT_LINE {
            break;
        }
        let Ok(ops) = parse.parse_line(line, set) else {
            break;
        };
        for (style, text) in HighlightIterator::new(&mut state, &ops, line, &highlighter) {
            let class = class_of(style.foreground);
            if class != open && !text.is_empty() {
                if open.is_some() {
                    out.push_str("</span>");
                }
                if let Some(c) = class {
                    out.push_str("<span class=\"");
                    out.push_str(c);
                    out.push_str("\">");
                }
                open = class;
            }
            escape_into(&mut out, text);
        }
        rest = &rest[line.len()..];
    }
    if open.is_some() {
        out.push_str("</span>");
    }
    // What the grammar did not read (an error, a line past the limit).
    escape_into(&mut out, rest);
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
        assert!(h.contains(r#"<span class="c">// hi"#), "{h}");
        assert!(h.contains(r#"<span class="n">0x1F</span>"#), "{h}");
    }

    #[test]
    fn python_and_sql() {
        let h = highlight("def f(x):\n    return '''doc''' # c\n", "python");
        assert!(h.contains(r#"<span class="k">def</span>"#), "{h}");
        assert!(h.contains("&#39;&#39;&#39;doc&#39;&#39;&#39;"), "{h}");
        assert!(h.contains(r#"<span class="c"># c"#), "{h}");
        let h = highlight("SELECT id FROM t WHERE a = 'x' -- why\n", "sql");
        assert!(h.contains(r#"<span class="k">SELECT</span>"#), "{h}");
        assert!(h.contains(r#"<span class="c">-- why"#), "{h}");
    }

    #[test]
    fn toml_grammar_of_ours() {
        let h = highlight(
            "# c\n[package]\nname = \"x\" # n\nv = 1_000\nok = true\n",
            "toml",
        );
        assert!(h.contains(r#"<span class="c"># c"#), "{h}");
        assert!(h.contains(r#"<span class="f">package</span>"#), "{h}");
        assert!(h.contains(r#"<span class="s">&quot;x&quot;</span>"#), "{h}");
        assert!(h.contains(r#"<span class="n">1_000</span>"#), "{h}");
        assert!(h.contains(r#"<span class="n">true</span>"#), "{h}");
    }

    #[test]
    fn unknown_language_and_odd_input() {
        let h = highlight("x = \"unterminated <", "nope");
        assert_eq!(h, "x = &quot;unterminated &lt;");
        for s in ["\"", "'", "/*", "1e", "0x", "é'", "$", "r#\"", "'''"] {
            for lang in ["rust", "sh", "python", "toml", "ts", "yaml"] {
                assert_eq!(unhighlight(&highlight(s, lang)), s);
            }
        }
        // Past the limits: escaped, not coloured.
        let long = format!("let x = 1;\n{}\n", "a".repeat(MAX_HIGHLIGHT_LINE + 1));
        let h = highlight(&long, "rust");
        assert!(h.starts_with("<span"), "{h:.40}");
        assert_eq!(unhighlight(&h), long);
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
            lang in proptest::sample::select(vec!["rust", "python", "js", "ts", "c", "sh", "sql", "json", "toml", "yaml", "go", "java", "other", ""]),
        ) {
            let h = highlight(&code, lang);
            // Only our spans are markup: no `<` but theirs.
            proptest::prop_assert!(!h.replace("<span class=\"", "").replace("</span>", "").contains('<'));
            proptest::prop_assert_eq!(unhighlight(&h), code);
        }
    }
}
