//! Agent Session Format test material built from the reference fixtures.

use std::path::PathBuf;

use agentlog::asf::canon::to_canonical;
use agentlog::asf::hash::{envelope_bytes, sha256_ref};
use agentlog::json::OwnedValue;

/// The path of the reference fixture session `name`.
pub fn fixture(name: &str) -> PathBuf {
    super::data_dir()
        .join("asf/sessions")
        .join(format!("{name}.jsonl"))
}

/// The `fork` fixture with its last entry, a leaf `response`, carrying
/// `request_hash` instead of its own and a new `id` that matches the new
/// body: a file whose entries all verify and whose last request hash does
/// not. Returns the text and the number of that last line.
pub fn fork_with_request_hash(request_hash: &str) -> (String, usize) {
    let text = std::fs::read_to_string(fixture("fork")).expect("fixture");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let last = lines.len() - 1;
    let mut entry = OwnedValue::parse(lines[last].as_bytes()).unwrap();
    let map = entry.as_object_mut().unwrap();
    assert_eq!(map.get("type").unwrap().as_str(), Some("response"));
    assert!(map.get("parents").is_none());
    map.insert("request_hash", OwnedValue::string(request_hash));
    // The content hash covers every member but the envelope's.
    let mut body = map.clone();
    for k in ["id", "parent", "parents", "ts", "type"] {
        body.remove(k);
    }
    let content = sha256_ref(&to_canonical(&OwnedValue::Object(body)).unwrap());
    let mut envelope = Vec::new();
    envelope_bytes(
        &mut envelope,
        "response",
        map.get("parent").and_then(OwnedValue::as_str),
        None,
        map.get("ts").unwrap().as_str().unwrap(),
        &content,
    );
    map.insert("id", OwnedValue::string(sha256_ref(&envelope)));
    lines[last] = String::from_utf8(to_canonical(&entry).unwrap()).unwrap();
    (format!("{}\n", lines.join("\n")), lines.len())
}

/// A session file as values to change one rule at a time: its header and
/// its entries in file order, written back with every `id` recomputed and
/// every member naming an entry (`parent`, `parents`, `target`,
/// `first_kept`, `from`, `queued_from`, the header's `base`) rewritten to
/// the new ids, so a file changed in one place breaks only the rule the
/// change breaks.
#[derive(Clone)]
pub struct Lines {
    /// The header.
    pub header: OwnedValue,
    /// The entries, in file order.
    pub entries: Vec<OwnedValue>,
    fresh: usize,
}

impl Lines {
    /// The reference fixture session `name`.
    pub fn of(name: &str) -> Lines {
        let text = std::fs::read_to_string(fixture(name)).expect("fixture");
        let mut lines = text
            .lines()
            .map(|l| OwnedValue::parse(l.as_bytes()).unwrap());
        let header = lines.next().unwrap();
        Lines {
            header,
            entries: lines.collect(),
            fresh: 0,
        }
    }

    /// The index of the first entry `f` holds for.
    pub fn pos(&self, f: impl Fn(&OwnedValue) -> bool) -> usize {
        self.entries.iter().position(f).expect("an entry matches")
    }

    /// The index of the entry with this `legacy_id`.
    pub fn legacy(&self, name: &str) -> usize {
        self.pos(|e| str_at(e, "legacy_id") == Some(name))
    }

    /// The index of the entry of `entry_type` about the call `call_id`
    /// (`item` matches a `function_call_output`), the `nth` such (0-based).
    pub fn call_event(&self, entry_type: &str, call_id: &str, nth: usize) -> usize {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| str_at(e, "type") == Some(entry_type))
            .filter(|(_, e)| {
                let item = e.get("item");
                match entry_type {
                    "item" => {
                        item.and_then(|i| i.get("type"))
                            .and_then(OwnedValue::as_str)
                            == Some("function_call_output")
                            && item
                                .and_then(|i| i.get("call_id"))
                                .and_then(OwnedValue::as_str)
                                == Some(call_id)
                    }
                    _ => str_at(e, "call_id") == Some(call_id),
                }
            })
            .nth(nth)
            .map(|(i, _)| i)
            .expect("the call's entry")
    }

    /// The id of the `function_call` item of `call_id`.
    pub fn call_item(&self, call_id: &str) -> String {
        let i = self.pos(|e| {
            let item = e.get("item");
            item.and_then(|i| i.get("type"))
                .and_then(OwnedValue::as_str)
                == Some("function_call")
                && item
                    .and_then(|i| i.get("call_id"))
                    .and_then(OwnedValue::as_str)
                    == Some(call_id)
        });
        self.id(i)
    }

    /// The (old) id of the entry at `i`.
    pub fn id(&self, i: usize) -> String {
        str_at(&self.entries[i], "id").unwrap().to_owned()
    }

    /// Sets a member of the entry at `i` (`None` removes it).
    pub fn set(&mut self, i: usize, key: &str, v: Option<OwnedValue>) -> &mut Self {
        let m = self.entries[i].as_object_mut().unwrap();
        match v {
            Some(v) => {
                m.insert(key, v);
            }
            None => {
                m.remove(key);
            }
        }
        self
    }

    /// Removes the entry at `i`; its children hang from its parent.
    pub fn remove(&mut self, i: usize) -> &mut Self {
        let gone = self.entries.remove(i);
        let (id, parent) = (
            str_at(&gone, "id").unwrap().to_owned(),
            gone.get("parent").cloned().unwrap(),
        );
        for e in &mut self.entries {
            if str_at(e, "parent") == Some(id.as_str()) {
                e.as_object_mut().unwrap().insert("parent", parent.clone());
            }
        }
        self
    }

    /// Inserts an entry of `entry_type` with `members` as the child of the
    /// entry at `i`, right after it in the file, the children of that entry
    /// hanging from the new one. Returns the new entry's index.
    pub fn insert_after(
        &mut self,
        i: usize,
        entry_type: &str,
        members: &[(&str, OwnedValue)],
    ) -> usize {
        self.fresh += 1;
        let id = format!("new-{}", self.fresh);
        let at = self.id(i);
        let ts = str_at(&self.entries[i], "ts").unwrap().to_owned();
        for e in &mut self.entries {
            if str_at(e, "parent") == Some(at.as_str()) {
                e.as_object_mut()
                    .unwrap()
                    .insert("parent", OwnedValue::string(id.clone()));
            }
        }
        let mut m = agentlog::json::Map::new();
        m.insert("type", OwnedValue::string(entry_type));
        m.insert("id", OwnedValue::string(id));
        m.insert("parent", OwnedValue::string(at));
        m.insert("ts", OwnedValue::string(ts));
        for (k, v) in members {
            m.insert(*k, v.clone());
        }
        self.entries.insert(i + 1, OwnedValue::Object(m));
        i + 1
    }

    /// Inserts a `decision` on `call_id` after the entry at `i`.
    pub fn decide_after(&mut self, i: usize, call_id: &str, verdict: &str) -> usize {
        let target = self.call_item(call_id);
        self.insert_after(
            i,
            "decision",
            &[
                ("call_id", OwnedValue::string(call_id)),
                ("target", OwnedValue::string(target)),
                ("verdict", OwnedValue::string(verdict)),
                ("reason", OwnedValue::string("a fault case")),
            ],
        )
    }

    /// Inserts a `dispatch` of `call_id` after the entry at `i`.
    pub fn dispatch_after(&mut self, i: usize, call_id: &str) -> usize {
        let target = self.call_item(call_id);
        self.insert_after(
            i,
            "dispatch",
            &[
                ("call_id", OwnedValue::string(call_id)),
                ("target", OwnedValue::string(target)),
            ],
        )
    }

    /// The file, every id recomputed in order and every reference to an
    /// entry rewritten. The 1-based line of the entry at index `i` is
    /// `i + 2`.
    pub fn resign(&self) -> String {
        let mut map: std::collections::HashMap<String, String> = Default::default();
        let remap = |v: &mut OwnedValue, map: &std::collections::HashMap<String, String>| {
            if let Some(s) = v.as_str()
                && let Some(n) = map.get(s)
            {
                *v = OwnedValue::string(n.clone());
            }
        };
        let mut out = Vec::new();
        for e in &self.entries {
            let mut e = e.clone();
            let m = e.as_object_mut().unwrap();
            for k in ["parent", "target", "first_kept", "from", "queued_from"] {
                if let Some(v) = m.get_mut(k) {
                    remap(v, &map);
                }
            }
            if let Some(OwnedValue::Array(ps)) = m.get_mut("parents") {
                for p in ps {
                    if let Some(v) = p.as_object_mut().and_then(|o| o.get_mut("entry")) {
                        remap(v, &map);
                    }
                }
            }
            let mut body = m.clone();
            for k in ["id", "parent", "parents", "ts", "type"] {
                body.remove(k);
            }
            let content = sha256_ref(&to_canonical(&OwnedValue::Object(body)).unwrap());
            // The envelope holds `parents` only when it is not empty.
            let parents = m
                .get("parents")
                .filter(|p| p.as_array().is_none_or(|a| !a.is_empty()))
                .map(|p| to_canonical(p).unwrap());
            let mut envelope = Vec::new();
            envelope_bytes(
                &mut envelope,
                m.get("type").unwrap().as_str().unwrap(),
                m.get("parent").and_then(OwnedValue::as_str),
                parents.as_deref(),
                m.get("ts").unwrap().as_str().unwrap(),
                &content,
            );
            let id = sha256_ref(&envelope);
            let old = m.get("id").unwrap().as_str().unwrap().to_owned();
            m.insert("id", OwnedValue::string(id.clone()));
            map.insert(old, id);
            out.push(String::from_utf8(to_canonical(&e).unwrap()).unwrap());
        }
        let mut header = self.header.clone();
        if let Some(b) = header.as_object_mut().unwrap().get_mut("base") {
            remap(b, &map);
        }
        let mut text = String::from_utf8(to_canonical(&header).unwrap()).unwrap();
        text.push('\n');
        for l in out {
            text.push_str(&l);
            text.push('\n');
        }
        text
    }
}

fn str_at<'v>(v: &'v OwnedValue, k: &str) -> Option<&'v str> {
    v.get(k).and_then(OwnedValue::as_str)
}
