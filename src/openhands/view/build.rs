//! `View.from_events` in its three versions: SDK 1.0.0–1.9.1 and 1.10.0
//! `openhands/sdk/context/view.py`, SDK 1.11.5+
//! `openhands/sdk/context/view/view.py` with `view/properties/*.py`.
//!
//! Events are matched by their JSON `id` as the SDK matches them (so two
//! events sharing an id are kept or dropped together, as there); the
//! synthetic summary of a condensation has the id `<condensation id>-summary`
//! (before 1.10.0 the SDK gives it a fresh random id on every build: the
//! same string stands in for it here).

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::borrow::Cow;

use super::event::{Body, ViewEvent};
use super::version::{SdkVersion, ViewAlgorithm};
use crate::openhands::Kind;

mod blocks;
mod fixpoint;
#[cfg(test)]
mod reference;

use blocks::Blocks;
use fixpoint::enforce_properties;

/// One element of the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViewEntry {
    /// The event at this position of [`View::events`](super::View::events).
    Event(usize),
    /// The summary of the condensation at this position.
    Summary(usize),
}

/// The id of an entry: the event's JSON id, or `<condensation id>-summary`.
pub(crate) fn entry_id<'e>(events: &'e [ViewEvent<'_>], e: ViewEntry) -> Cow<'e, str> {
    match e {
        ViewEntry::Event(p) => Cow::Borrowed(events.get(p).map_or("", |ev| ev.id.as_ref())),
        ViewEntry::Summary(p) => Cow::Owned(format!(
            "{}-summary",
            events.get(p).map_or("", |ev| ev.id.as_ref())
        )),
    }
}

struct Ctx<'v, 'a> {
    events: &'v [ViewEvent<'a>],
}

impl<'v, 'a> Ctx<'v, 'a> {
    fn ev(&self, p: usize) -> Option<&'v ViewEvent<'a>> {
        self.events.get(p)
    }

    /// The kind the view gives `e`; `None` for an event it cannot use.
    fn kind(&self, e: ViewEntry) -> Option<&'v Kind<'a>> {
        match e {
            ViewEntry::Event(p) => self.ev(p).and_then(|v| v.effective_kind()),
            ViewEntry::Summary(_) => Some(&Kind::CondensationSummary),
        }
    }

    fn is_action(&self, e: ViewEntry) -> bool {
        self.kind(e) == Some(&Kind::Action)
    }

    fn is_obs(&self, e: ViewEntry) -> bool {
        self.kind(e).is_some_and(Kind::is_observation_like)
    }

    fn tcid(&self, e: ViewEntry) -> Option<&'v str> {
        match e {
            ViewEntry::Event(p) => self.ev(p).and_then(|v| v.tool_call_id()),
            ViewEntry::Summary(_) => None,
        }
    }

    fn rid(&self, e: ViewEntry) -> Option<&'v str> {
        match e {
            ViewEntry::Event(p) => self.ev(p).and_then(|v| v.llm_response_id()),
            ViewEntry::Summary(_) => None,
        }
    }

    fn id(&self, e: ViewEntry) -> Cow<'v, str> {
        entry_id(self.events, e)
    }

    /// `{llm_response_id: [action ids]}` over `seq`, first-seen order.
    fn batches(&self, seq: impl Iterator<Item = ViewEntry>) -> Vec<(&'v str, Vec<Cow<'v, str>>)> {
        let mut order: Vec<(&'v str, Vec<Cow<'v, str>>)> = Vec::new();
        let mut at: HashMap<&'v str, usize> = HashMap::new();
        for e in seq {
            if !self.is_action(e) {
                continue;
            }
            let Some(rid) = self.rid(e) else { continue };
            let slot = *at.entry(rid).or_insert_with(|| {
                order.push((rid, Vec::new()));
                order.len() - 1
            });
            if let Some((_, ids)) = order.get_mut(slot) {
                ids.push(self.id(e));
            }
        }
        order
    }
}

/// Builds the view of `seq` (positions of the conversation's events, in
/// order) as SDK `version` does.
pub(crate) fn from_events(
    events: &[ViewEvent<'_>],
    seq: &[usize],
    version: SdkVersion,
) -> Vec<ViewEntry> {
    let cx = Ctx { events };
    match version.algorithm() {
        ViewAlgorithm::Legacy => legacy(&cx, seq, version),
        ViewAlgorithm::Sequential => {
            let out = apply_condensations(&cx, seq);
            let out = batch_atomicity_v10(&cx, out, seq);
            unmatched_v10(&cx, out, seq)
        }
        ViewAlgorithm::Properties => {
            let out = apply_condensations(&cx, seq);
            enforce_properties(&cx, out, seq, version)
        }
    }
}

/// 1.0.0 – 1.9.x.
fn legacy(cx: &Ctx<'_, '_>, seq: &[usize], version: SdkVersion) -> Vec<ViewEntry> {
    let mut forgotten: HashSet<Cow<'_, str>> = HashSet::new();
    for &p in seq {
        let Some(ev) = cx.ev(p) else { continue };
        match ev.effective_kind() {
            Some(Kind::Condensation) => {
                if let Body::Condensation { forgotten: f, .. } = &ev.body {
                    forgotten.extend(f.iter().map(|x| Cow::Borrowed(x.as_ref())));
                }
                forgotten.insert(Cow::Borrowed(ev.id.as_ref()));
            }
            Some(Kind::CondensationRequest) => {
                forgotten.insert(Cow::Borrowed(ev.id.as_ref()));
            }
            _ => {}
        }
    }
    // Batch atomicity over all events.
    let all = seq.iter().map(|&p| ViewEntry::Event(p));
    for (_, ids) in cx.batches(all) {
        if ids.iter().any(|id| forgotten.contains(id)) {
            forgotten.extend(ids);
        }
    }
    let mut kept: Vec<ViewEntry> = seq
        .iter()
        .map(|&p| ViewEntry::Event(p))
        .filter(|&e| cx.kind(e).is_some_and(Kind::in_context) && !forgotten.contains(&cx.id(e)))
        .collect();
    // Only the latest condensation with both a summary and an offset.
    let latest = seq.iter().rev().find_map(|&p| {
        let ev = cx.ev(p)?;
        match (&ev.body, ev.effective_kind()) {
            (
                Body::Condensation {
                    summary: Some(_),
                    offset: Some(o),
                    ..
                },
                Some(Kind::Condensation),
            ) => Some((p, *o)),
            _ => None,
        }
    });
    if let Some((p, offset)) = latest {
        kept.insert(offset.min(kept.len()), ViewEntry::Summary(p));
    }
    // Tool-call pairing, one pass.
    let action_ids: HashSet<&str> = kept
        .iter()
        .filter(|&&e| cx.is_action(e))
        .filter_map(|&e| cx.tcid(e))
        .collect();
    let obs_ids: HashSet<&str> = kept
        .iter()
        .filter(|&&e| cx.is_obs(e))
        .filter_map(|&e| cx.tcid(e))
        .collect();
    let keep = |e: ViewEntry| -> bool {
        if cx.is_obs(e) {
            cx.tcid(e).is_some_and(|t| action_ids.contains(t))
        } else if cx.is_action(e) {
            cx.tcid(e).is_some_and(|t| obs_ids.contains(t))
        } else {
            true
        }
    };
    if version < SdkVersion::V1_7_0 {
        return kept.into_iter().filter(|&e| keep(e)).collect();
    }
    // 1.7.0+: removed ids, then whole batches (within the kept list), then
    // observations answering a removed action.
    let mut removed: HashSet<Cow<'_, str>> = kept
        .iter()
        .filter(|&&e| !keep(e))
        .map(|&e| cx.id(e))
        .collect();
    for (_, ids) in cx.batches(kept.iter().copied()) {
        if ids.iter().any(|id| removed.contains(id)) {
            removed.extend(ids);
        }
    }
    let mut action_tcid: HashMap<Cow<'_, str>, &str> = HashMap::new();
    for &e in &kept {
        if cx.is_action(e)
            && let Some(t) = cx.tcid(e)
        {
            action_tcid.insert(cx.id(e), t);
        }
    }
    let drop_tcids: HashSet<&str> = removed
        .iter()
        .filter_map(|id| action_tcid.get(id).copied())
        .collect();
    kept.into_iter()
        .filter(|&e| {
            let answers_removed =
                cx.is_obs(e) && cx.tcid(e).is_some_and(|t| drop_tcids.contains(t));
            !(removed.contains(&cx.id(e)) || answers_removed)
        })
        .collect()
}

/// 1.10.0+ step 1: condensations applied in order to the list built so far.
///
/// The SDK removes each condensation's forgotten IDs from the list and
/// inserts its summary at the offset: a pass over the list per
/// condensation, which a store of many condensations turns quadratic. The
/// list here is a [`Blocks`] sequence, where both cost about the square root
/// of its length.
fn apply_condensations(cx: &Ctx<'_, '_>, seq: &[usize]) -> Vec<ViewEntry> {
    let mut out = Blocks::default();
    for &p in seq {
        let Some(ev) = cx.ev(p) else { continue };
        let kind = ev.effective_kind();
        if kind == Some(&Kind::Condensation) {
            if let Body::Condensation {
                forgotten,
                summary,
                offset,
            } = &ev.body
            {
                for f in forgotten {
                    out.forget(f.as_ref());
                }
                if let (Some(_), Some(o)) = (summary, offset) {
                    let e = ViewEntry::Summary(p);
                    out.insert(*o, e, cx.id(e));
                }
            }
        } else if kind.is_some_and(Kind::in_context) {
            let e = ViewEntry::Event(p);
            out.push(e, cx.id(e));
        }
    }
    out.into_vec()
}

/// `{llm_response_id: {action ids}}` over the whole conversation.
fn all_batches<'v>(cx: &Ctx<'v, '_>, seq: &[usize]) -> HashMap<&'v str, HashSet<Cow<'v, str>>> {
    let mut map: HashMap<&'v str, HashSet<Cow<'v, str>>> = HashMap::new();
    for (rid, ids) in cx.batches(seq.iter().map(|&p| ViewEntry::Event(p))) {
        map.entry(rid).or_default().extend(ids);
    }
    map
}

/// 1.10.0 – 1.11.4 `_enforce_batch_atomicity(view, all)`.
fn batch_atomicity_v10(cx: &Ctx<'_, '_>, out: Vec<ViewEntry>, seq: &[usize]) -> Vec<ViewEntry> {
    let in_view: HashSet<Cow<'_, str>> = out.iter().map(|&e| cx.id(e)).collect();
    let mut remove: HashSet<Cow<'_, str>> = HashSet::new();
    for (_, ids) in cx.batches(seq.iter().map(|&p| ViewEntry::Event(p))) {
        if ids.iter().any(|id| !in_view.contains(id)) {
            remove.extend(ids);
        }
    }
    out.into_iter()
        .filter(|&e| !remove.contains(&cx.id(e)))
        .collect()
}

/// 1.10.0 – 1.11.4 `_filter_unmatched_tool_calls(view, all)`.
fn unmatched_v10(cx: &Ctx<'_, '_>, out: Vec<ViewEntry>, seq: &[usize]) -> Vec<ViewEntry> {
    let action_ids: HashSet<&str> = out
        .iter()
        .filter(|&&e| cx.is_action(e))
        .filter_map(|&e| cx.tcid(e))
        .collect();
    let obs_ids: HashSet<&str> = out
        .iter()
        .filter(|&&e| cx.is_obs(e))
        .filter_map(|&e| cx.tcid(e))
        .collect();
    let kept: Vec<ViewEntry> = out
        .into_iter()
        .filter(|&e| {
            if cx.is_obs(e) {
                cx.tcid(e).is_some_and(|t| action_ids.contains(t))
            } else if cx.is_action(e) {
                cx.tcid(e).is_some_and(|t| obs_ids.contains(t))
            } else {
                true
            }
        })
        .collect();
    let kept = batch_atomicity_v10(cx, kept, seq);
    let kept_ids: HashSet<Cow<'_, str>> = kept.iter().map(|&e| cx.id(e)).collect();
    // action id -> tool_call_id over all events (a later duplicate id wins).
    let mut action_tcid: HashMap<Cow<'_, str>, &str> = HashMap::new();
    for &p in seq {
        let e = ViewEntry::Event(p);
        if cx.is_action(e)
            && let Some(t) = cx.tcid(e)
        {
            action_tcid.insert(cx.id(e), t);
        }
    }
    let drop_tcids: HashSet<&str> = action_tcid
        .iter()
        .filter(|(id, _)| !kept_ids.contains(*id))
        .map(|(_, t)| *t)
        .collect();
    kept.into_iter()
        .filter(|&e| !(cx.is_obs(e) && cx.tcid(e).is_some_and(|t| drop_tcids.contains(t))))
        .collect()
}

fn observation_uniqueness<'v>(cx: &Ctx<'v, '_>, out: &[ViewEntry]) -> HashSet<Cow<'v, str>> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut drop = HashSet::new();
    for &e in out {
        if cx.is_obs(e) {
            let t = cx.tcid(e).unwrap_or("");
            if !seen.insert(t) {
                drop.insert(cx.id(e));
            }
        }
    }
    drop
}

/// Tool loops over the whole conversation (non-LLM events included): a loop
/// starts at an action with thinking blocks, continues through actions and
/// observation-like events, and any other event closes it.
fn tool_loops<'v>(cx: &Ctx<'v, '_>, seq: &[usize]) -> Vec<HashSet<Cow<'v, str>>> {
    let mut loops = Vec::new();
    let mut current: Option<HashSet<Cow<'v, str>>> = None;
    for &p in seq {
        let e = ViewEntry::Event(p);
        let thinking = cx
            .ev(p)
            .is_some_and(|v| v.effective_kind() == Some(&Kind::Action) && v.has_thinking_blocks());
        if thinking {
            if let Some(l) = current.take() {
                loops.push(l);
            }
            current = Some(HashSet::from_iter([cx.id(e)]));
        } else if cx.is_action(e) || cx.is_obs(e) {
            if let Some(l) = current.as_mut() {
                l.insert(cx.id(e));
            }
        } else if let Some(l) = current.take() {
            loops.push(l);
        }
    }
    if let Some(l) = current {
        loops.push(l);
    }
    loops
}
