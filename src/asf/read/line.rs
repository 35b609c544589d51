//! One entry line: parsed, its envelope, `ts`, I-JSON and hashes checked,
//! then the members its type requires.

use super::*;

pub(super) struct LineReader {
    pub(super) parser: Parser,
    pub(super) scratch: Vec<u8>,
}

impl LineReader {
    pub(super) fn entry<'a>(
        &mut self,
        line: &'a [u8],
        line_no: usize,
        last: bool,
        problems: &mut Vec<Problem>,
    ) -> Option<Entry<'a>> {
        let mut report = |kind| {
            problems.push(Problem {
                line: line_no,
                kind,
            })
        };
        let doc = match self.parser.parse(line) {
            Ok(d) => d,
            Err(e) => {
                report(if last {
                    ProblemKind::TruncatedLastLine
                } else {
                    ProblemKind::BadJson(e.to_string())
                });
                return None;
            }
        };
        let root = doc.root();
        let Some(obj) = root.as_object() else {
            report(ProblemKind::NotObject);
            return None;
        };
        // Envelope members, each once.
        let mut counts = [0usize; 5];
        let mut content_member = false;
        for m in obj.iter() {
            if let Some(i) = ENVELOPE.iter().position(|n| *n == m.key) {
                counts[i] += 1;
            } else if m.key == "content" {
                content_member = true;
            }
        }
        for (i, n) in counts.iter().enumerate() {
            if *n > 1 {
                report(ProblemKind::NotIJson(
                    CanonError::DuplicateName(ENVELOPE[i].to_owned()).to_string(),
                ));
                return None;
            }
        }
        let [id, t, parent, parents, ts] = obj.get_many(ENVELOPE);
        let Some(entry_type) = t.and_then(|v| v.as_str()).filter(|s| !s.is_empty()) else {
            report(ProblemKind::Envelope(
                "`type` must be a non-empty string".into(),
            ));
            return None;
        };
        let Some(id) = id.and_then(|v| v.as_str()) else {
            report(ProblemKind::Envelope("`id` must be a string".into()));
            return None;
        };
        let id_ok = hash::is_hash(id);
        if !id_ok {
            report(ProblemKind::Envelope(format!(
                "`id` {id:?} is not `sha256:` and 64 lowercase hex digits"
            )));
        }
        let parent = match parent {
            None => {
                report(ProblemKind::Envelope(
                    "`parent` is missing (null for a root)".into(),
                ));
                None
            }
            Some(v) if v.is_null() => None,
            Some(v) => match v.as_str() {
                Some(s) => Some(s.to_owned()),
                None => {
                    report(ProblemKind::Envelope(
                        "`parent` must be a string or null".into(),
                    ));
                    None
                }
            },
        };
        let ts_str = match ts.and_then(|v| v.as_str()) {
            Some(s) => {
                if !is_canonical_ts(s) {
                    report(ProblemKind::TsSpelling(s.to_owned()));
                }
                s.to_owned()
            }
            None => {
                report(ProblemKind::Envelope("`ts` must be a string".into()));
                String::new()
            }
        };
        let mut parent_refs = Vec::new();
        let mut parents_canon: Option<Vec<u8>> = None;
        if let Some(pv) = parents {
            match pv.as_array() {
                Some(a) => {
                    for r in a.iter() {
                        let entry = r.get("entry").and_then(|v| v.as_str());
                        let session = r.get("session").map(|v| v.as_str());
                        if let Some(e) = entry
                            && !hash::is_hash(e)
                        {
                            report(ProblemKind::Parents(format!(
                                "a `parents` reference names {e:?}, not an entry by hash"
                            )));
                        }
                        match (r.as_object(), entry, session) {
                            (Some(_), Some(e), None) => parent_refs.push(ParentRef {
                                session: None,
                                entry: e.to_owned(),
                            }),
                            (Some(_), Some(e), Some(Some(s))) => parent_refs.push(ParentRef {
                                session: Some(s.to_owned()),
                                entry: e.to_owned(),
                            }),
                            _ => report(ProblemKind::Parents(
                                "a `parents` reference must be an object with a string `entry` (and a string `session`)".into(),
                            )),
                        }
                    }
                    if a.is_empty() {
                        report(ProblemKind::Parents(
                            "`parents` is empty (a writer omits it)".into(),
                        ));
                    } else {
                        let mut out = Vec::new();
                        match canon::canonical_value(pv, &mut out) {
                            Ok(()) => parents_canon = Some(out),
                            Err(e) => {
                                report(ProblemKind::NotIJson(e.to_string()));
                            }
                        }
                    }
                }
                None => report(ProblemKind::Parents("`parents` must be an array".into())),
            }
        }
        if content_member {
            report(ProblemKind::ReservedMember("content".into()));
        }
        // The content hash, then the envelope hash.
        self.scratch.clear();
        let mut verified = false;
        // The member an `item` or `branch_summary` adds to the context: its
        // span in the line when the line spells it canonically.
        let mark = match entry_type {
            "item" => Some("item"),
            "branch_summary" => Some("summary"),
            _ => None,
        };
        let mut contributed = None;
        // A line already in canonical form (what a writer of this format
        // writes) is its own canonical text: the content is its bytes less
        // the envelope members, hashed as they stand.
        let content = if root.span().range() == (0..line.len()) && canon::is_canonical(root) {
            if let Some(v) = mark.and_then(|m| root.get(m)) {
                contributed = Some(v.span().range());
            }
            Ok(content_hash_of_canonical(line, obj))
        } else {
            canon::canonical_marking(root, &ENVELOPE, mark, &mut self.scratch).map(|marked| {
                if let (Some(r), Some(v)) = (marked, mark.and_then(|m| root.get(m)))
                    && self.scratch.get(r) == Some(v.raw())
                {
                    contributed = Some(v.span().range());
                }
                sha256_ref(&self.scratch)
            })
        };
        match content {
            Err(e) => report(ProblemKind::NotIJson(e.to_string())),
            Ok(content) => {
                self.scratch.clear();
                envelope_bytes(
                    &mut self.scratch,
                    entry_type,
                    parent.as_deref(),
                    parents_canon.as_deref(),
                    &ts_str,
                    &content,
                );
                let computed = sha256_ref(&self.scratch);
                if computed == id {
                    verified = !content_member;
                } else if id_ok {
                    report(ProblemKind::HashMismatch {
                        recorded: id.to_owned(),
                        computed,
                    });
                }
            }
        }
        let mut e = Entry {
            line: line_no,
            raw: line,
            entry_type: entry_type.to_owned(),
            id: id.to_owned(),
            parent,
            parents: parent_refs,
            ts: ts_str,
            verified,
            item_type: None,
            call_id: None,
            response_id: None,
            request_hash: None,
            refs: Vec::new(),
            label: None,
            output_of: None,
            verdict: None,
            run: None,
            error: false,
            incomplete: false,
            contributed,
        };
        type_members(&mut e, root, &mut report);
        Some(e)
    }
}

/// The content hash of a line in canonical form: `{`, its members other
/// than the envelope's, `}`, fed to SHA-256 as runs of the line's own bytes
/// (canonical members are joined by single commas, so a run of adjacent
/// body members is one slice).
fn content_hash_of_canonical(line: &[u8], obj: crate::json::Object<'_>) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"{");
    let mut run: Option<std::ops::Range<usize>> = None;
    let mut first = true;
    let mut flush = |h: &mut Sha256, r: std::ops::Range<usize>| {
        if !first {
            h.update(b",");
        }
        first = false;
        h.update(line.get(r).unwrap_or_default());
    };
    for m in obj.iter() {
        if ENVELOPE.contains(&m.key) {
            if let Some(r) = run.take() {
                flush(&mut h, r);
            }
            continue;
        }
        let (start, end) = (
            m.key_value.span().start as usize,
            m.value.span().end as usize,
        );
        run = Some(match run {
            Some(r) => r.start..end,
            None => start..end,
        });
    }
    if let Some(r) = run {
        flush(&mut h, r);
    }
    h.update(b"}");
    hash::hex_ref(&h.finalize())
}

/// The members each core type requires, and the ones the tree needs copied.
fn type_members(e: &mut Entry<'_>, root: Value<'_>, report: &mut dyn FnMut(ProblemKind)) {
    let s = |name: &str| root.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    let need_str = |name: &str, report: &mut dyn FnMut(ProblemKind)| -> Option<String> {
        let v = s(name);
        if v.is_none() {
            report(ProblemKind::Member(format!(
                "a `{}` entry requires the string `{name}`",
                e.entry_type
            )));
        }
        v
    };
    let need_obj =
        |name: &str, report: &mut dyn FnMut(ProblemKind), t: &str| -> Option<Value<'_>> {
            match root.get(name) {
                Some(v) if v.json_type() == JsonType::Object => Some(v),
                _ => {
                    report(ProblemKind::Member(format!(
                        "a `{t}` entry requires the object `{name}`"
                    )));
                    None
                }
            }
        };
    let closed =
        |name: &str, v: &Option<String>, allowed: &[&str], report: &mut dyn FnMut(ProblemKind)| {
            if let Some(v) = v
                && !allowed.contains(&v.as_str())
            {
                report(ProblemKind::Member(format!(
                    "`{name}` {v:?} is not one of {}",
                    allowed.join(", ")
                )));
            }
        };
    let t = e.entry_type.clone();
    match t.as_str() {
        "item" => {
            if let Some(item) = need_obj("item", report, &t) {
                let it = item.get("type").and_then(|v| v.as_str());
                if it.is_none() {
                    report(ProblemKind::Member(
                        "an item requires a string `type`".into(),
                    ));
                }
                if it == Some("function_call") {
                    match item.get("call_id").and_then(|v| v.as_str()) {
                        Some("") | None => report(ProblemKind::CallId(
                            "a function_call's `call_id` is empty or missing".into(),
                        )),
                        Some(c) => e.call_id = Some(c.to_owned()),
                    }
                }
                if it == Some("function_call_output") {
                    e.output_of = item
                        .get("call_id")
                        .and_then(|v| v.as_str())
                        .map(str::to_owned);
                }
                e.item_type = it.map(str::to_owned);
            }
            e.response_id = s("response");
            match root.get("queued_from") {
                None => {}
                Some(v) if v.is_null() => {}
                Some(v) => match v.as_str() {
                    Some(q) => e.refs.push(("queued_from", q.to_owned())),
                    None => report(ProblemKind::Member(
                        "`queued_from` must be a string naming a `queued` entry".into(),
                    )),
                },
            }
            if let Some(v) = root.get("visible")
                && v.as_bool().is_none()
            {
                report(ProblemKind::Member("`visible` must be a boolean".into()));
            }
        }
        "response" => {
            e.response_id = s("response_id");
            e.request_hash = s("request_hash");
            e.error = root.get("error").is_some_and(|v| !v.is_null());
            e.incomplete = root.get("incomplete").is_some_and(|v| !v.is_null());
            if let Some(h) = &e.request_hash
                && !hash::is_hash(h)
            {
                report(ProblemKind::Member(format!(
                    "`request_hash` {h:?} is not a sha256 hash"
                )));
            }
            if let Some(a) = root.get("attempts")
                && a.as_i64().is_none_or(|n| n < 1)
            {
                report(ProblemKind::Member(
                    "`attempts` must be a positive integer".into(),
                ));
            }
        }
        "config" => {
            if let Some(r) = root.get("replace")
                && r.as_bool().is_none()
            {
                report(ProblemKind::Member("`replace` must be a boolean".into()));
            }
            for name in ["tools_added", "tools_removed", "instructions_parts"] {
                if let Some(v) = root.get(name)
                    && v.json_type() != JsonType::Array
                {
                    report(ProblemKind::Member(format!("`{name}` must be an array")));
                }
            }
            if let Some(v) = root.get("extra")
                && v.json_type() != JsonType::Object
            {
                report(ProblemKind::Member("`extra` must be an object".into()));
            }
            super::config::delta_rules(root, report);
        }
        "compaction" => {
            if let Some(f) = need_str("first_kept", report) {
                e.refs.push(("first_kept", f));
            }
            need_obj("summary", report, &t);
            if let Some(c) = root.get("config") {
                if c.json_type() == JsonType::Object {
                    super::config::checkpoint_rules(c, report);
                } else {
                    report(ProblemKind::Member(
                        "a compaction's `config` must be an object (the settings in force)".into(),
                    ));
                }
            }
        }
        "branch_summary" => {
            if let Some(f) = need_str("from", report) {
                e.refs.push(("from", f));
            }
            need_obj("summary", report, &t);
        }
        "run" => {
            let run_id = need_str("run_id", report);
            let phase = need_str("phase", report);
            closed("phase", &phase, &["start", "end"], report);
            let mut facts = RunFacts {
                run_id: run_id.unwrap_or_default(),
                start: phase.as_deref() == Some("start"),
                source: None,
                reason: None,
                pending: Vec::new(),
            };
            match phase.as_deref() {
                Some("start") => {
                    let src = need_str("source", report);
                    closed("source", &src, &["input", "resume"], report);
                    facts.source = src;
                }
                Some("end") => {
                    let reason = need_str("reason", report);
                    closed(
                        "reason",
                        &reason,
                        &[
                            "done",
                            "stopped",
                            "interrupted",
                            "input_required",
                            "aborted",
                            "error",
                        ],
                        report,
                    );
                    facts.reason = reason;
                    match root.get("pending").and_then(|v| v.as_array()) {
                        Some(a) if a.iter().all(|v| v.as_str().is_some()) => {
                            facts.pending = a
                                .iter()
                                .filter_map(|v| v.as_str())
                                .map(str::to_owned)
                                .collect();
                        }
                        _ => report(ProblemKind::Member(
                            "a run end requires `pending`, an array of call ids".into(),
                        )),
                    }
                }
                _ => {}
            }
            if matches!(phase.as_deref(), Some("start" | "end")) {
                e.run = Some(Box::new(facts));
            }
        }
        "dispatch" | "decision" => {
            e.call_id = need_str("call_id", report);
            if let Some(tg) = need_str("target", report) {
                e.refs.push(("target", tg));
            }
            if t == "decision" {
                let verdict = need_str("verdict", report);
                closed(
                    "verdict",
                    &verdict,
                    &["proceed", "reject", "hold", "answer"],
                    report,
                );
                e.verdict = verdict
                    .clone()
                    .filter(|v| ["proceed", "reject", "hold", "answer"].contains(&v.as_str()));
                closed("by", &s("by"), &["human", "policy", "agent"], report);
                if verdict.as_deref() == Some("reject") && s("reason").is_none() {
                    report(ProblemKind::Member(
                        "a `reject` decision requires `reason`".into(),
                    ));
                }
            }
        }
        "queued" => {
            need_obj("item", report, &t);
            let mode = need_str("mode", report);
            closed("mode", &mode, &["steer", "followup"], report);
        }
        "label" => {
            if let Some(tg) = need_str("target", report) {
                e.refs.push(("target", tg));
            }
            match root.get("label") {
                Some(v) if v.is_null() => e.label = Some(None),
                Some(v) if v.as_str().is_some() => e.label = Some(v.as_str().map(str::to_owned)),
                _ => report(ProblemKind::Member(
                    "a `label` requires `label`, a string or null".into(),
                )),
            }
        }
        "outcome" => {
            if let Some(tg) = need_str("target", report) {
                e.refs.push(("target", tg));
            }
            if let Some(sc) = root.get("score")
                && !sc.as_f64().is_some_and(f64::is_finite)
            {
                report(ProblemKind::Member(
                    "`score` must be a finite number".into(),
                ));
            }
        }
        "link" => {
            let rel = need_str("rel", report);
            closed(
                "rel",
                &rel,
                &["subsession", "fork_of", "continued_in"],
                report,
            );
            need_str("session", report);
        }
        "custom" => {
            need_str("ns", report);
        }
        "env" => {
            if let Some(w) = root.get("workspace") {
                let kind = w.get("kind").and_then(|v| v.as_str()).map(str::to_owned);
                closed(
                    "workspace.kind",
                    &kind,
                    &["local", "container", "remote"],
                    report,
                );
            }
        }
        "info" => {}
        other => {
            let namespaced = other
                .split_once(':')
                .is_some_and(|(ns, name)| !ns.is_empty() && !name.is_empty());
            if !namespaced {
                report(ProblemKind::UnknownType(other.to_owned()));
            }
        }
    }
}

/// The line-local checks, for the appender to run on what it writes.
#[derive(Debug)]
pub(crate) struct LineReaderPub(LineReader);

impl std::fmt::Debug for LineReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineReader")
    }
}

impl LineReaderPub {
    pub(crate) fn new() -> Self {
        LineReaderPub(LineReader {
            parser: Parser::new(),
            scratch: Vec::new(),
        })
    }

    /// The entry the line is, or the first problem it has.
    pub(crate) fn check<'a>(
        &mut self,
        line: &'a [u8],
        line_no: usize,
    ) -> Result<Entry<'a>, Problem> {
        let mut problems = Vec::new();
        let e = self.0.entry(line, line_no, false, &mut problems);
        match (e, problems.into_iter().next()) {
            (Some(e), None) if e.verified => Ok(e),
            (_, Some(p)) => Err(p),
            (_, None) => Err(Problem {
                line: line_no,
                kind: ProblemKind::Envelope("the line does not verify".into()),
            }),
        }
    }
}
