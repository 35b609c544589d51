//! The rules that need more than one line: parents before children, unique
//! call ids, the prefix a `base` promises, references on the path (and a
//! `branch_summary`'s `from` in the file), the `config` rules that need the
//! settings in force (a `keep` against the list it resolves in, the join of
//! parts named by `hash` or `keep`), and each `response`'s `request_hash`
//! against the request its path rebuilds.

use std::collections::HashMap;

use super::problem::{Problem, ProblemKind};
use super::read::Session;

impl Session<'_> {
    /// Every problem a reader can find: the line-local ones found while
    /// reading ([`Session::read_problems`]) and the ones across lines, in
    /// line order, each `response`'s `request_hash` compared with the
    /// request its path rebuilds included. An empty list means the file
    /// verifies.
    pub fn verify(&self) -> Vec<Problem> {
        let mut out = self.verify_entries();
        self.check_request_hashes(&mut out);
        out.sort_by_key(|p| p.line);
        out
    }

    /// Every problem [`Session::verify`] finds but the `request_hash`
    /// comparisons, in line order: the header, every envelope and `ts`,
    /// every `id` against its hash, the links between entries, the prefix
    /// a `base` promises, unique call ids, references on the path.
    ///
    /// RFC 0001 leaves checking a `request_hash` to the reader ("MAY
    /// verify it by rebuilding the request"), and it is the costly check:
    /// each hash runs over the whole request again, instructions and tool
    /// definitions included, which RFC 8785's member order puts after the
    /// items, so no running digest can share that tail between responses.
    /// This is the check for a caller that wants the file's integrity
    /// without replaying what each model call was sent.
    pub fn verify_entries(&self) -> Vec<Problem> {
        let mut out = self.read_problems().to_vec();
        let entries = self.entries();
        let mut report = |line: usize, kind: ProblemKind| out.push(Problem { line, kind });

        // Parents first; `parents` references.
        for (i, e) in entries.iter().enumerate() {
            if let Some(p) = e.parent.as_deref()
                && self.index_of(p).is_none_or(|pi| pi >= i)
            {
                report(e.line, ProblemKind::UnknownParent(p.to_owned()));
            }
            // The hash is the identity: a reference with `session` and one
            // without name the same entry when their hashes agree.
            let mut seen: Vec<&str> = Vec::new();
            for r in &e.parents {
                if Some(r.entry.as_str()) == e.parent.as_deref() {
                    report(
                        e.line,
                        ProblemKind::Parents(format!("`parents` repeats the parent {}", r.entry)),
                    );
                }
                if seen.contains(&r.entry.as_str()) {
                    report(
                        e.line,
                        ProblemKind::Parents(format!("`parents` names {} twice", r.entry)),
                    );
                }
                seen.push(r.entry.as_str());
                let local = r.session.as_deref().is_none_or(|s| s == self.header().id);
                if local && self.index_of(&r.entry).is_none_or(|pi| pi >= i) {
                    report(
                        e.line,
                        ProblemKind::Parents(format!(
                            "`parents` names {}, no earlier entry of this file",
                            r.entry
                        )),
                    );
                }
            }
            let sorted = e.parents.windows(2).all(|w| {
                let key = |r: &super::read::ParentRef| {
                    (r.session.is_some(), r.session.clone(), r.entry.clone())
                };
                key(&w[0]) <= key(&w[1])
            });
            if !sorted {
                report(
                    e.line,
                    ProblemKind::Parents("`parents` is not sorted by session, then entry".into()),
                );
            }
        }

        // The prefix a base promises.
        if let Some(base) = self.header().base.clone() {
            match self.index_of(&base) {
                None => report(
                    1,
                    ProblemKind::Prefix(format!("the base {base} is not in the file")),
                ),
                Some(bi) => {
                    let path = self.path_indexes(bi);
                    if entries[bi].is_leaf_label() {
                        report(1, ProblemKind::Prefix("the base is a `leaf` label".into()));
                    }
                    if path.iter().copied().ne(0..path.len()) || entries[path[0]].parent.is_some() {
                        report(
                            entries[bi].line,
                            ProblemKind::Prefix(
                                "the file does not open with the path from the root to the base"
                                    .into(),
                            ),
                        );
                    }
                    // Whether each entry descends from the base, in one pass
                    // (a parent always comes first once its own rule holds).
                    let mut under = vec![false; entries.len()];
                    under[bi] = true;
                    for (i, e) in entries.iter().enumerate() {
                        if let Some(pi) = e.parent.as_deref().and_then(|p| self.index_of(p))
                            && pi < i
                            && under[pi]
                        {
                            under[i] = true;
                        }
                    }
                    for (i, e) in entries.iter().enumerate().skip(path.len()) {
                        if !under[i] {
                            report(
                                e.line,
                                ProblemKind::Prefix(
                                    "an entry after the prefix does not descend from the base"
                                        .into(),
                                ),
                            );
                        }
                    }
                }
            }
        }

        // Call ids are unique across the session.
        let mut calls: HashMap<&str, usize> = HashMap::new();
        for e in entries {
            if e.entry_type == "item"
                && e.item_type.as_deref() == Some("function_call")
                && let Some(c) = e.call_id.as_deref()
                && let Some(first) = calls.insert(c, e.line)
            {
                report(
                    e.line,
                    ProblemKind::CallId(format!(
                        "call_id {c:?} repeats the function_call on line {first}"
                    )),
                );
            }
        }

        // References (on the path: a walk up from the entry, bounded by
        // how far back the entry named is).
        let tree = super::lifecycle::Tree::of(self);
        for (i, e) in entries.iter().enumerate() {
            match e.entry_type.as_str() {
                "compaction" => {
                    if let Some(f) = e.reference("first_kept") {
                        let on_path = self
                            .index_of(f)
                            .is_some_and(|k| self.is_ancestor(&tree, k, i));
                        if !on_path {
                            report(
                                e.line,
                                ProblemKind::Reference(format!(
                                    "first_kept {f} is not on the path before the compaction"
                                )),
                            );
                        }
                    }
                }
                "dispatch" | "decision" => {
                    if let Some(t) = e.reference("target") {
                        let on_path = self.index_of(t).filter(|&k| self.is_ancestor(&tree, k, i));
                        match on_path.as_ref() {
                            None => report(
                                e.line,
                                ProblemKind::Reference(format!(
                                    "target {t} is not on the path before the {}",
                                    e.entry_type
                                )),
                            ),
                            Some(&k) => {
                                let call = &entries[k];
                                if call.item_type.as_deref() != Some("function_call") {
                                    report(
                                        e.line,
                                        ProblemKind::Reference(format!(
                                            "target {t} is not a function_call item"
                                        )),
                                    );
                                } else if call.call_id != e.call_id {
                                    report(
                                        e.line,
                                        ProblemKind::CallId(format!(
                                            "call_id {:?} is not the call_id of its target",
                                            e.call_id.as_deref().unwrap_or("")
                                        )),
                                    );
                                }
                            }
                        }
                    }
                }
                "branch_summary" => {
                    if let Some(f) = e.reference("from")
                        && self.index_of(f).is_none_or(|k| k >= i)
                    {
                        report(
                            e.line,
                            ProblemKind::Reference(format!(
                                "from {f} names no earlier entry of this file (the leaf that was left)"
                            )),
                        );
                    }
                }
                "outcome" => {
                    if let Some(t) = e.reference("target")
                        && self.index_of(t).is_none()
                    {
                        report(
                            e.line,
                            ProblemKind::Reference(format!(
                                "target {t} names no entry of this file"
                            )),
                        );
                    }
                }
                _ => {}
            }
        }

        // A call's life, the `records` promise, the order of a response's
        // entries, and runs.
        self.check_lifecycle(&tree, &mut out);
        self.check_runs(&tree, &mut out);
        self.check_config_paths(&tree, &mut out);

        out.sort_by_key(|p| p.line);
        out
    }

    /// The rules a `config` delta breaks against the settings in force on
    /// its path ([`Settings::apply_checked`](super::context::Settings)):
    /// the settings are replayed along every path once, in file order, each
    /// entry sharing its parent's until a `config` or a `compaction`
    /// changes them, as the context algorithm replays them. Problems are
    /// appended to `out` unsorted.
    fn check_config_paths(&self, tree: &super::lifecycle::Tree<'_, '_>, out: &mut Vec<Problem>) {
        use super::context::Settings;
        use std::rc::Rc;
        let entries = self.entries();
        if !entries.iter().any(|e| e.entry_type == "config") {
            return;
        }
        let mut parser = crate::json::Parser::new();
        let root = Rc::new(Settings::default());
        // Per entry: the settings in force after it, when its path is whole.
        let mut at: Vec<Option<Rc<Settings>>> = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let before = match (&e.parent, tree.parent[i]) {
                (None, _) => Some(root.clone()),
                (Some(_), Some(p)) => at[p].clone(),
                (Some(_), None) => None,
            };
            let after = match e.entry_type.as_str() {
                "config" => before.and_then(|b| {
                    let v = e.to_owned_value(&mut parser)?;
                    let mut s = (*b).clone();
                    for m in s.apply_checked(&v) {
                        out.push(Problem {
                            line: e.line,
                            kind: ProblemKind::Config(m),
                        });
                    }
                    Some(Rc::new(s))
                }),
                "compaction" => before.and_then(|_| {
                    let v = e.to_owned_value(&mut parser)?;
                    Some(Rc::new(
                        v.get("config")
                            .map(Settings::from_checkpoint)
                            .unwrap_or_default(),
                    ))
                }),
                _ => before,
            };
            at.push(after);
        }
    }

    /// Each `response`'s `request_hash` against the request its path
    /// rebuilds; problems are appended to `out` unsorted.
    fn check_request_hashes(&self, out: &mut Vec<Problem>) {
        let entries = self.entries();
        let mut report = |line: usize, kind: ProblemKind| out.push(Problem { line, kind });
        // A redacted file's hashes no longer match, by design.
        if !self.header().redacted && entries.iter().any(|e| e.request_hash.is_some()) {
            let chain = super::request::Chain::of(self);
            // The running hash of each response's request the chain has,
            // all finished together (several at a time where they share
            // settings).
            let hashers: Vec<Option<&super::RequestHasher>> = entries
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    e.request_hash
                        .as_ref()
                        .and_then(|_| chain.request_hasher(self, i))
                })
                .collect();
            let found: Vec<&super::RequestHasher> = hashers.iter().flatten().copied().collect();
            let mut hashes = super::RequestHasher::hash_many(&found).into_iter();
            for (e, hasher) in entries.iter().zip(&hashers) {
                let Some(recorded) = e.request_hash.as_deref() else {
                    continue;
                };
                let rebuilt = match hasher.and_then(|_| hashes.next()) {
                    Some(h) => Ok(h),
                    None => self.request_context(&e.id).and_then(|c| c.request_hash()),
                };
                match rebuilt {
                    Ok(rebuilt) if rebuilt == recorded => {}
                    Ok(rebuilt) => report(
                        e.line,
                        ProblemKind::RequestHash {
                            recorded: recorded.to_owned(),
                            rebuilt,
                        },
                    ),
                    Err(err) => report(
                        e.line,
                        ProblemKind::RequestHash {
                            recorded: recorded.to_owned(),
                            rebuilt: err.to_string(),
                        },
                    ),
                }
            }
        }
    }
}
