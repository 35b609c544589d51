//! The rules on a call's life and on the header's `records` promise
//! (RFC 0001, "`dispatch`", "`decision`", "Entry hash" on `records`,
//! "Writing discipline"):
//!
//! - a `dispatch` never follows a `reject`, an `answer` or the call's
//!   output; no decision follows a `reject` or an `answer`; a `reject`
//!   never follows a `dispatch` or the output; an `answer` never follows
//!   the output; the output never follows a `hold` straight away (a hold
//!   is answered by a `proceed`, a `dispatch`, a `reject` or an `answer`);
//! - with `dispatch` in `records`, a call's output has a `dispatch` (or a
//!   `reject`) before it, and an `answer` a `dispatch`; with `run`, every
//!   `response` lies inside a run. The promise binds the session's own
//!   entries: a fork's prefix is another session's record;
//! - an `item` of a model call comes before that call's `response` on its
//!   path (the `response` is the last entry written for the call), and
//!   after the `start` of the run that `response` is in;
//! - `queued_from` names a `queued` entry on the path.
//!
//! Everything is found from facts the read copied out of each line, over
//! one index of the tree ([`Tree`]) built in time linear in the file: each
//! entry's place in one depth-first walk (so whether one entry is above
//! another is one comparison), and what that walk keeps of the path from a
//! root to each entry (each call's events so far, the responses by id,
//! whether every call has its output, each response's output items). No
//! line is parsed again, and no rule walks a path.

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

/// What the events of one call say on a path, from its `function_call`
/// down to a point of the path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct CallFacts<'e> {
    /// The index of the call's `function_call`, when it is on the path
    /// (otherwise the rest says nothing).
    pub(super) call: Option<usize>,
    /// Whether a `dispatch` came.
    pub(super) dispatch: bool,
    /// Whether a `reject` came.
    pub(super) reject: bool,
    /// Whether an `answer` came.
    pub(super) answer: bool,
    /// Whether the output came.
    pub(super) output: bool,
    /// The latest event.
    pub(super) last: Option<Event<'e>>,
    /// The index of the latest `dispatch`.
    pub(super) last_dispatch: Option<usize>,
    /// The index and verdict of the latest `decision`.
    pub(super) last_decision: Option<(usize, &'e str)>,
}

impl<'e> CallFacts<'e> {
    /// These facts after the event `ev` at index `j`.
    fn with(mut self, j: usize, ev: Event<'e>) -> Self {
        match ev {
            Event::Dispatch => {
                self.dispatch = true;
                self.last_dispatch = Some(j);
            }
            Event::Decision(v) => {
                self.reject |= v == "reject";
                self.answer |= v == "answer";
                self.last_decision = Some((j, v));
            }
            Event::Output => self.output = true,
        }
        self.last = Some(ev);
        self
    }
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
    /// Each entry's place in a depth-first walk of the tree, and the end
    /// of its subtree: `a` is an ancestor of `i` when `i`'s place lies in
    /// `a`'s span.
    enter: Vec<u32>,
    leave: Vec<u32>,
    /// For an `item` naming a response: the earliest `response` with that
    /// `response_id` above it on its path.
    pub(super) response_above: Vec<Option<usize>>,
    /// Whether every `function_call` on the path to the entry (itself
    /// included) has a `function_call_output` on that path.
    pub(super) answered: Vec<bool>,
    /// The nearest `response` on the path to the entry, itself included.
    pub(super) last_response: Vec<Option<usize>>,
    /// For an `item` naming a response: the first item of the run of items
    /// naming that response that ends at it on its path (entries that are
    /// not items skipped), and whether a `function_call` is among them.
    output_block: Vec<Option<(usize, bool)>>,
    /// The nearest `item` on the path to the entry, itself included.
    nearest_item: Vec<Option<usize>>,
    /// For an event (dispatch, decision, output): what its call's events
    /// above it on its path say.
    pub(super) call_before: Vec<Option<CallFacts<'s>>>,
    /// For an event: the same with the event itself.
    pub(super) call_after: Vec<Option<CallFacts<'s>>>,
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
        let mut tree = Tree {
            entries,
            parent,
            call_at,
            nearest_run,
            first_event,
            own_from: s.prefix_len(),
            enter: Vec::new(),
            leave: Vec::new(),
            response_above: vec![None; entries.len()],
            answered: vec![true; entries.len()],
            last_response: Vec::with_capacity(entries.len()),
            call_before: vec![None; entries.len()],
            call_after: vec![None; entries.len()],
            output_block: vec![None; entries.len()],
            nearest_item: Vec::with_capacity(entries.len()),
        };
        for (i, e) in entries.iter().enumerate() {
            let above = tree.parent[i].and_then(|p| tree.last_response[p]);
            tree.last_response.push(if e.entry_type == "response" {
                Some(i)
            } else {
                above
            });
            let item_above = tree.parent[i].and_then(|p| tree.nearest_item[p]);
            if e.entry_type == "item" {
                if let Some(r) = e.response_id.as_deref() {
                    let call = e.item_type.as_deref() == Some("function_call");
                    tree.output_block[i] = Some(
                        match item_above.filter(|&q| entries[q].response_id.as_deref() == Some(r)) {
                            Some(q) => {
                                let (first, calls) = tree.output_block[q].unwrap_or((q, false));
                                (first, calls || call)
                            }
                            None => (i, call),
                        },
                    );
                }
                tree.nearest_item.push(Some(i));
            } else {
                tree.nearest_item.push(item_above);
            }
        }
        tree.walk();
        tree
    }

    /// One depth-first walk of the tree (children in file order), keeping
    /// what lies on the path from the root to the entry it is at: the
    /// responses by id, the calls and outputs by call id. Time linear in
    /// the file (hash maps aside).
    fn walk(&mut self) {
        let n = self.entries.len();
        let mut first_child = vec![usize::MAX; n];
        let mut next_sibling = vec![usize::MAX; n];
        let mut roots = Vec::new();
        for i in (0..n).rev() {
            match self.parent[i] {
                Some(p) => {
                    next_sibling[i] = first_child[p];
                    first_child[p] = i;
                }
                None => roots.push(i),
            }
        }
        roots.reverse();
        self.enter = vec![0; n];
        self.leave = vec![0; n];
        let mut responses: HashMap<&'s str, Vec<usize>> = HashMap::new();
        // Per call id on the path: function_calls, outputs.
        let mut on_path: HashMap<&'s str, (u32, u32)> = HashMap::new();
        let mut unanswered = 0usize;
        // Per call id: the facts at each of its events on the path, the
        // first pushed at its `function_call`.
        let mut facts: HashMap<&'s str, Vec<CallFacts<'s>>> = HashMap::new();
        let mut clock = 0u32;
        let entries = self.entries;
        // The call id of a `function_call` item, and of an output item.
        let call_of = |e: &'s Entry<'a>| -> (Option<&'s str>, Option<&'s str>) {
            if e.entry_type != "item" {
                return (None, None);
            }
            let call = match e.item_type.as_deref() {
                Some("function_call") => e.call_id.as_deref(),
                _ => None,
            };
            (call, e.output_of.as_deref())
        };
        // (entry, whether its children were pushed).
        let mut stack: Vec<(usize, bool)> = roots.into_iter().rev().map(|r| (r, false)).collect();
        while let Some((i, expanded)) = stack.pop() {
            let e = &entries[i];
            let (call, output) = call_of(e);
            // The call whose facts this entry adds to: an event's, or the
            // call of the `function_call` that starts them.
            let event = event_of(e);
            let marker = call.filter(|c| self.call_at.get(c) == Some(&i));
            let about = match event {
                Some(_) => self.call_of(i),
                None => marker,
            };
            if expanded {
                // Leaving `i`: undo what entering it added.
                self.leave[i] = clock;
                if let Some(c) = about
                    && let Some(v) = facts.get_mut(c)
                {
                    v.pop();
                }
                if e.entry_type == "response"
                    && let Some(r) = e.response_id.as_deref()
                    && let Some(v) = responses.get_mut(r)
                {
                    v.pop();
                }
                for (c, is_call) in [(call, true), (output, false)] {
                    if let Some(c) = c
                        && let Some(st) = on_path.get_mut(c)
                    {
                        let was = st.0 > 0 && st.1 == 0;
                        if is_call {
                            st.0 -= 1;
                        } else {
                            st.1 -= 1;
                        }
                        let now = st.0 > 0 && st.1 == 0;
                        unanswered = unanswered + usize::from(now) - usize::from(was);
                    }
                }
                continue;
            }
            self.enter[i] = clock;
            clock += 1;
            if e.entry_type == "item"
                && let Some(r) = e.response_id.as_deref()
            {
                self.response_above[i] = responses.get(r).and_then(|v| v.first().copied());
            }
            if e.entry_type == "response"
                && let Some(r) = e.response_id.as_deref()
            {
                responses.entry(r).or_default().push(i);
            }
            for (c, is_call) in [(call, true), (output, false)] {
                if let Some(c) = c {
                    let st = on_path.entry(c).or_insert((0, 0));
                    let was = st.0 > 0 && st.1 == 0;
                    if is_call {
                        st.0 += 1;
                    } else {
                        st.1 += 1;
                    }
                    let now = st.0 > 0 && st.1 == 0;
                    unanswered = unanswered + usize::from(now) - usize::from(was);
                }
            }
            self.answered[i] = unanswered == 0;
            if let Some(c) = about {
                let v = facts.entry(c).or_default();
                let next = match event {
                    Some(ev) => {
                        let before = v.last().copied().unwrap_or_default();
                        let after = before.with(i, ev);
                        self.call_before[i] = Some(before);
                        self.call_after[i] = Some(after);
                        after
                    }
                    None => CallFacts {
                        call: Some(i),
                        ..CallFacts::default()
                    },
                };
                v.push(next);
            }
            stack.push((i, true));
            let mut kids = Vec::new();
            let mut c = first_child[i];
            while c != usize::MAX {
                kids.push(c);
                c = next_sibling[c];
            }
            stack.extend(kids.into_iter().rev().map(|k| (k, false)));
        }
    }

    /// The output items of the `response` at `i` (the items before it on
    /// the path that name it, entries that are not items skipped, up to
    /// the first item naming another response or none): the first of
    /// them, and whether a `function_call` is among them. `None` when it
    /// has none.
    pub(super) fn outputs_of(&self, i: usize) -> Option<(usize, bool)> {
        let r = self.entries[i].response_id.as_deref()?;
        let q = self.parent[i].and_then(|p| self.nearest_item[p])?;
        if self.entries[q].response_id.as_deref() != Some(r) {
            return None;
        }
        self.output_block[q]
    }

    /// Whether `a` is a strict ancestor of `i`.
    pub(super) fn is_ancestor(&self, a: usize, i: usize) -> bool {
        a != i && self.enter[a] <= self.enter[i] && self.enter[i] < self.leave[a]
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
        for (i, e) in entries.iter().enumerate() {
            let own = i >= tree.own_from;
            if let Some(ev) = event_of(e)
                && let Some(c) = tree.call_of(i)
                && let Some(before) = tree.call_before[i].filter(|b| b.call.is_some())
            {
                let CallFacts {
                    reject,
                    answer,
                    output,
                    dispatch,
                    ..
                } = before;
                // The call's latest event: a `hold` is answered by a
                // `proceed`, a `dispatch`, a `reject` or an `answer` (or
                // held again), never by the output itself.
                let held = before.last == Some(Event::Decision("hold"));
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
                    Event::Output if held && !reject && !answer => order(format!(
                        "the output of {c} follows its hold (a hold is answered by a proceed, a dispatch, a reject or an answer)"
                    )),
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
                    // The items of a model call inside a run follow the
                    // run's start, as the response does.
                    if let Some(k) = tree.parent[i]
                        .and_then(|p| tree.nearest_run[p])
                        .filter(|&k| entries[k].run.as_deref().is_some_and(|r| r.start))
                        && let Some((j, _)) = tree.outputs_of(i).filter(|&(j, _)| j < k)
                    {
                        report(
                            entries[j].line,
                            ProblemKind::RunOrder(format!(
                                "an output item of response {} precedes the start of its run (line {})",
                                e.response_id.as_deref().unwrap_or(""),
                                entries[k].line
                            )),
                        );
                    }
                }
                "item" => {
                    if let Some(r) = e.response_id.as_deref()
                        && let Some(ri) = tree.response_above[i]
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

    /// Whether `a` is a strict ancestor of `i`.
    pub(super) fn is_ancestor(&self, tree: &Tree<'_, '_>, a: usize, i: usize) -> bool {
        tree.is_ancestor(a, i)
    }
}
