//! The transcript's stylesheet, written inline into the page. Each
//! message, marker and sub-agent section is laid out only when it nears
//! the viewport (`content-visibility: auto`), so a page of tens of
//! thousands of events scrolls without laying out what is off screen;
//! there is no script.

/// The stylesheet.
pub(crate) const CSS: &str = r#"
:root { color-scheme: light; --fg: #1f2328; --dim: #656d76; --line: #d0d7de; --bg: #ffffff; --panel: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.conversation { max-width: 1040px; margin: 0 auto; padding: 16px 20px 32px; }
.conversation + .conversation { border-top: 4px double var(--line); }
header h1 { font-size: 20px; margin: 8px 0 12px; }
header h1 .kind { color: var(--dim); font-weight: 400; }
header dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0 0 12px; }
header dt { font-weight: 600; color: var(--dim); }
header dd { margin: 0; overflow-wrap: anywhere; }
table.usage { border-collapse: collapse; margin: 8px 0 4px; font-variant-numeric: tabular-nums; }
table.usage th, table.usage td { border: 1px solid var(--line); padding: 3px 8px; text-align: right; }
table.usage th:first-child, table.usage td:first-child { text-align: left; }
table.usage caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: 4px; }
p.explain { color: var(--dim); font-size: 12.5px; margin: 4px 0 12px; max-width: 80ch; }
ul.issues { color: #9a6700; }
code, pre, .mono { font: 12.5px/1.45 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0; }
article.msg, div.mark, details.outside { content-visibility: auto; contain-intrinsic-size: auto 72px; }
article.msg { border: 1px solid var(--line); border-left-width: 4px; border-radius: 6px; margin: 10px 0; padding: 6px 12px 8px; background: var(--bg); }
article.system { border-left-color: #8c959f; }
article.user { border-left-color: #0969da; }
article.assistant { border-left-color: #1a7f37; }
article.tool { border-left-color: #bf8700; background: var(--panel); }
article.tool.error { border-left-color: #cf222e; }
article.summary { border-left-color: #8250df; background: #fbefff; }
.head { display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: baseline; }
.role { font-weight: 700; }
.meta { color: var(--dim); font-size: 12px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0; }
p.usage { margin: 6px 0 0; font-size: 12px; color: var(--dim); font-variant-numeric: tabular-nums; }
p.usage b { color: var(--fg); font-weight: 600; }
p.note { margin: 4px 0; color: var(--dim); font-style: italic; }
details { margin: 4px 0; }
details > summary { cursor: pointer; overflow-wrap: anywhere; }
details.call { border: 1px solid var(--line); border-radius: 4px; padding: 2px 8px; background: var(--panel); }
details.call > summary .tool, details.result > summary .tool { font-weight: 600; color: #953800; }
details.thinking > summary { color: #8250df; }
dl.args { display: grid; grid-template-columns: max-content 1fr; gap: 0 10px; margin: 4px 0; }
dl.args dt { font-weight: 600; color: var(--dim); }
dl.args dd { margin: 0; }
div.mark { margin: 6px 0; padding: 2px 10px; color: var(--dim); font-size: 12.5px; border-left: 4px solid var(--line); }
div.mark.condensation { border-left-color: #8250df; color: #6639ba; background: #fbefff; padding: 4px 10px; }
div.mark.subagent { border-left-color: #0969da; background: #ddf4ff; color: var(--fg); }
details.outside { margin: 6px 0; padding: 2px 10px; border-left: 4px dashed var(--line); color: var(--dim); }
details.outside[open] { color: var(--fg); }
img.content { max-width: 100%; max-height: 480px; border: 1px solid var(--line); display: block; margin: 4px 0; }
a { color: #0969da; }
footer { max-width: 1040px; margin: 0 auto; padding: 8px 20px 24px; color: var(--dim); font-size: 12px; }
"#;

/// The dark theme ([`Theme::Dark`](crate::theme::Theme::Dark)): written
/// after [`CSS`], it changes colours only.
pub(crate) const DARK: &str = r#"
:root { color-scheme: dark; --fg: #e6e6e0; --dim: #8f908a; --line: #49483e; --bg: #1e1f1c; --panel: #272822; }
article.system { border-left-color: #75715e; }
article.user { border-left-color: #3b82f6; }
article.assistant { border-left-color: #22c55e; }
article.tool { border-left-color: #e6db74; }
article.tool.error { border-left-color: #f92672; }
article.summary, div.mark.condensation { border-left-color: #ae81ff; background: #2d2640; }
div.mark.condensation, details.thinking > summary { color: #ae81ff; }
div.mark.subagent { border-left-color: #66d9ef; background: #1f3340; }
ul.issues { color: #fd971f; }
details.call > summary .tool, details.result > summary .tool { color: #a6e22e; }
a { color: #66d9ef; }
"#;
