//! The rules on `run` entries (RFC 0001, "`run`"): an end pairs with the
//! start of its own run on its path and runs do not nest; a start's
//! `source` is the shape of its segment (`resume` when the segment's first
//! output, decision or dispatch takes up a call left without an output
//! when the run began, `input` otherwise); an end's computable `reason` is
//! the one its segment gives (written `error` and `interrupted` stand over
//! any segment); `pending` is the run's calls without an output.

use std::collections::BTreeSet;

use super::lifecycle::{Event, Tree};
use super::problem::{Problem, ProblemKind};
use super::read::Session;

/// The computable reasons, in the order the RFC tests them.
fn compute_reason(s: &Segment) -> &'static str {
    if s.last_response.is_some_and(|r| r.error) {
        return "error";
    }
    let held = s.calls.iter().any(|c| !c.output && c.held);
    let in_flight = s.calls.iter().any(|c| !c.output && c.in_flight);
    if held && !in_flight {
        return "input_required";
    }
    if s.calls.iter().any(|c| !c.output) || s.last_response.is_some_and(|r| r.incomplete) {
        return "aborted";
    }
    if let Some(r) = s.last_response
        && !r.calls
    {
        return "done";
    }
    if s.stopped {
        return "stopped";
    }
    "aborted"
}

#[derive(Debug, Clone, Copy)]
struct ResponseFacts {
    error: bool,
    incomplete: bool,
    /// Whether a `function_call` is among its output items.
    calls: bool,
}

#[derive(Debug)]
struct CallState {
    id: String,
    output: bool,
    held: bool,
    in_flight: bool,
}

#[derive(Debug)]
struct Segment {
    last_response: Option<ResponseFacts>,
    calls: Vec<CallState>,
    stopped: bool,
}

impl Session<'_> {
    /// Every rule on `run` entries; problems appended to `out`.
    pub(super) fn check_runs(&self, tree: &Tree<'_, '_>, out: &mut Vec<Problem>) {
        let entries = self.entries();
        let mut report = |line: usize, kind: ProblemKind| out.push(Problem { line, kind });
        // The source shape of each start whose segment shows one, from its
        // first event on every path below it.
        let mut source_checked = vec![false; entries.len()];
        for (i, e) in entries.iter().enumerate() {
            if tree.first_event[i]
                && let Some(k) = tree.parent[i].and_then(|p| tree.nearest_run[p])
                && let Some(run) = entries[k].run.as_deref()
                && run.start
                && !source_checked[k]
            {
                source_checked[k] = true;
                let computed = if self.takes_up(tree, i, k) {
                    "resume"
                } else {
                    "input"
                };
                if let Some(w) = run.source.as_deref()
                    && w != computed
                {
                    report(
                        entries[k].line,
                        ProblemKind::RunSource {
                            written: w.to_owned(),
                            computed: computed.to_owned(),
                        },
                    );
                }
            }
            let Some(run) = e.run.as_deref() else {
                continue;
            };
            let above = tree.parent[i].and_then(|p| tree.nearest_run[p]);
            let open = above.and_then(|k| {
                entries[k]
                    .run
                    .as_deref()
                    .filter(|r| r.start)
                    .map(|r| (k, r))
            });
            if run.start {
                if let Some((_, o)) = open {
                    report(
                        e.line,
                        ProblemKind::RunPairing(format!(
                            "run {:?} starts while run {:?} is open on the path (runs do not nest)",
                            run.run_id, o.run_id
                        )),
                    );
                }
                continue;
            }
            let Some((k, _)) = open.filter(|(_, o)| o.run_id == run.run_id) else {
                report(
                    e.line,
                    ProblemKind::RunPairing(format!(
                        "run end {:?} has no start of its own run open on the path",
                        run.run_id
                    )),
                );
                continue;
            };
            let seg = self.segment(tree, k, i);
            // A closed run whose segment holds no event is an `input`.
            if !source_checked[k] {
                source_checked[k] = true;
                if let Some(w) = entries[k].run.as_deref().and_then(|r| r.source.as_deref())
                    && w == "resume"
                {
                    report(
                        entries[k].line,
                        ProblemKind::RunSource {
                            written: w.to_owned(),
                            computed: "input".to_owned(),
                        },
                    );
                }
            }
            if let Some(w) = run.reason.as_deref()
                && w != "error"
                && w != "interrupted"
            {
                let computed = compute_reason(&seg);
                if w != computed {
                    report(
                        e.line,
                        ProblemKind::RunReason {
                            written: w.to_owned(),
                            computed: computed.to_owned(),
                        },
                    );
                }
            }
            let written: BTreeSet<&str> = run.pending.iter().map(String::as_str).collect();
            let computed: BTreeSet<&str> = seg
                .calls
                .iter()
                .filter(|c| !c.output)
                .map(|c| c.id.as_str())
                .collect();
            if written != computed || written.len() != run.pending.len() {
                report(
                    e.line,
                    ProblemKind::RunPending {
                        written: run.pending.clone(),
                        computed: computed.into_iter().map(str::to_owned).collect(),
                    },
                );
            }
        }
    }

    /// Whether the event at `i`, the first of the run started at `k`,
    /// takes up a call that was on the path with no output when the run
    /// began.
    fn takes_up(&self, tree: &Tree<'_, '_>, i: usize, k: usize) -> bool {
        // No event lies between the start and its first event, so the
        // call's events above the start are those above `i`.
        tree.call_of(i).is_some()
            && tree.call_before[i].is_some_and(|b| b.call.is_some_and(|ci| ci < k) && !b.output)
    }

    /// The facts of the segment from the start at `k` to the end at `i`.
    fn segment(&self, tree: &Tree<'_, '_>, k: usize, i: usize) -> Segment {
        let entries = self.entries();
        // The segment, root first.
        let mut seg = Vec::new();
        let mut cur = Some(i);
        while let Some(j) = cur {
            seg.push(j);
            if j == k {
                break;
            }
            cur = tree.parent[j];
        }
        seg.reverse();
        // The run's calls: those made on the segment and those before it
        // the segment holds an event for.
        let mut ids: Vec<&str> = Vec::new();
        let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
        // Each call's latest event on the segment.
        let mut latest: std::collections::HashMap<&str, usize> = Default::default();
        for &j in &seg {
            let e = &entries[j];
            let c = if e.entry_type == "item" && e.item_type.as_deref() == Some("function_call") {
                e.call_id.as_deref()
            } else if super::lifecycle::event_of(e).is_some() {
                let c = tree.call_of(j);
                if let Some(c) = c {
                    latest.insert(c, j);
                }
                c
            } else {
                None
            };
            if let Some(c) = c
                && tree.call_at.contains_key(c)
                && seen.insert(c)
            {
                ids.push(c);
            }
        }
        let calls = ids
            .iter()
            .map(|&c| {
                // The call's events on the path, as its latest event on
                // the segment left them (none: a call made on the segment
                // with no event yet).
                let f = latest
                    .get(c)
                    .and_then(|&j| tree.call_after[j])
                    .filter(|f| f.call.is_some())
                    .unwrap_or_default();
                let output = f.output;
                let held = f
                    .last_decision
                    .is_some_and(|(d, v)| v == "hold" && f.last_dispatch.is_none_or(|x| x < d));
                let in_flight = f.last_dispatch.is_some_and(|x| {
                    !output
                        && !f
                            .last_decision
                            .is_some_and(|(d, v)| d > x && matches!(v, "hold" | "answer"))
                });
                CallState {
                    id: c.to_owned(),
                    output,
                    held,
                    in_flight,
                }
            })
            .collect::<Vec<_>>();
        let last_response = seg
            .iter()
            .rev()
            .find(|&&j| entries[j].entry_type == "response")
            .map(|&j| self.response_facts(tree, j));
        // `stopped` reads the path: the last response before the end has
        // calls, every call on the path has an output, the segment holds an
        // output or a decision.
        let holds = seg.iter().any(|&j| {
            matches!(
                super::lifecycle::event_of(&entries[j]),
                Some(Event::Output | Event::Decision(_))
            )
        });
        let stopped = holds
            && last_response.is_none_or(|r| r.calls)
            && self.path_stopped(tree, i, last_response.is_none());
        Segment {
            last_response,
            calls,
            stopped,
        }
    }

    /// Over the path to `i`: whether its last response has calls (looked
    /// for only when `find_response`) and every call on it has an output
    /// (both kept per entry by [`Tree`]'s one walk).
    fn path_stopped(&self, tree: &Tree<'_, '_>, i: usize, find_response: bool) -> bool {
        let response_ok = !find_response
            || tree.last_response[i].is_some_and(|j| self.response_facts(tree, j).calls);
        response_ok && tree.answered[i]
    }

    /// A response's error, incomplete and whether its output holds a call:
    /// its output items are the items before it on the path that name it,
    /// entries that are not items skipped, up to the first item that names
    /// another response or none.
    fn response_facts(&self, tree: &Tree<'_, '_>, j: usize) -> ResponseFacts {
        let r = &self.entries()[j];
        ResponseFacts {
            error: r.error,
            incomplete: r.incomplete,
            calls: tree.outputs_of(j).is_some_and(|(_, calls)| calls),
        }
    }
}
