//! `View.from_events` in its three versions: SDK 1.0.0–1.9.1 and 1.10.0
//! `openhands/sdk/context/view.py`, SDK 1.11.5+
//! `openhands/sdk/context/view/view.py` with `view/properties/*.py`.
//!
//! Events are matched by their JSON `id` as the SDK matches them (so two
//! events sharing an id are kept or dropped together, as there); the
//! synthetic summary of a condensation has the id `<condensation id>-summary`
//! (before 1.10.0 the SDK gives it a fresh random id on every build: the
//! same string stands in for it here).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::event::{Body, ViewEvent};
use super::version::{SdkVersion, ViewAlgorithm};
use crate::openhands::Kind;

/// One element of the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entry {
    /// The event at this position of [`View::events`](super::View::events).
    Event(usize),
    /// The summary of the condensation at this position.
    Summary(usize),
}

/// The id of an entry: the event's JSON id, or `<condensation id>-summary`.
pub(crate) fn entry_id<'e>(events: &'e [ViewEvent<'_>], e: Entry) -> Cow<'e, str> {
    match e {
        Entry::Event(p) => Cow::Borrowed(events.get(p).map_or("", |ev| ev.id.as_ref())),
        Entry::Summary(p) => Cow::Owned(format!(
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
    fn kind(&self, e: Entry) -> Option<&'v Kind<'a>> {
        match e {
            Entry::Event(p) => self.ev(p).and_then(|v| v.effective_kind()),
            Entry::Summary(_) => Some(&Kind::CondensationSummary),
        }
    }

    fn is_action(&self, e: Entry) -> bool {
        self.kind(e) == Some(&Kind::Action)
    }

    fn is_obs(&self, e: Entry) -> bool {
        self.kind(e).is_some_and(Kind::is_observation_like)
    }

    fn tcid(&self, e: Entry) -> Option<&'v str> {
        match e {
            Entry::Event(p) => self.ev(p).and_then(|v| v.tool_call_id()),
            Entry::Summary(_) => None,
        }
    }

    fn rid(&self, e: Entry) -> Option<&'v str> {
        match e {
            Entry::Event(p) => self.ev(p).and_then(|v| v.llm_response_id()),
            Entry::Summary(_) => None,
        }
    }

    fn id(&self, e: Entry) -> Cow<'v, str> {
        entry_id(self.events, e)
    }

    /// `{llm_response_id: [action ids]}` over `seq`, first-seen order.
    fn batches(&self, seq: impl Iterator<Item = Entry>) -> Vec<(&'v str, Vec<Cow<'v, str>>)> {
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
) -> Vec<Entry> {
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
fn legacy(cx: &Ctx<'_, '_>, seq: &[usize], version: SdkVersion) -> Vec<Entry> {
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
    let all = seq.iter().map(|&p| Entry::Event(p));
    for (_, ids) in cx.batches(all) {
        if ids.iter().any(|id| forgotten.contains(id)) {
            forgotten.extend(ids);
        }
    }
    let mut kept: Vec<Entry> = seq
        .iter()
        .map(|&p| Entry::Event(p))
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
        kept.insert(offset.min(kept.len()), Entry::Summary(p));
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
    let keep = |e: Entry| -> bool {
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
fn apply_condensations(cx: &Ctx<'_, '_>, seq: &[usize]) -> Vec<Entry> {
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
                    let e = Entry::Summary(p);
                    out.insert(*o, e, cx.id(e));
                }
            }
        } else if kind.is_some_and(Kind::in_context) {
            let e = Entry::Event(p);
            out.push(e, cx.id(e));
        }
    }
    out.into_vec()
}

/// A sequence of entries with removal by ID and insertion at a position,
/// each in about `sqrt(n)` steps: the entries live in blocks of at most
/// `2 * BLOCK` handles, each block knowing how many of its entries are
/// still in the sequence; removal marks entries dead through an index by
/// ID.
#[derive(Default)]
struct Blocks<'v> {
    entries: Vec<Entry>,
    alive: Vec<bool>,
    /// The block (stable number) each entry is in.
    block_of: Vec<usize>,
    /// Blocks by stable number: entry handles in sequence order.
    blocks: Vec<Vec<usize>>,
    /// Live entries per block, by stable number.
    live: Vec<usize>,
    /// Stable block numbers in sequence order.
    order: Vec<usize>,
    /// Handles of the entries with each ID (live or not).
    by_id: HashMap<Cow<'v, str>, Vec<usize>>,
    len: usize,
}

const BLOCK: usize = 256;

impl<'v> Blocks<'v> {
    fn add(&mut self, e: Entry, id: Cow<'v, str>) -> usize {
        let h = self.entries.len();
        self.entries.push(e);
        self.alive.push(true);
        self.block_of.push(usize::MAX);
        self.by_id.entry(id).or_default().push(h);
        self.len += 1;
        h
    }

    fn new_block(&mut self, at: usize, handles: Vec<usize>) -> usize {
        let b = self.blocks.len();
        let live = handles
            .iter()
            .filter(|&&h| self.alive.get(h).copied().unwrap_or(false))
            .count();
        for &h in &handles {
            if let Some(x) = self.block_of.get_mut(h) {
                *x = b;
            }
        }
        self.blocks.push(handles);
        self.live.push(live);
        self.order.insert(at.min(self.order.len()), b);
        b
    }

    /// Appends at the end.
    fn push(&mut self, e: Entry, id: Cow<'v, str>) {
        let h = self.add(e, id);
        let last = self.order.last().copied();
        match last {
            Some(b) if self.blocks.get(b).is_some_and(|v| v.len() < 2 * BLOCK) => {
                if let Some(v) = self.blocks.get_mut(b) {
                    v.push(h);
                }
                if let Some(l) = self.live.get_mut(b) {
                    *l += 1;
                }
                if let Some(x) = self.block_of.get_mut(h) {
                    *x = b;
                }
            }
            _ => {
                self.new_block(self.order.len(), vec![h]);
            }
        }
    }

    /// Inserts so that `k` live entries come before it (`k` clamped to the
    /// length, as Python's `list.insert`).
    fn insert(&mut self, k: usize, e: Entry, id: Cow<'v, str>) {
        let k = k.min(self.len);
        let h = self.add(e, id);
        // The block holding the k-th live entry (the first block for 0).
        let mut before = 0;
        let mut at = None;
        for (i, &b) in self.order.iter().enumerate() {
            let live = self.live.get(b).copied().unwrap_or(0);
            if k == 0 || before + live >= k {
                at = Some((i, b));
                break;
            }
            before += live;
        }
        let Some((i, b)) = at else {
            self.new_block(self.order.len(), vec![h]);
            return;
        };
        let alive = &self.alive;
        let Some(block) = self.blocks.get_mut(b) else {
            return;
        };
        // Just after the (k - before)-th live entry of the block.
        let mut need = k - before;
        let mut pos = 0;
        while need > 0 && pos < block.len() {
            if block
                .get(pos)
                .is_some_and(|&x| alive.get(x).copied().unwrap_or(false))
            {
                need -= 1;
            }
            pos += 1;
        }
        block.insert(pos, h);
        let big = block.len() > 2 * BLOCK;
        if let Some(l) = self.live.get_mut(b) {
            *l += 1;
        }
        if let Some(x) = self.block_of.get_mut(h) {
            *x = b;
        }
        if big {
            let tail = block.split_off(BLOCK);
            let moved = tail
                .iter()
                .filter(|&&x| self.alive.get(x).copied().unwrap_or(false))
                .count();
            if let Some(l) = self.live.get_mut(b) {
                *l -= moved;
            }
            self.new_block(i + 1, tail);
        }
    }

    /// Removes every entry with this ID.
    fn forget(&mut self, id: &str) {
        let Some(handles) = self.by_id.remove(id) else {
            return;
        };
        for h in handles {
            if let Some(a) = self.alive.get_mut(h)
                && *a
            {
                *a = false;
                self.len -= 1;
                if let Some(l) = self.block_of.get(h).and_then(|&b| self.live.get_mut(b)) {
                    *l -= 1;
                }
            }
        }
    }

    fn into_vec(self) -> Vec<Entry> {
        let mut out = Vec::with_capacity(self.len);
        for b in self.order {
            for &h in self.blocks.get(b).map_or(&[][..], Vec::as_slice) {
                if self.alive.get(h).copied().unwrap_or(false)
                    && let Some(&e) = self.entries.get(h)
                {
                    out.push(e);
                }
            }
        }
        out
    }
}

/// `{llm_response_id: {action ids}}` over the whole conversation.
fn all_batches<'v>(cx: &Ctx<'v, '_>, seq: &[usize]) -> HashMap<&'v str, HashSet<Cow<'v, str>>> {
    let mut map: HashMap<&'v str, HashSet<Cow<'v, str>>> = HashMap::new();
    for (rid, ids) in cx.batches(seq.iter().map(|&p| Entry::Event(p))) {
        map.entry(rid).or_default().extend(ids);
    }
    map
}

/// 1.10.0 – 1.11.4 `_enforce_batch_atomicity(view, all)`.
fn batch_atomicity_v10(cx: &Ctx<'_, '_>, out: Vec<Entry>, seq: &[usize]) -> Vec<Entry> {
    let in_view: HashSet<Cow<'_, str>> = out.iter().map(|&e| cx.id(e)).collect();
    let mut remove: HashSet<Cow<'_, str>> = HashSet::new();
    for (_, ids) in cx.batches(seq.iter().map(|&p| Entry::Event(p))) {
        if ids.iter().any(|id| !in_view.contains(id)) {
            remove.extend(ids);
        }
    }
    out.into_iter()
        .filter(|&e| !remove.contains(&cx.id(e)))
        .collect()
}

/// 1.10.0 – 1.11.4 `_filter_unmatched_tool_calls(view, all)`.
fn unmatched_v10(cx: &Ctx<'_, '_>, out: Vec<Entry>, seq: &[usize]) -> Vec<Entry> {
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
    let kept: Vec<Entry> = out
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
        let e = Entry::Event(p);
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

/// 1.11.5+: evaluate the properties in order; the first that drops
/// something drops it and evaluation restarts; stop at a fixed point.
///
/// Done round by round (as the SDK does, and as
/// [`enforce_properties_rounds`] does for the tests), a store can chain
/// batches and tool loops so that each round drops one more action: a
/// round per few events, quadratic. Here the same
/// fixed point is reached with counters, each event dropped once:
///
/// - observation uniqueness fires in the first round only (dropping never
///   makes a new duplicate), so it is applied once, first;
/// - batch atomicity and tool-call matching only ever drop more as the view
///   shrinks (a batch missing an action stays incomplete; a call without an
///   answer stays unanswered), so applying them in any order reaches the
///   same fixed point, which is where the SDK's rounds get to before they
///   try the next property;
/// - tool-loop atomicity is judged, as in the SDK, only at that point, for
///   the loops that are the first loop of an event still in the view; its
///   drops may start more of the other two.
///
/// Events are dropped by ID, as the SDK drops them: events sharing an ID
/// leave together.
fn enforce_properties(
    cx: &Ctx<'_, '_>,
    mut out: Vec<Entry>,
    seq: &[usize],
    version: SdkVersion,
) -> Vec<Entry> {
    if version >= SdkVersion::V1_20_1 {
        let drop = observation_uniqueness(cx, &out);
        if !drop.is_empty() {
            out.retain(|&e| !drop.contains(&cx.id(e)));
        }
    }
    let batches = all_batches(cx, seq);
    let loops = tool_loops(cx, seq);
    Fixpoint::new(cx, &out, &batches, &loops).run(out)
}

/// The state of [`enforce_properties`]: the view's events grouped into
/// units (one per ID), and counters for each property.
struct Fixpoint<'v> {
    /// Each entry's unit.
    unit_of: Vec<usize>,
    /// Each unit's entries.
    entries: Vec<Vec<usize>>,
    /// Each unit's ID.
    ids: Vec<Cow<'v, str>>,
    alive: Vec<bool>,
    /// Tool-call IDs: live actions and observations answering each; the
    /// entries of each.
    tc_actions: Vec<usize>,
    tc_observations: Vec<usize>,
    tc_action_entries: Vec<Vec<usize>>,
    tc_observation_entries: Vec<Vec<usize>>,
    /// Each entry's tool-call ID (index) and whether it is the action, if
    /// an action or observation.
    tc_of: Vec<Option<(usize, bool)>>,
    /// Batches (`llm_response_id`): the units of the view's actions, how
    /// many are live, how many the whole conversation has.
    batch_units: Vec<Vec<usize>>,
    batch_live: Vec<usize>,
    batch_all: Vec<usize>,
    batch_fired: Vec<bool>,
    /// The batches each unit's actions belong to.
    unit_batches: Vec<Vec<usize>>,
    /// Tool loops: how many of a loop's IDs are not in the view, how many
    /// live units have it as their first loop; the loops each unit's ID is
    /// in, and its first.
    loop_missing: Vec<usize>,
    loop_first_live: Vec<usize>,
    loop_done: Vec<bool>,
    unit_loops: Vec<Vec<usize>>,
    unit_first_loop: Vec<Option<usize>>,
    /// Each loop's units (its IDs that are in the view).
    loop_units: Vec<Vec<usize>>,
    /// Loops that may have become incomplete since the last judgement.
    loop_candidates: Vec<usize>,
    /// Units to drop.
    queue: Vec<usize>,
}

impl<'v> Fixpoint<'v> {
    fn new(
        cx: &Ctx<'v, '_>,
        out: &[Entry],
        batches: &HashMap<&'v str, HashSet<Cow<'v, str>>>,
        loops: &[HashSet<Cow<'_, str>>],
    ) -> Self {
        let mut unit_by_id: HashMap<Cow<'v, str>, usize> = HashMap::new();
        let mut f = Fixpoint {
            unit_of: Vec::with_capacity(out.len()),
            entries: Vec::new(),
            ids: Vec::new(),
            alive: Vec::new(),
            tc_actions: Vec::new(),
            tc_observations: Vec::new(),
            tc_action_entries: Vec::new(),
            tc_observation_entries: Vec::new(),
            tc_of: Vec::with_capacity(out.len()),
            batch_units: Vec::new(),
            batch_live: Vec::new(),
            batch_all: Vec::new(),
            batch_fired: Vec::new(),
            unit_batches: Vec::new(),
            loop_missing: Vec::new(),
            loop_first_live: Vec::new(),
            loop_done: Vec::new(),
            unit_loops: Vec::new(),
            unit_first_loop: Vec::new(),
            loop_units: Vec::new(),
            loop_candidates: Vec::new(),
            queue: Vec::new(),
        };
        let mut tc_index: HashMap<&'v str, usize> = HashMap::new();
        let mut batch_index: HashMap<&'v str, usize> = HashMap::new();
        for (i, &e) in out.iter().enumerate() {
            let id = cx.id(e);
            let u = *unit_by_id.entry(id.clone()).or_insert_with(|| {
                f.entries.push(Vec::new());
                f.ids.push(id);
                f.alive.push(true);
                f.unit_batches.push(Vec::new());
                f.entries.len() - 1
            });
            f.unit_of.push(u);
            if let Some(v) = f.entries.get_mut(u) {
                v.push(i);
            }
            let (action, obs) = (cx.is_action(e), cx.is_obs(e));
            let tc = if action || obs {
                let t = cx.tcid(e).unwrap_or("");
                let n = tc_index.len();
                let k = *tc_index.entry(t).or_insert(n);
                if k == n {
                    f.tc_actions.push(0);
                    f.tc_observations.push(0);
                    f.tc_action_entries.push(Vec::new());
                    f.tc_observation_entries.push(Vec::new());
                }
                let (count, list) = if action {
                    (f.tc_actions.get_mut(k), f.tc_action_entries.get_mut(k))
                } else {
                    (
                        f.tc_observations.get_mut(k),
                        f.tc_observation_entries.get_mut(k),
                    )
                };
                if let (Some(c), Some(l)) = (count, list) {
                    *c += 1;
                    l.push(i);
                }
                Some((k, action))
            } else {
                None
            };
            f.tc_of.push(tc);
            if action && let Some(rid) = cx.rid(e) {
                let n = batch_index.len();
                let b = *batch_index.entry(rid).or_insert(n);
                if b == n {
                    f.batch_units.push(Vec::new());
                    f.batch_live.push(0);
                    f.batch_all.push(batches.get(rid).map_or(0, HashSet::len));
                    f.batch_fired.push(false);
                }
                let ub = f.unit_batches.get_mut(u);
                if let Some(ub) = ub
                    && !ub.contains(&b)
                {
                    ub.push(b);
                    if let (Some(units), Some(live)) =
                        (f.batch_units.get_mut(b), f.batch_live.get_mut(b))
                    {
                        units.push(u);
                        *live += 1;
                    }
                }
            }
        }
        // Loops: which units' IDs each holds.
        let units = f.ids.len();
        f.unit_loops = vec![Vec::new(); units];
        f.unit_first_loop = vec![None; units];
        f.loop_missing = vec![0; loops.len()];
        f.loop_first_live = vec![0; loops.len()];
        f.loop_done = vec![false; loops.len()];
        f.loop_units = vec![Vec::new(); loops.len()];
        for (l, members) in loops.iter().enumerate() {
            for x in members {
                match unit_by_id.get(x.as_ref()) {
                    Some(&u) => {
                        if let Some(v) = f.loop_units.get_mut(l) {
                            v.push(u);
                        }
                        if let Some(v) = f.unit_loops.get_mut(u) {
                            v.push(l);
                        }
                        if let Some(first) = f.unit_first_loop.get_mut(u)
                            && first.is_none()
                        {
                            *first = Some(l);
                            if let Some(c) = f.loop_first_live.get_mut(l) {
                                *c += 1;
                            }
                        }
                    }
                    None => {
                        if let Some(m) = f.loop_missing.get_mut(l) {
                            *m += 1;
                        }
                    }
                }
            }
            if f.loop_missing.get(l).is_some_and(|&m| m > 0) {
                f.loop_candidates.push(l);
            }
        }
        // What fails from the start.
        for b in 0..f.batch_units.len() {
            f.check_batch(b);
        }
        for k in 0..f.tc_actions.len() {
            f.check_call(k);
        }
        f
    }

    /// A batch missing an action drops the view's actions of it.
    fn check_batch(&mut self, b: usize) {
        let (Some(&live), Some(&all), Some(fired)) = (
            self.batch_live.get(b),
            self.batch_all.get(b),
            self.batch_fired.get_mut(b),
        ) else {
            return;
        };
        if *fired || live >= all {
            return;
        }
        *fired = true;
        if let Some(units) = self.batch_units.get(b) {
            self.queue.extend(units.iter().copied());
        }
    }

    /// Calls without an answer, and answers without a call, are dropped.
    fn check_call(&mut self, k: usize) {
        let acts = self.tc_actions.get(k).copied().unwrap_or(0);
        let obs = self.tc_observations.get(k).copied().unwrap_or(0);
        if acts > 0 && obs == 0 {
            for &i in self.tc_action_entries.get(k).map_or(&[][..], Vec::as_slice) {
                if let Some(&u) = self.unit_of.get(i) {
                    self.queue.push(u);
                }
            }
        }
        if obs > 0 && acts == 0 {
            for &i in self
                .tc_observation_entries
                .get(k)
                .map_or(&[][..], Vec::as_slice)
            {
                if let Some(&u) = self.unit_of.get(i) {
                    self.queue.push(u);
                }
            }
        }
    }

    fn drop_unit(&mut self, u: usize) {
        match self.alive.get_mut(u) {
            Some(a) if *a => *a = false,
            _ => return,
        }
        let mut calls = Vec::new();
        for &i in self.entries.get(u).map_or(&[][..], Vec::as_slice) {
            let Some(Some((k, is_action))) = self.tc_of.get(i).copied() else {
                continue;
            };
            let count = if is_action {
                self.tc_actions.get_mut(k)
            } else {
                self.tc_observations.get_mut(k)
            };
            if let Some(c) = count {
                *c = c.saturating_sub(1);
            }
            calls.push(k);
        }
        for k in calls {
            self.check_call(k);
        }
        for b in std::mem::take(self.unit_batches.get_mut(u).unwrap_or(&mut Vec::new())) {
            if let Some(l) = self.batch_live.get_mut(b) {
                *l = l.saturating_sub(1);
            }
            self.check_batch(b);
        }
        for l in std::mem::take(self.unit_loops.get_mut(u).unwrap_or(&mut Vec::new())) {
            if let Some(m) = self.loop_missing.get_mut(l) {
                *m += 1;
                if *m == 1 {
                    self.loop_candidates.push(l);
                }
            }
        }
        if let Some(Some(l)) = self.unit_first_loop.get(u).copied()
            && let Some(c) = self.loop_first_live.get_mut(l)
        {
            *c = c.saturating_sub(1);
        }
    }

    fn drain(&mut self) {
        while let Some(u) = self.queue.pop() {
            self.drop_unit(u);
        }
    }

    fn run(mut self, out: Vec<Entry>) -> Vec<Entry> {
        loop {
            self.drain();
            // Tool-loop atomicity, on the view as it now stands: every
            // incomplete loop that is the first loop of a live event drops
            // its live events.
            let mut fire = Vec::new();
            for l in std::mem::take(&mut self.loop_candidates) {
                let ready = self.loop_missing.get(l).is_some_and(|&m| m > 0)
                    && self.loop_first_live.get(l).is_some_and(|&c| c > 0);
                if let Some(done) = self.loop_done.get_mut(l)
                    && ready
                    && !*done
                {
                    *done = true;
                    fire.push(l);
                }
            }
            if fire.is_empty() {
                break;
            }
            // Every fired loop's live events, taken before any is dropped.
            for l in fire {
                for &u in self.loop_units.get(l).map_or(&[][..], Vec::as_slice) {
                    if self.alive.get(u).copied().unwrap_or(false) {
                        self.queue.push(u);
                    }
                }
            }
        }
        out.into_iter()
            .enumerate()
            .filter(|&(i, _)| {
                self.unit_of
                    .get(i)
                    .and_then(|&u| self.alive.get(u))
                    .copied()
                    .unwrap_or(false)
            })
            .map(|(_, e)| e)
            .collect()
    }
}

fn observation_uniqueness<'v>(cx: &Ctx<'v, '_>, out: &[Entry]) -> HashSet<Cow<'v, str>> {
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

#[cfg(test)]
fn batch_atomicity<'v>(
    cx: &Ctx<'v, '_>,
    out: &[Entry],
    all: &HashMap<&str, HashSet<Cow<'_, str>>>,
) -> HashSet<Cow<'v, str>> {
    let mut drop = HashSet::new();
    for (rid, ids) in cx.batches(out.iter().copied()) {
        let view_set: HashSet<&Cow<'_, str>> = ids.iter().collect();
        let same = all.get(rid).is_some_and(|a| {
            a.len() == view_set.len() && view_set.iter().all(|id| a.contains(*id))
        });
        if !same {
            drop.extend(ids);
        }
    }
    drop
}

#[cfg(test)]
fn tool_call_matching<'v>(cx: &Ctx<'v, '_>, out: &[Entry]) -> HashSet<Cow<'v, str>> {
    let mut actions: HashSet<&str> = HashSet::new();
    let mut observations: HashSet<&str> = HashSet::new();
    for &e in out {
        if cx.is_action(e) {
            actions.insert(cx.tcid(e).unwrap_or(""));
        } else if cx.is_obs(e) {
            observations.insert(cx.tcid(e).unwrap_or(""));
        }
    }
    let mut drop = HashSet::new();
    for &e in out {
        let t = cx.tcid(e).unwrap_or("");
        if (cx.is_action(e) && !observations.contains(t)) || (cx.is_obs(e) && !actions.contains(t))
        {
            drop.insert(cx.id(e));
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
        let e = Entry::Event(p);
        let thinking = cx
            .ev(p)
            .is_some_and(|v| v.effective_kind() == Some(&Kind::Action) && v.has_thinking_blocks());
        if thinking {
            if let Some(l) = current.take() {
                loops.push(l);
            }
            current = Some(HashSet::from([cx.id(e)]));
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

#[cfg(test)]
fn tool_loop_atomicity<'v>(
    cx: &Ctx<'v, '_>,
    out: &[Entry],
    loops: &[HashSet<Cow<'_, str>>],
) -> HashSet<Cow<'v, str>> {
    if loops.is_empty() {
        return HashSet::new();
    }
    let view_ids: HashSet<Cow<'v, str>> = out.iter().map(|&e| cx.id(e)).collect();
    // The first loop holding each ID, and each loop judged once: looking
    // the loop up by scanning them all for every entry was quadratic.
    let mut first_loop: HashMap<&str, usize> = HashMap::new();
    for (i, l) in loops.iter().enumerate() {
        for id in l {
            first_loop.entry(id.as_ref()).or_insert(i);
        }
    }
    let mut judged = vec![false; loops.len()];
    let mut drop: HashSet<Cow<'v, str>> = HashSet::new();
    for &e in out {
        let id = cx.id(e);
        let Some(&i) = first_loop.get(id.as_ref()) else {
            continue;
        };
        let (Some(seen), Some(l)) = (judged.get_mut(i), loops.get(i)) else {
            continue;
        };
        if *seen {
            continue;
        }
        *seen = true;
        if !l.iter().all(|x| view_ids.contains(x.as_ref())) {
            // The loop's events that are in the view.
            drop.extend(l.iter().filter_map(|x| view_ids.get(x.as_ref())).cloned());
        }
    }
    drop
}

/// The SDK's algorithm, round by round: the reference the fixed point of
/// [`enforce_properties`] is tested against.
#[cfg(test)]
fn enforce_properties_rounds(
    cx: &Ctx<'_, '_>,
    mut out: Vec<Entry>,
    seq: &[usize],
    version: SdkVersion,
) -> Vec<Entry> {
    let batches = all_batches(cx, seq);
    let loops = tool_loops(cx, seq);
    let uniqueness = version >= SdkVersion::V1_20_1;
    loop {
        let mut drop: HashSet<Cow<'_, str>> = HashSet::new();
        if uniqueness {
            drop = observation_uniqueness(cx, &out);
        }
        if drop.is_empty() {
            drop = batch_atomicity(cx, &out, &batches);
        }
        if drop.is_empty() {
            drop = tool_call_matching(cx, &out);
        }
        if drop.is_empty() {
            drop = tool_loop_atomicity(cx, &out, &loops);
        }
        if drop.is_empty() {
            return out;
        }
        let before = out.len();
        out.retain(|&e| !drop.contains(&cx.id(e)));
        if out.len() == before {
            return out;
        }
    }
}

/// Condensations applied to a plain list, as the SDK applies them: the
/// reference for [`apply_condensations`].
#[cfg(test)]
fn apply_condensations_vec(cx: &Ctx<'_, '_>, seq: &[usize]) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
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
                let f: HashSet<&str> = forgotten.iter().map(|x| x.as_ref()).collect();
                out.retain(|&e| !f.contains(cx.id(e).as_ref()));
                if let (Some(_), Some(o)) = (summary, offset) {
                    out.insert((*o).min(out.len()), Entry::Summary(p));
                }
            }
        } else if kind.is_some_and(Kind::in_context) {
            out.push(Entry::Event(p));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::event::{ViewEvent, decode};
    use super::super::version::Detector;
    use super::*;
    use crate::json::Parser;
    use proptest::prelude::*;

    /// One event: (kind, id, tool call, response, thinking).
    type Spec = (u8, u8, u8, u8, bool);

    fn json(spec: &Spec) -> String {
        let &(kind, id, tc, rid, thinking) = spec;
        let id = format!("e{}", id % 10);
        let tc = format!("t{}", tc % 6);
        let rid = format!("r{}", rid % 4);
        let tb = if thinking {
            r#"[{"type":"thinking","thinking":"t","signature":"s"}]"#
        } else {
            "[]"
        };
        match kind % 5 {
            0 | 1 => format!(
                r#"{{"kind":"ActionEvent","id":"{id}","source":"agent","thinking_blocks":{tb},"tool_call_id":"{tc}","tool_name":"x","llm_response_id":"{rid}","tool_call":{{"id":"{tc}","name":"x","arguments":"{{}}","origin":"completion"}},"action":{{"kind":"X"}},"thought":[]}}"#
            ),
            2 | 3 => format!(
                r#"{{"kind":"ObservationEvent","id":"{id}","source":"environment","tool_call_id":"{tc}","tool_name":"x","action_id":"a","observation":{{"kind":"X","content":[{{"type":"text","text":"o"}}]}}}}"#
            ),
            _ => format!(
                r#"{{"kind":"MessageEvent","id":"{id}","source":"user","llm_message":{{"role":"user","content":"x"}}}}"#
            ),
        }
    }

    fn both(specs: &[Spec], version: SdkVersion) -> (Vec<Entry>, Vec<Entry>) {
        let raws: Vec<String> = specs.iter().map(json).collect();
        let ids: Vec<String> = (0..specs.len()).map(|i| format!("{i:08x}")).collect();
        let mut parser = Parser::new();
        let mut det = Detector::default();
        let events: Vec<ViewEvent<'_>> = raws
            .iter()
            .zip(&ids)
            .enumerate()
            .map(|(i, (r, id))| decode(&mut parser, i, id, r.as_bytes(), &mut det))
            .collect();
        let cx = Ctx { events: &events };
        let seq: Vec<usize> = (0..events.len()).collect();
        let out = apply_condensations(&cx, &seq);
        (
            enforce_properties(&cx, out.clone(), &seq, version),
            enforce_properties_rounds(&cx, out, &seq, version),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The counters reach the SDK's fixed point, whatever the events
        /// (duplicate IDs, shared tool calls, batches across loops).
        #[test]
        fn fixed_point_is_the_sdks(specs in proptest::collection::vec(any::<Spec>(), 0..40)) {
            for v in [SdkVersion::new(1, 11, 5), SdkVersion::LATEST] {
                let (fast, rounds) = both(&specs, v);
                prop_assert_eq!(fast, rounds);
            }
        }
    }

    /// Messages and condensations (forgetting pooled IDs, summaries of
    /// earlier condensations included, any offset).
    fn condensation_json(spec: &(u8, u8, Vec<u8>, Option<u16>)) -> String {
        let (kind, id, forgotten, offset) = spec;
        let id = format!("e{}", id % 64);
        if kind % 8 == 0 {
            let f: Vec<String> = forgotten
                .iter()
                .map(|x| {
                    if x % 4 == 0 {
                        format!("\"e{}-summary\"", x % 64)
                    } else {
                        format!("\"e{}\"", x % 64)
                    }
                })
                .collect();
            let off = offset.map_or(String::new(), |o| {
                format!(r#","summary_offset":{}"#, o % 1000)
            });
            format!(
                r#"{{"kind":"Condensation","id":"{id}","source":"environment","forgotten_event_ids":[{}],"summary":"s"{off}}}"#,
                f.join(",")
            )
        } else {
            format!(
                r#"{{"kind":"MessageEvent","id":"{id}","source":"user","llm_message":{{"role":"user","content":"x"}}}}"#
            )
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// The blocked list gives what the plain list gives (up to 1,500
        /// events: blocks split past 512 entries).
        #[test]
        fn condensations_as_the_sdk(
            specs in proptest::collection::vec(
                (any::<u8>(), any::<u8>(), proptest::collection::vec(any::<u8>(), 0..3), any::<Option<u16>>()),
                0..1500,
            )
        ) {
            let raws: Vec<String> = specs.iter().map(condensation_json).collect();
            let ids: Vec<String> = (0..specs.len()).map(|i| format!("{i:08x}")).collect();
            let mut parser = Parser::new();
            let mut det = Detector::default();
            let events: Vec<ViewEvent<'_>> = raws
                .iter()
                .zip(&ids)
                .enumerate()
                .map(|(i, (r, id))| decode(&mut parser, i, id, r.as_bytes(), &mut det))
                .collect();
            let cx = Ctx { events: &events };
            let seq: Vec<usize> = (0..events.len()).collect();
            prop_assert_eq!(apply_condensations(&cx, &seq), apply_condensations_vec(&cx, &seq));
        }
    }

    /// The chain that made the rounds quadratic: each loop's last action is
    /// in the next loop's batch, and the first action has no answer, so the
    /// whole conversation falls one loop at a time.
    #[test]
    fn cascade_of_loops_and_batches() {
        let mut specs = Vec::new();
        for k in 0..3u8 {
            specs.push((0, 3 * k, 2 * k, k, true));
            if k > 0 {
                specs.push((2, 3 * k + 1, 2 * k, 0, false));
            }
            specs.push((0, 3 * k + 2, 2 * k + 1, k + 1, false));
            specs.push((2, 9, 2 * k + 1, 0, false));
        }
        let (fast, rounds) = both(&specs, SdkVersion::LATEST);
        assert_eq!(fast, rounds);
        assert!(fast.is_empty(), "{fast:?}");
    }
}
