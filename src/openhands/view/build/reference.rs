//! The SDK's algorithms as it runs them (round by round, on a plain list):
//! the references the blocked list and the fixed point are tested against.
//! Test-only.

use super::*;

#[cfg(test)]
fn batch_atomicity<'v>(
    cx: &Ctx<'v, '_>,
    out: &[ViewEntry],
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
fn tool_call_matching<'v>(cx: &Ctx<'v, '_>, out: &[ViewEntry]) -> HashSet<Cow<'v, str>> {
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

#[cfg(test)]
fn tool_loop_atomicity<'v>(
    cx: &Ctx<'v, '_>,
    out: &[ViewEntry],
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
    mut out: Vec<ViewEntry>,
    seq: &[usize],
    version: SdkVersion,
) -> Vec<ViewEntry> {
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
fn apply_condensations_vec(cx: &Ctx<'_, '_>, seq: &[usize]) -> Vec<ViewEntry> {
    let mut out: Vec<ViewEntry> = Vec::new();
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
                    out.insert((*o).min(out.len()), ViewEntry::Summary(p));
                }
            }
        } else if kind.is_some_and(Kind::in_context) {
            out.push(ViewEntry::Event(p));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Parser;
    use crate::openhands::view::event::{ViewEvent, decode};
    use crate::openhands::view::version::Detector;
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

    fn both(specs: &[Spec], version: SdkVersion) -> (Vec<ViewEntry>, Vec<ViewEntry>) {
        let raws: Vec<String> = specs.iter().map(json).collect();
        let ids: Vec<String> = (0..specs.len()).map(|i| format!("{i:08x}")).collect();
        let mut parser = Parser::new();
        let mut det = Detector::default();
        let events: Vec<ViewEvent<'_>> = raws
            .iter()
            .zip(&ids)
            .enumerate()
            .map(|(i, (r, id))| decode(&mut parser, i, id, r.as_bytes(), &mut det, &mut |_, _| {}))
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
                .map(|(i, (r, id))| decode(&mut parser, i, id, r.as_bytes(), &mut det, &mut |_, _| {}))
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
