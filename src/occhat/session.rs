//! The live session the save functions write: OC Chat's `ChatSession`
//! dataclass and its `TokenStats`, as far as `persistence.py` reads them.

use std::path::PathBuf;

use crate::json::{Map, OwnedValue, Value};

use super::py;

/// Token counters of a session (OC Chat's `TokenStats`).
///
/// The real class is not public; the corpus's stub (and every record in
/// it) has these five integer counters, in this order. `from_dict` reads
/// them by name; a missing or non-numeric value counts 0 and other keys
/// are dropped; `to_dict` writes the five.
///
/// Assumptions where the stub is silent: a float counts its integer part
/// (`int(12.7)` is 12; NaN and infinities count 0), a boolean counts 1 or 0
/// (Python's `bool` is an `int`), an integer beyond 64 bits saturates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct TokenStats {
    /// Prompt tokens over the session.
    pub total_prompt_tokens: i64,
    /// Completion tokens over the session.
    pub total_completion_tokens: i64,
    /// All tokens over the session.
    pub total_tokens: i64,
    /// Prompt tokens served from the provider's cache.
    pub prompt_cache_hit_tokens: i64,
    /// Prompt tokens not served from the cache.
    pub prompt_cache_miss_tokens: i64,
}

/// The five counter names, in `to_dict` order.
pub(crate) const STATS_KEYS: [&str; 5] = [
    "total_prompt_tokens",
    "total_completion_tokens",
    "total_tokens",
    "prompt_cache_hit_tokens",
    "prompt_cache_miss_tokens",
];

fn count_of_number(text: &str) -> i64 {
    let is_int = !text.contains(['.', 'e', 'E', 'N', 'I']);
    if is_int {
        return text.parse::<i64>().unwrap_or_else(|_| {
            if text.starts_with('-') {
                i64::MIN
            } else {
                i64::MAX
            }
        });
    }
    let v: f64 = match text {
        "NaN" | "Infinity" | "-Infinity" => return 0,
        t => t.parse().unwrap_or(0.0),
    };
    if v.is_finite() {
        // `as` saturates at the i64 bounds.
        v.trunc() as i64
    } else {
        0
    }
}

fn count_of(v: &OwnedValue) -> i64 {
    match v {
        OwnedValue::Number(n) => count_of_number(n.as_str()),
        OwnedValue::Bool(b) => i64::from(*b),
        _ => 0,
    }
}

impl TokenStats {
    /// `TokenStats.from_dict(value)`: a non-object gives all zeros.
    pub fn from_value(v: &OwnedValue) -> Self {
        let Some(m) = v.as_object() else {
            return Self::default();
        };
        let get = |k: &str| m.get(k).map_or(0, count_of);
        TokenStats {
            total_prompt_tokens: get(STATS_KEYS[0]),
            total_completion_tokens: get(STATS_KEYS[1]),
            total_tokens: get(STATS_KEYS[2]),
            prompt_cache_hit_tokens: get(STATS_KEYS[3]),
            prompt_cache_miss_tokens: get(STATS_KEYS[4]),
        }
    }

    /// `from_dict` over a value of a parsed document (no copy).
    pub(crate) fn from_json(v: Option<Value<'_>>) -> Self {
        let Some(o) = v.and_then(|v| v.as_object()) else {
            return Self::default();
        };
        let [a, b, c, d, e] = o.get_many(STATS_KEYS);
        let count = |v: Option<Value<'_>>| match v {
            Some(v) => match v.json_type() {
                crate::json::JsonType::Number => count_of_number(v.raw_str()),
                crate::json::JsonType::Bool => i64::from(v.as_bool().unwrap_or(false)),
                _ => 0,
            },
            None => 0,
        };
        TokenStats {
            total_prompt_tokens: count(a),
            total_completion_tokens: count(b),
            total_tokens: count(c),
            prompt_cache_hit_tokens: count(d),
            prompt_cache_miss_tokens: count(e),
        }
    }

    /// `to_dict()`: the five counters, in order.
    pub fn to_value(&self) -> OwnedValue {
        let vals = [
            self.total_prompt_tokens,
            self.total_completion_tokens,
            self.total_tokens,
            self.prompt_cache_hit_tokens,
            self.prompt_cache_miss_tokens,
        ];
        OwnedValue::Object(
            STATS_KEYS
                .iter()
                .zip(vals)
                .map(|(k, v)| ((*k).to_owned(), OwnedValue::int(v)))
                .collect(),
        )
    }

    /// The chat log's `usage` block: the counters under the API's names.
    pub(crate) fn usage_json(&self) -> OwnedValue {
        OwnedValue::Object(
            [
                ("prompt_tokens", self.total_prompt_tokens),
                ("completion_tokens", self.total_completion_tokens),
                ("total_tokens", self.total_tokens),
                ("prompt_cache_hit_tokens", self.prompt_cache_hit_tokens),
                ("prompt_cache_miss_tokens", self.prompt_cache_miss_tokens),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), OwnedValue::int(v)))
            .collect(),
        )
    }
}

/// The meta keys `persistence.py` writes, in its order.
pub(crate) const META_KEYS: [&str; 21] = [
    "session_name",
    "session_id",
    "created",
    "last_modified",
    "model",
    "reasoning_effort",
    "system_prompt",
    "stats",
    "chat_logs",
    "ui",
    "last_turn_max_prompt_tokens",
    "rollover_hint_shown",
    "token_profile",
    "max_react_iterations",
    "cache_turn_snapshots",
    "active_plan_id",
    "generation_options",
    "endpoint_name",
    "sandbox_root_override",
    "legacy_event_slugs",
    "superseded_by",
];

/// The chat-log keys `persistence.py` writes, in its order.
pub(crate) const CHAT_LOG_KEYS: [&str; 6] = [
    "session_name",
    "timestamp",
    "model",
    "reasoning_effort",
    "messages",
    "usage",
];

/// A live OC Chat session: the inputs of `persistence.py`'s save and export
/// functions (OC Chat's `ChatSession` dataclass, as far as they read it).
///
/// Fields `persistence.py` passes through unchanged (`max_react_iterations`,
/// `active_plan_id`, `sandbox_root_override`, `superseded_by`, list and
/// dict members) are JSON values; the ones it coerces (`int(...)`,
/// `bool(...)`, `str(...)`) are typed. Members of a loaded meta or chat log
/// that `persistence.py` does not write are kept in [`meta_extra`] and
/// [`chat_log_extra`] and written back after `persistence.py`'s members, in their
/// order, so a load-then-save keeps them.
///
/// [`meta_extra`]: ChatSession::meta_extra
/// [`chat_log_extra`]: ChatSession::chat_log_extra
#[derive(Debug, Clone, PartialEq)]
pub struct ChatSession {
    /// The session name (normalised by the saves to its
    /// [`fs_safe_name`](super::fs_safe_name)).
    pub name: String,
    /// The stable per-session identity.
    pub session_id: String,
    /// The creation stamp (`YYYYMMDD_HHMMSS`); `None` writes the save time,
    /// as `persistence.py`'s `getattr(session, "created", now)` does.
    pub created: Option<String>,
    /// The model name.
    pub model: String,
    /// The reasoning effort.
    pub reasoning_effort: String,
    /// The system prompt (`null` when `None`).
    pub system_prompt: Option<String>,
    /// Token counters.
    pub stats: TokenStats,
    /// The conversation: message objects, kept as read.
    pub messages: Vec<OwnedValue>,
    /// Informational list of chat-log file names.
    pub chat_logs: Vec<OwnedValue>,
    /// UI preferences (`ui` in the meta).
    pub ui_prefs: Map,
    /// The largest prompt of the last turn.
    pub last_turn_max_prompt_tokens: i64,
    /// Whether the rollover hint was shown.
    pub rollover_hint_shown: bool,
    /// The token profile; empty writes `"balanced"`.
    pub token_profile: String,
    /// The ReAct iteration cap (any JSON value, usually a number or null).
    pub max_react_iterations: OwnedValue,
    /// Cache snapshots per turn; the last 30 are written.
    pub cache_turn_snapshots: Vec<OwnedValue>,
    /// The active plan's id (any JSON value, usually a string or null).
    pub active_plan_id: OwnedValue,
    /// Generation options.
    pub generation_options: Map,
    /// The endpoint's name.
    pub endpoint_name: String,
    /// The sandbox root override (any JSON value).
    pub sandbox_root_override: OwnedValue,
    /// Earlier event slugs of a renamed session.
    pub legacy_event_slugs: Vec<OwnedValue>,
    /// The record that supersedes this one (any JSON value).
    pub superseded_by: OwnedValue,
    /// Meta members `persistence.py` does not write, kept for the round trip.
    pub meta_extra: Map,
    /// Chat-log members `persistence.py` does not write, kept for the round trip.
    pub chat_log_extra: Map,
    /// Set when loading the chat log failed: [`SessionStore::save_chat_log`]
    /// then refuses to overwrite it with a near-empty buffer.
    ///
    /// [`SessionStore::save_chat_log`]: super::SessionStore::save_chat_log
    pub load_failed: bool,
    /// The meta file last written (set by the saves).
    pub filepath: Option<PathBuf>,
    /// Whether there are unsaved changes (cleared by the saves).
    pub dirty: bool,
    /// Where the session was loaded from ([`SessionStore::load_session`] sets it):
    /// the saves write that directory, and first check that the files it
    /// records are still the newest. `None` (a session made in memory, or
    /// one being renamed) saves to `{root}/{fs_safe_name(name)}`.
    ///
    /// [`SessionStore::load_session`]: super::SessionStore::load_session
    pub origin: Option<super::Origin>,
}

impl Default for ChatSession {
    fn default() -> Self {
        ChatSession {
            name: String::new(),
            session_id: String::new(),
            created: None,
            model: String::new(),
            reasoning_effort: "high".to_owned(),
            system_prompt: None,
            stats: TokenStats::default(),
            messages: Vec::new(),
            chat_logs: Vec::new(),
            ui_prefs: Map::new(),
            last_turn_max_prompt_tokens: 0,
            rollover_hint_shown: false,
            token_profile: "balanced".to_owned(),
            max_react_iterations: OwnedValue::Null,
            cache_turn_snapshots: Vec::new(),
            active_plan_id: OwnedValue::Null,
            generation_options: Map::new(),
            endpoint_name: String::new(),
            sandbox_root_override: OwnedValue::Null,
            legacy_event_slugs: Vec::new(),
            superseded_by: OwnedValue::Null,
            meta_extra: Map::new(),
            chat_log_extra: Map::new(),
            load_failed: false,
            filepath: None,
            dirty: false,
            origin: None,
        }
    }
}

fn str_of(m: &Map, k: &str) -> Option<String> {
    m.get(k).and_then(|v| v.as_str()).map(str::to_owned)
}

fn list_of(m: &Map, k: &str) -> Vec<OwnedValue> {
    m.get(k)
        .and_then(|v| v.as_array())
        .cloned()
        .unwrap_or_default()
}

fn map_of(m: &Map, k: &str) -> Map {
    m.get(k)
        .and_then(|v| v.as_object())
        .map(|m| {
            py::dict_members(m)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

impl ChatSession {
    /// A new, empty session.
    pub fn new(name: impl Into<String>, model: impl Into<String>) -> Self {
        ChatSession {
            name: name.into(),
            model: model.into(),
            ..Self::default()
        }
    }

    /// A session from a loaded meta record and, if there is one, a loaded
    /// chat log (the values the loaders return).
    ///
    /// Known members are taken by name; a known member of a type its field
    /// cannot hold gets the field's default (strings: `""`, except
    /// `reasoning_effort` `"high"` and `token_profile` `"balanced"`;
    /// `last_turn_max_prompt_tokens` takes a number's integer part;
    /// `rollover_hint_shown` is the value's truthiness). Every other member
    /// goes to [`meta_extra`](Self::meta_extra) /
    /// [`chat_log_extra`](Self::chat_log_extra). Messages come from the
    /// chat log's `messages` list.
    pub fn from_records(meta: &OwnedValue, chat_log: Option<&OwnedValue>) -> Self {
        let empty = Map::new();
        let m = meta.as_object().unwrap_or(&empty);
        let mut s = ChatSession {
            name: str_of(m, "session_name").unwrap_or_default(),
            session_id: str_of(m, "session_id").unwrap_or_default(),
            created: str_of(m, "created"),
            model: str_of(m, "model").unwrap_or_default(),
            reasoning_effort: str_of(m, "reasoning_effort").unwrap_or_else(|| "high".to_owned()),
            system_prompt: str_of(m, "system_prompt"),
            stats: m
                .get("stats")
                .map(TokenStats::from_value)
                .unwrap_or_default(),
            chat_logs: list_of(m, "chat_logs"),
            ui_prefs: map_of(m, "ui"),
            last_turn_max_prompt_tokens: m.get("last_turn_max_prompt_tokens").map_or(0, count_of),
            rollover_hint_shown: m.get("rollover_hint_shown").is_some_and(py::truthy),
            token_profile: str_of(m, "token_profile")
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "balanced".to_owned()),
            max_react_iterations: m.get("max_react_iterations").cloned().unwrap_or_default(),
            cache_turn_snapshots: list_of(m, "cache_turn_snapshots"),
            active_plan_id: m.get("active_plan_id").cloned().unwrap_or_default(),
            generation_options: map_of(m, "generation_options"),
            endpoint_name: str_of(m, "endpoint_name").unwrap_or_default(),
            sandbox_root_override: m.get("sandbox_root_override").cloned().unwrap_or_default(),
            legacy_event_slugs: list_of(m, "legacy_event_slugs"),
            superseded_by: m.get("superseded_by").cloned().unwrap_or_default(),
            ..Self::default()
        };
        for (k, v) in py::dict_members(m) {
            if !META_KEYS.contains(&k) {
                // Names are unique here (dict_members): push, no lookup.
                s.meta_extra.entries_mut().push((k.to_owned(), v.clone()));
            }
        }
        if let Some(log) = chat_log.and_then(|l| l.as_object()) {
            s.messages = list_of(log, "messages");
            for (k, v) in py::dict_members(log) {
                if !CHAT_LOG_KEYS.contains(&k) {
                    s.chat_log_extra
                        .entries_mut()
                        .push((k.to_owned(), v.clone()));
                }
            }
        }
        s
    }

    /// [`from_records`](Self::from_records) taking the chat log by value:
    /// its messages are moved into the session rather than copied (a
    /// loaded chat log's messages are most of what loading allocates).
    pub fn from_records_owned(meta: &OwnedValue, chat_log: Option<OwnedValue>) -> Self {
        let mut log = chat_log;
        let messages = log
            .as_mut()
            .and_then(OwnedValue::as_object_mut)
            .and_then(|m| m.get_mut("messages"))
            .and_then(OwnedValue::as_array_mut)
            .map(std::mem::take);
        let mut s = Self::from_records(meta, log.as_ref());
        if let Some(m) = messages {
            s.messages = m;
        }
        s
    }

    /// The meta record `persistence.py`'s `save_session_metadata` writes for this
    /// session (`name` already canonical), then the extra members.
    pub(crate) fn meta_record(&self, name: &str, now_compact: &str) -> OwnedValue {
        let mut m = Map::new();
        let e = m.entries_mut();
        let mut put = |k: &str, v: OwnedValue| e.push((k.to_owned(), v));
        put("session_name", name.into());
        put("session_id", self.session_id.as_str().into());
        put(
            "created",
            self.created.as_deref().unwrap_or(now_compact).into(),
        );
        put("last_modified", now_compact.into());
        put("model", self.model.as_str().into());
        put("reasoning_effort", self.reasoning_effort.as_str().into());
        put(
            "system_prompt",
            self.system_prompt
                .as_deref()
                .map_or(OwnedValue::Null, OwnedValue::from),
        );
        put("stats", self.stats.to_value());
        put("chat_logs", OwnedValue::Array(self.chat_logs.clone()));
        put("ui", OwnedValue::Object(self.ui_prefs.clone()));
        put(
            "last_turn_max_prompt_tokens",
            OwnedValue::int(self.last_turn_max_prompt_tokens),
        );
        put("rollover_hint_shown", self.rollover_hint_shown.into());
        put(
            "token_profile",
            if self.token_profile.is_empty() {
                "balanced"
            } else {
                &self.token_profile
            }
            .into(),
        );
        put("max_react_iterations", self.max_react_iterations.clone());
        let snaps = &self.cache_turn_snapshots;
        let tail = snaps.get(snaps.len().saturating_sub(30)..).unwrap_or(&[]);
        put("cache_turn_snapshots", OwnedValue::Array(tail.to_vec()));
        put("active_plan_id", self.active_plan_id.clone());
        put(
            "generation_options",
            OwnedValue::Object(self.generation_options.clone()),
        );
        put("endpoint_name", self.endpoint_name.as_str().into());
        put("sandbox_root_override", self.sandbox_root_override.clone());
        put(
            "legacy_event_slugs",
            OwnedValue::Array(self.legacy_event_slugs.clone()),
        );
        put("superseded_by", self.superseded_by.clone());
        for (k, v) in py::dict_members(&self.meta_extra) {
            if !META_KEYS.contains(&k) {
                m.entries_mut().push((k.to_owned(), v.clone()));
            }
        }
        OwnedValue::Object(m)
    }

    /// The chat-log record `persistence.py`'s `save_chat_log` writes, then the
    /// extra members.
    pub(crate) fn chat_log_record(&self, name: &str, now_compact: &str) -> OwnedValue {
        let mut m = Map::new();
        let e = m.entries_mut();
        e.push(("session_name".into(), name.into()));
        e.push(("timestamp".into(), now_compact.into()));
        e.push(("model".into(), self.model.as_str().into()));
        e.push((
            "reasoning_effort".into(),
            self.reasoning_effort.as_str().into(),
        ));
        e.push(("messages".into(), OwnedValue::Array(self.messages.clone())));
        e.push(("usage".into(), self.stats.usage_json()));
        for (k, v) in py::dict_members(&self.chat_log_extra) {
            if !CHAT_LOG_KEYS.contains(&k) {
                m.entries_mut().push((k.to_owned(), v.clone()));
            }
        }
        OwnedValue::Object(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_from_dict() {
        let v = OwnedValue::parse(
            br#"{"total_prompt_tokens": 12.7, "total_tokens": "9", "prompt_cache_hit_tokens": true, "x": 1}"#,
        )
        .unwrap();
        let s = TokenStats::from_value(&v);
        assert_eq!(s.total_prompt_tokens, 12);
        assert_eq!(s.total_tokens, 0);
        assert_eq!(s.prompt_cache_hit_tokens, 1);
        assert_eq!(s.to_value().as_object().unwrap().len(), 5);
        let mut p = crate::json::Parser::new();
        let doc = p
            .parse(br#"{"stats": {"total_tokens": 99999999999999999999999, "total_prompt_tokens": -3}}"#)
            .unwrap();
        let s = TokenStats::from_json(doc.root().get("stats"));
        assert_eq!((s.total_tokens, s.total_prompt_tokens), (i64::MAX, -3));
    }

    #[test]
    fn from_records_owned_equals_from_records() {
        let meta = OwnedValue::parse(br#"{"session_name": "s", "model": "m", "x": [1]}"#).unwrap();
        for log in [
            &br#"{"messages": [{"role": "user", "content": "hi"}], "extra": 1}"#[..],
            br#"{"messages": [1], "messages": [{"role": "assistant"}, 2], "y": null}"#,
            br#"{"messages": "not a list", "z": {}}"#,
            br#"[1, 2]"#,
            br#"{}"#,
        ] {
            let log = OwnedValue::parse(log).unwrap();
            let by_ref = ChatSession::from_records(&meta, Some(&log));
            let owned = ChatSession::from_records_owned(&meta, Some(log));
            assert_eq!(owned, by_ref);
        }
        assert_eq!(
            ChatSession::from_records_owned(&meta, None),
            ChatSession::from_records(&meta, None)
        );
    }
}
