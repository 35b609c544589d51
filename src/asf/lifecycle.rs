//! The rules on a call's life and on the header's `records` promise
//! (RFC 0001, "`dispatch`", "`decision`", "Entry hash" on `records`,
//! "Writing discipline"):
//!
//! - a `dispatch` never follows a `reject`, an `answer` or the call's
//!   output; no decision follows a `reject` or an `answer`; a `reject`
//!   never follows a `dispatch` or the output; an `answer` never follows
//!   the output;
//! - with `dispatch` in `records`, a call's output has a `dispatch` (or a
//!   `reject`) before it, and an `answer` a `dispatch`; with `run`, every
//!   `response` lies inside a run. The promise binds the session's own
//!   entries: a fork's prefix is another session's record;
//! - an `item` of a model call comes before that call's `response` on its
//!   path (the `response` is the last entry written for the call);
//! - `queued_from` names a `queued` entry on the path.
//!
//! Everything is found from facts the read copied out of each line, over
//! one index of the tree ([`Tree`]): no line is parsed again.

use std::collections::HashMap;

use super::problem::{Problem, ProblemKind};
use super::read::{Entry, Session};

/// What a call's event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Event<'e> {
    /// A `dispatch`.
    Dispatch,
    /// A `decision` with this verdict.
    Decision(&'e str),
    /// A `function_call_output` item.
    Output,
}

/// The tree of a read file as indexes, built once for the rules across
/// lines.
pub(super) struct Tree<'s, 'a> {
    pub(super) entries: &'s [Entry<'a>],
    /// Each entry's parent index, when the parent is an earlier entry.
    pub(super) parent: Vec<Option<usize>>,
    /// The index of the `function_call` item holding each call id (its
    /// first, when a file repeats one).
    pub(super) call_at: HashMap<&'s str, usize>,
    /// For each entry, the nearest `run` entry on its path, itself
    /// included.
    pub(super) nearest_run: Vec<Option<usize>>,
    /// Whether the entry is an event (dispatch, decision, output) and no
    /// event lies between it and the nearest run entry above it.
    pub(super) first_event: Vec<bool>,
    /// The first entry of the session's own (after the prefix).
    pub(super) own_from: usize,
}

impl<'s, 'a> Tree<'s, 'a> {
    pub(super) fn of(s: &'s Session<'a>) -> Self {
        let entries = s.entries();
        let mut parent = Vec::with_capacity(entries.len());
        let mut call_at = HashMap::new();
        let mut nearest_run: Vec<Option<usize>> = Vec::with_capacity(entries.len());
        let mut first_event = Vec::with_capacity(entries.len());
        // Whether an event lies between an entry and its nearest run entry.
        let mut event_since: Vec<bool> = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let p = e
                .parent
                .as_deref()
                .and_then(|p| s.index_of(p))
                .filter(|&p| p < i);
            parent.push(p);
            if let (Some("function_call"), Some(c)) = (e.item_type.as_deref(), e.call_id.as_deref())
                && e.entry_type == "item"
            {
                call_at.entry(c).or_insert(i);
            }
            let is_event = event_of(e).is_some();
            if e.entry_type == "run" {
                nearest_run.push(Some(i));
                event_since.push(false);
                first_event.push(false);
            } else {
                let (run, since) = match p {
                    Some(p) => (nearest_run[p], event_since[p]),
                    None => (None, false),
                };
                nearest_run.push(run);
                first_event.push(is_event && !since);
                event_since.push(since || is_event);
            }
        }
        Tree {
            entries,
            parent,
            call_at,
            nearest_run,
            first_event,
            own_from: s.prefix_len(),
        }
    }

    /// The call id an event entry is about.
    pub(super) fn call_of(&self, i: usize) -> Option<&'s str> {
        let e = &self.entries[i];
        match e.entry_type.as_str() {
            "dispatch" | "decision" => e.call_id.as_deref(),
            "item" => e.output_of.as_deref(),
            _ => None,
        }
    }

    /// The events of the call `c` on the path strictly above `i`, down to
    /// its `function_call`, in path order; `None` when that call is not
    /// on the path.
    pub(super) fn events_above(&self, i: usize, c: &str) -> Option<Vec<(usize, Event<'s>)>> {
        let &ci = self.call_at.get(c)?;
        let mut out = Vec::new();
        let mut cur = self.parent[i];
        while let Some(k) = cur {
            if k == ci {
                out.reverse();
                return Some(out);
            }
            if k < ci {
                return None;
            }
            if self.call_of(k) == Some(c)
                && let Some(ev) = event_of(&self.entries[k])
            {
                out.push((k, ev));
            }
            cur = self.parent[k];
        }
        None
    }
}

/// The event an entry is for its call, if it is one.
pub(super) fn event_of<'e>(e: &'e Entry<'_>) -> Option<Event<'e>> {
    match e.entry_type.as_str() {
        "dispatch" => Some(Event::Dispatch),
        "decision" => e.verdict.as_deref().map(Event::Decision),
        "item" if e.output_of.is_some() => Some(Event::Output),
        _ => None,
    }
}

impl Session<'_> {
    /// The call order, the `records` promise, the response order and
    /// `queued_from`; problems appended to `out`.
    pub(super) fn check_lifecycle(&self, tree: &Tree<'_, '_>, out: &mut Vec<Problem>) {
        let entries = self.entries();
        let promised = |t: &str| self.header().records.iter().any(|r| r == t);
        let (dispatches, runs) = (promised("dispatch"), promised("run"));
        let mut report = |line: usize, kind: ProblemKind| out.push(Problem { line, kind });
        let mut responses: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            let own = i >= tree.own_from;
            if let Some(ev) = event_of(e)
                && let Some(c) = tree.call_of(i)
                && let Some(before) = tree.events_above(i, c)
            {
                let had = |want: &dyn Fn(Event<'_>) -> bool| before.iter().any(|&(_, b)| want(b));
                let reject = had(&|b| b == Event::Decision("reject"));
                let answer = had(&|b| b == Event::Decision("answer"));
                let output = had(&|b| b == Event::Output);
                let dispatch = had(&|b| b == Event::Dispatch);
                let order = |m: String| Some(ProblemKind::CallOrder(m));
                let problem = match ev {
                    Event::Dispatch if reject => {
                        order(format!("a dispatch of {c} follows its reject"))
                    }
                    Event::Dispatch if answer => {
                        order(format!("a dispatch of {c} follows its answer"))
                    }
                    Event::Dispatch if output => {
                        order(format!("a dispatch of {c} follows its output"))
                    }
                    Event::Decision(_) if reject => {
                        order(format!("a decision on {c} follows its reject"))
                    }
                    Event::Decision(_) if answer => {
                        order(format!("a decision on {c} follows its answer"))
                    }
                    Event::Decision("reject") if dispatch => order(format!(
                        "a reject of {c} follows its dispatch (a call that may have run is ended by `answer`)"
                    )),
                    Event::Decision("reject") if output => {
                        order(format!("a reject of {c} follows its output"))
                    }
                    Event::Decision("answer") if output => {
                        order(format!("an answer to {c} follows its output"))
                    }
                    Event::Decision("answer") if dispatches && own && !dispatch => {
                        Some(ProblemKind::Records(format!(
                            "records promises dispatch, and call {c} is answered with no dispatch (a call that never started is ended by `reject`)"
                        )))
                    }
                    Event::Output if dispatches && own && !dispatch && !reject && !answer => {
                        Some(ProblemKind::Records(format!(
                            "records promises dispatch, and call {c} has an output and no dispatch"
                        )))
                    }
                    _ => None,
                };
                if let Some(k) = problem {
                    report(e.line, k);
                }
            }
            match e.entry_type.as_str() {
                "response" => {
                    if runs && own {
                        let open = tree.parent[i]
                            .and_then(|p| tree.nearest_run[p])
                            .and_then(|r| entries[r].run.as_deref())
                            .is_some_and(|r| r.start);
                        if !open {
                            report(
                                e.line,
                                ProblemKind::Records(
                                    "records promises run, and this model call is outside any run"
                                        .into(),
                                ),
                            );
                        }
                    }
                    if let Some(r) = e.response_id.as_deref() {
                        responses.entry(r).or_default().push(i);
                    }
                }
                "item" => {
                    if let Some(r) = e.response_id.as_deref()
                        && let Some(rs) = responses.get(r)
                        && let Some(&ri) = rs.iter().find(|&&ri| self.is_ancestor(tree, ri, i))
                    {
                        report(
                            e.line,
                            ProblemKind::ResponseOrder(format!(
                                "an item of response {r} follows that response (line {})",
                                entries[ri].line
                            )),
                        );
                    }
                    if let Some(q) = e.reference("queued_from") {
                        let ok = self.index_of(q).is_some_and(|qi| {
                            entries[qi].entry_type == "queued" && self.is_ancestor(tree, qi, i)
                        });
                        if !ok {
                            report(
                                e.line,
                                ProblemKind::Reference(format!(
                                    "queued_from {q} is not a `queued` entry on the path before the item"
                                )),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Whether `a` is a strict ancestor of `i` (a walk bounded by `i - a`).
    pub(super) fn is_ancestor(&self, tree: &Tree<'_, '_>, a: usize, i: usize) -> bool {
        let mut cur = tree.parent[i];
        while let Some(k) = cur {
            if k == a {
                return true;
            }
            if k < a {
                return false;
            }
            cur = tree.parent[k];
        }
        false
    }
}
