//! Views of one conversation at several heads (the state's, and the ends
//! of some branch prefixes), the event files parsed and decoded once.

use super::{EarlyEvents, EarlyState, View, ViewEvent, ViewInput, ViewOptions};
use crate::json::Value;
use crate::openhands::Kind;

impl<'a> View<'a> {
    /// The view of a conversation (at `options.head`) and its views at each
    /// of the heads `heads` picks from it (as [`ViewOptions::head`] gives
    /// them), the event files parsed and decoded once for all of them when
    /// the conversation holds a condensation (without one, each view at a
    /// head is built on its own). `visit` is shown each event that parsed,
    /// once, from the parse the views are built from: its position in
    /// `input.events` (and in [`View::events`]), the decoded event and its
    /// document's root.
    ///
    /// `early`, when given and not spoilt ([`EarlyEvents::spoil`]), holds
    /// events decoded from another reader's parse of them, as
    /// `View::build_early` takes them (the same guarantee: they are, in
    /// order, the events of `input` that parse as JSON objects): each event
    /// of `input` it holds (by index) is taken from there, not parsed, and
    /// not shown to `visit`; the views are those built without it.
    /// `state`, when given, is read from a parse of `input.base_state` (the
    /// caller's guarantee, as `View::build_early` takes it), which is then
    /// not parsed again.
    pub(crate) fn build_at_heads(
        input: &ViewInput<'a>,
        options: &ViewOptions,
        early: Option<EarlyEvents>,
        state: Option<EarlyState<'a>>,
        heads: impl FnOnce(&View<'a>) -> Vec<String>,
        visit: &mut dyn FnMut(usize, &ViewEvent<'a>, Value<'_>),
    ) -> (View<'a>, Vec<View<'a>>) {
        let early = early.filter(|e| !e.spoilt);
        let d = View::decode(
            input,
            options,
            &mut crate::json::Parser::new(),
            early,
            state,
            visit,
        );
        let head = options.head.as_deref();
        if !d.events.iter().any(|e| e.kind == Some(Kind::Condensation)) {
            let main = View::assemble(d.events, &d.state, d.detected, d.issues, head);
            let at = heads(&main)
                .into_iter()
                .map(|h| {
                    let o = ViewOptions {
                        head: Some(h),
                        ..options.clone()
                    };
                    View::build(input, &o)
                })
                .collect();
            return (main, at);
        }
        // Each view but the last built from a copy of the events holding
        // the data of its context's events alone (a view's messages are
        // made from its context's data); the last takes them.
        let main = View::assemble_cloned(
            &d.events,
            &d.state,
            d.detected.clone(),
            d.issues.clone(),
            head,
        );
        let hs = heads(&main);
        let mut at = Vec::with_capacity(hs.len());
        let mut events = Some(d.events);
        for (i, h) in hs.iter().enumerate() {
            let v = if i + 1 == hs.len() {
                View::assemble(
                    events.take().unwrap_or_default(),
                    &d.state,
                    d.detected.clone(),
                    d.issues.clone(),
                    Some(h),
                )
            } else {
                View::assemble_cloned(
                    events.as_deref().unwrap_or_default(),
                    &d.state,
                    d.detected.clone(),
                    d.issues.clone(),
                    Some(h),
                )
            };
            at.push(v);
        }
        (main, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openhands::read_conversation;
    use crate::openhands::view::ViewEntry;

    /// The ids of the events before each condensation of the branch; in a
    /// conversation without one, its first and last events' (views at
    /// those heads are built on their own).
    fn picked(view: &View<'_>) -> Vec<String> {
        let (events, order) = (view.events(), view.conversation());
        let before: Vec<String> = (1..order.len())
            .filter(|&k| events[order[k]].kind == Some(Kind::Condensation))
            .map(|k| events[order[k - 1]].id.to_string())
            .collect();
        if !before.is_empty() {
            return before;
        }
        order
            .iter()
            .take(1)
            .chain(order.last())
            .map(|&p| events[p].id.to_string())
            .collect()
    }

    #[test]
    fn views_at_heads_equal_views_built_alone() {
        let mut seen_condensed = false;
        let mut seen_plain = false;
        let root = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/corpus/openhands"
        ));
        for dir in crate::openhands::find_sessions(root).expect("corpus") {
            let Ok(conv) = read_conversation(&dir) else {
                continue;
            };
            let input = ViewInput::from_conversation(&conv);
            let options = ViewOptions::default();
            let mut visited = Vec::new();
            // The state read from another parse of it.
            let mut p = crate::json::Parser::new();
            let state_doc = input.base_state.and_then(|raw| p.parse(raw).ok());
            let state = input
                .base_state
                .zip(state_doc.as_ref())
                .and_then(|(raw, d)| EarlyState::read(raw, d.root()));
            let (main, at) =
                View::build_at_heads(&input, &options, None, state, picked, &mut |p, ev, root| {
                    let own = input.events[p].raw.trim_ascii() == root.raw();
                    visited.push((p, ev.index, own));
                });
            // Each event that parses shown once, in order, with its own bytes.
            let parsed: Vec<(usize, usize, bool)> = input
                .events
                .iter()
                .enumerate()
                .filter(|(_, e)| crate::json::Parser::new().parse(e.raw).is_ok())
                .map(|(p, e)| (p, e.index, true))
                .collect();
            assert_eq!(visited, parsed, "{dir:?}");
            let alone = View::build(&input, &options);
            assert_eq!(main.wire_messages(), alone.wire_messages(), "{dir:?}");
            assert_eq!(main.context(), alone.context(), "{dir:?}");
            assert_eq!(main.issues(), alone.issues(), "{dir:?}");
            assert_eq!(main.version(), alone.version(), "{dir:?}");
            assert_eq!(main.wire_options(), alone.wire_options(), "{dir:?}");
            let condensed = alone
                .events()
                .iter()
                .any(|e| e.kind == Some(Kind::Condensation));
            seen_condensed |= condensed;
            seen_plain |= !condensed;
            let heads = picked(&alone);
            assert_eq!(heads.len(), at.len(), "{dir:?}");
            for (h, v) in heads.iter().zip(&at) {
                let o = ViewOptions {
                    head: Some(h.clone()),
                    ..ViewOptions::default()
                };
                let one = View::build(&input, &o);
                assert_eq!(v.wire_messages(), one.wire_messages(), "{dir:?} at {h}");
                assert_eq!(v.context(), one.context(), "{dir:?} at {h}");
                assert_eq!(v.conversation(), one.conversation(), "{dir:?} at {h}");
                assert_eq!(v.issues(), one.issues(), "{dir:?} at {h}");
            }
            // A view built from a copy of the events (with a condensation:
            // the main view and every view at a head but the last) holds
            // no data of an event off its context.
            if condensed {
                let copies =
                    std::iter::once(&main).chain(at.iter().take(at.len().saturating_sub(1)));
                for v in copies {
                    let mut in_context = vec![false; v.events().len()];
                    for e in v.context() {
                        let (ViewEntry::Event(p) | ViewEntry::Summary(p)) = *e;
                        in_context[p] = true;
                    }
                    for (p, e) in v.events().iter().enumerate() {
                        assert!(
                            in_context[p] || matches!(e.body, super::super::Body::None),
                            "{dir:?}: event {p} off the context holds its data"
                        );
                    }
                }
            }
        }
        assert!(seen_condensed && seen_plain);
    }
}
