//! SDK 1.11.5+ view properties (observation uniqueness, batch atomicity,
//! tool-call matching, tool-loop atomicity) enforced to their fixed point
//! with counters, each event dropped once.

use smallvec::SmallVec;

use super::*;

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
pub(super) fn enforce_properties(
    cx: &Ctx<'_, '_>,
    mut out: Vec<ViewEntry>,
    seq: &[usize],
    version: SdkVersion,
) -> Vec<ViewEntry> {
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

/// A unit's entries, a tool-call ID's actions or observations, the batches
/// or loops of a unit: one or two as a rule, held inline.
type Few = SmallVec<[usize; 2]>;

/// The state of [`enforce_properties`]: the view's events grouped into
/// units (one per ID), and counters for each property.
struct Fixpoint<'v> {
    /// Each entry's unit.
    unit_of: Vec<usize>,
    /// Each unit's entries.
    entries: Vec<Few>,
    /// Each unit's ID.
    ids: Vec<Cow<'v, str>>,
    alive: Vec<bool>,
    /// Tool-call IDs: live actions and observations answering each; the
    /// entries of each.
    tc_actions: Vec<usize>,
    tc_observations: Vec<usize>,
    tc_action_entries: Vec<Few>,
    tc_observation_entries: Vec<Few>,
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
    unit_batches: Vec<Few>,
    /// Tool loops: how many of a loop's IDs are not in the view, how many
    /// live units have it as their first loop; the loops each unit's ID is
    /// in, and its first.
    loop_missing: Vec<usize>,
    loop_first_live: Vec<usize>,
    loop_done: Vec<bool>,
    unit_loops: Vec<Few>,
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
        out: &[ViewEntry],
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
                f.entries.push(Few::new());
                f.ids.push(id);
                f.alive.push(true);
                f.unit_batches.push(Few::new());
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
                    f.tc_action_entries.push(Few::new());
                    f.tc_observation_entries.push(Few::new());
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
        f.unit_loops = vec![Few::new(); units];
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
            for &i in self.tc_action_entries.get(k).map_or(&[][..], Few::as_slice) {
                if let Some(&u) = self.unit_of.get(i) {
                    self.queue.push(u);
                }
            }
        }
        if obs > 0 && acts == 0 {
            for &i in self
                .tc_observation_entries
                .get(k)
                .map_or(&[][..], Few::as_slice)
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
        let mut calls = Few::new();
        for &i in self.entries.get(u).map_or(&[][..], Few::as_slice) {
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
        for b in std::mem::take(self.unit_batches.get_mut(u).unwrap_or(&mut Few::new())) {
            if let Some(l) = self.batch_live.get_mut(b) {
                *l = l.saturating_sub(1);
            }
            self.check_batch(b);
        }
        for l in std::mem::take(self.unit_loops.get_mut(u).unwrap_or(&mut Few::new())) {
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

    fn run(mut self, out: Vec<ViewEntry>) -> Vec<ViewEntry> {
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
