//! The rules a `config` delta and a compaction's checkpoint state about
//! their own members (RFC 0001, "`config`", "Instructions as parts",
//! "`compaction`"), checked on the line alone:
//!
//! - `instructions` beside parts that all carry their text is their join
//!   with one blank line (parts named by `hash` or `keep` need the path:
//!   the verifier checks those against the settings in force);
//! - a `replace` whose parts are named by `hash` or `keep` carries
//!   `instructions`, and writes its omitted list whole (no `keep`);
//! - a `keep` element carries no other member, and an omitted list with a
//!   `keep` names each `id` once;
//! - a checkpoint is settings, not a delta: no `tools_added`,
//!   `tools_removed` or `replace`, no null in `extra`, every part with its
//!   text (an omitted list may hold a `keep` that named no part, written
//!   as it stands, so a `keep` there is no fault).

use crate::json::Value;

use super::super::problem::ProblemKind;

/// An element of `instructions_parts` or `instructions_omitted`.
#[derive(Clone, Copy, PartialEq)]
enum Element<'v> {
    /// Named by `id`, with its `text` (`None` when named by `hash`).
    Named(&'v str, Option<&'v str>),
    /// A `{"keep": n}` (or an element naming no part).
    Keep,
}

fn elements<'v>(list: Value<'v>) -> Vec<(Element<'v>, Value<'v>)> {
    let Some(a) = list.as_array() else {
        return Vec::new();
    };
    a.iter()
        .map(|v| {
            let el = match v.get("id").and_then(|i| i.as_str()) {
                Some(id) => match (v.get("text").and_then(|t| t.as_str()), v.get("hash")) {
                    (Some(t), _) => Element::Named(id, Some(t)),
                    (None, Some(_)) => Element::Named(id, None),
                    (None, None) => Element::Named(id, Some("")),
                },
                None => Element::Keep,
            };
            (el, v)
        })
        .collect()
}

/// A `keep` element with another member beside it.
fn keep_with_members(list: &[(Element<'_>, Value<'_>)]) -> bool {
    list.iter().any(|(el, v)| {
        *el == Element::Keep
            && v.get("keep").is_some()
            && v.as_object().is_some_and(|o| o.iter().count() > 1)
    })
}

fn join_rule(
    root: Value<'_>,
    parts: &[(Element<'_>, Value<'_>)],
    report: &mut dyn FnMut(ProblemKind),
) {
    let Some(instructions) = root.get("instructions").and_then(|v| v.as_str()) else {
        return;
    };
    if parts.is_empty() {
        return;
    }
    let mut texts = Vec::with_capacity(parts.len());
    for (el, _) in parts {
        match el {
            Element::Named(_, Some(t)) => texts.push(*t),
            _ => return,
        }
    }
    if texts.join("\n\n") != instructions {
        report(ProblemKind::Config(
            "`instructions` is not the join of the parts beside it (one blank line between)".into(),
        ));
    }
}

/// The rules of a `config` delta.
pub(super) fn delta_rules(root: Value<'_>, report: &mut dyn FnMut(ProblemKind)) {
    let parts = root
        .get("instructions_parts")
        .map(elements)
        .unwrap_or_default();
    let omitted = root
        .get("instructions_omitted")
        .map(elements)
        .unwrap_or_default();
    join_rule(root, &parts, report);
    let replace = root.get("replace").and_then(|v| v.as_bool()) == Some(true);
    if replace
        && root.get("instructions").is_none()
        && parts
            .iter()
            .any(|(el, _)| matches!(el, Element::Keep | Element::Named(_, None)))
    {
        report(ProblemKind::Config(
            "a `replace` names parts by `hash` or `keep` without `instructions` beside them".into(),
        ));
    }
    if replace && omitted.iter().any(|(el, _)| *el == Element::Keep) {
        report(ProblemKind::Config(
            "a `replace` writes `instructions_omitted` whole, with no `keep`".into(),
        ));
    }
    if keep_with_members(&parts) || keep_with_members(&omitted) {
        report(ProblemKind::Config(
            "a `keep` element carries another member beside `keep`".into(),
        ));
    }
    if omitted.iter().any(|(el, _)| *el == Element::Keep) {
        let mut ids: Vec<&str> = omitted
            .iter()
            .filter_map(|(el, _)| match el {
                Element::Named(id, _) => Some(*id),
                Element::Keep => None,
            })
            .collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        if ids.len() != n {
            report(ProblemKind::Config(
                "an `instructions_omitted` list with a `keep` names an `id` twice".into(),
            ));
        }
    }
}

/// The rules of a compaction's `config` checkpoint.
pub(super) fn checkpoint_rules(config: Value<'_>, report: &mut dyn FnMut(ProblemKind)) {
    for name in ["tools_added", "tools_removed", "replace"] {
        if config.get(name).is_some() {
            report(ProblemKind::Config(format!(
                "a compaction's checkpoint is settings, not a delta: it holds `{name}`"
            )));
        }
    }
    if let Some(extra) = config.get("extra").and_then(|v| v.as_object())
        && extra.iter().any(|m| m.value.is_null())
    {
        report(ProblemKind::Config(
            "a compaction's checkpoint holds a null in `extra` (deletions are applied)".into(),
        ));
    }
    let parts = config
        .get("instructions_parts")
        .map(elements)
        .unwrap_or_default();
    if parts
        .iter()
        .any(|(el, _)| matches!(el, Element::Keep | Element::Named(_, None)))
    {
        report(ProblemKind::Config(
            "a compaction's checkpoint names a part by `hash` or `keep` (every part carries its text)"
                .into(),
        ));
    }
    join_rule(config, &parts, report);
}
