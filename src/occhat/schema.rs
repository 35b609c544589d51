//! What `persistence.py`'s loaders do with a record after reading it: validate it
//! against the `SessionMetadata` / `ChatLog` models (pydantic, strict mode,
//! unknown keys kept) and, when it passes, return `model_dump()`: the
//! declared fields in declaration order, missing ones filled with their
//! defaults, then every other key in input order. When it fails, the raw
//! record is returned as read.
//!
//! The real models are not public; the corpus's stubs are described in its
//! README (only `session_name` required, strict types, defaults "of the
//! type they are saved with", `messages` a list of objects). Declaration
//! order and the defaults below come from the oracles where they show them
//! (a legacy meta missing most fields is filled with `session_id: ""`,
//! `last_turn_max_prompt_tokens: 0`, `rollover_hint_shown: false`,
//! `token_profile: "balanced"`, `max_react_iterations: null`, ...). Where no
//! oracle shows a default we assumed: `created`, `last_modified`, `model`
//! and `timestamp` default to `""`, `reasoning_effort` to `"high"` (the
//! listing's fallback), `system_prompt` to `null`, `stats`, `ui`, `usage`
//! and `generation_options` to `{}`, lists to `[]`; the `Optional` fields
//! (`system_prompt`, `active_plan_id`, `sandbox_root_override`,
//! `superseded_by`: strings; `max_react_iterations`: an integer) accept
//! `null`; lists other than `messages` accept any elements.

use crate::json::{Map, OwnedValue};

/// The type a field must have (pydantic strict mode).
#[derive(Debug, Clone, Copy)]
enum Ty {
    Str,
    OptStr,
    Int,
    OptInt,
    Bool,
    Dict,
    List,
    ListOfDict,
}

/// A declared field: name, type, default (JSON text), required.
struct Field {
    name: &'static str,
    ty: Ty,
    default: &'static str,
    required: bool,
}

const fn f(name: &'static str, ty: Ty, default: &'static str) -> Field {
    Field {
        name,
        ty,
        default,
        required: false,
    }
}

const fn req(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        ty,
        default: "null",
        required: true,
    }
}

/// `SessionMetadata`, in declaration order (the order `persistence.py` saves).
const SESSION_METADATA: &[Field] = &[
    req("session_name", Ty::Str),
    f("session_id", Ty::Str, "\"\""),
    f("created", Ty::Str, "\"\""),
    f("last_modified", Ty::Str, "\"\""),
    f("model", Ty::Str, "\"\""),
    f("reasoning_effort", Ty::Str, "\"high\""),
    f("system_prompt", Ty::OptStr, "null"),
    f("stats", Ty::Dict, "{}"),
    f("chat_logs", Ty::List, "[]"),
    f("ui", Ty::Dict, "{}"),
    f("last_turn_max_prompt_tokens", Ty::Int, "0"),
    f("rollover_hint_shown", Ty::Bool, "false"),
    f("token_profile", Ty::Str, "\"balanced\""),
    f("max_react_iterations", Ty::OptInt, "null"),
    f("cache_turn_snapshots", Ty::List, "[]"),
    f("active_plan_id", Ty::OptStr, "null"),
    f("generation_options", Ty::Dict, "{}"),
    f("endpoint_name", Ty::Str, "\"\""),
    f("sandbox_root_override", Ty::OptStr, "null"),
    f("legacy_event_slugs", Ty::List, "[]"),
    f("superseded_by", Ty::OptStr, "null"),
];

/// `ChatLog`, in declaration order.
const CHAT_LOG: &[Field] = &[
    req("session_name", Ty::Str),
    f("timestamp", Ty::Str, "\"\""),
    f("model", Ty::Str, "\"\""),
    f("reasoning_effort", Ty::Str, "\"high\""),
    f("messages", Ty::ListOfDict, "[]"),
    f("usage", Ty::Dict, "{}"),
];

/// The models the loaders validate against.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Model {
    SessionMetadata,
    ChatLog,
}

impl Model {
    fn fields(self) -> &'static [Field] {
        match self {
            Model::SessionMetadata => SESSION_METADATA,
            Model::ChatLog => CHAT_LOG,
        }
    }
}

fn fits(v: &OwnedValue, ty: Ty) -> bool {
    let is_int = |v: &OwnedValue| {
        v.as_number().is_some_and(|n| {
            n.is_integer() && !matches!(n.as_str(), "NaN" | "Infinity" | "-Infinity")
        })
    };
    match ty {
        Ty::Str => v.as_str().is_some(),
        Ty::OptStr => v.is_null() || v.as_str().is_some(),
        Ty::Int => is_int(v),
        Ty::OptInt => v.is_null() || is_int(v),
        Ty::Bool => v.as_bool().is_some(),
        Ty::Dict => v.as_object().is_some(),
        Ty::List => v.as_array().is_some(),
        Ty::ListOfDict => v
            .as_array()
            .is_some_and(|a| a.iter().all(|e| e.as_object().is_some())),
    }
}

/// Validates `raw` (a record as Python's `json.loads` built it: duplicate
/// names already collapsed) against `model`: `(model_dump(), true)` when it
/// passes, `(raw, false)` when it does not.
pub(crate) fn validate(raw: OwnedValue, model: Model) -> (OwnedValue, bool) {
    let Some(map) = raw.as_object() else {
        return (raw, false);
    };
    let fields = model.fields();
    for field in fields {
        match map.get(field.name) {
            Some(v) if !fits(v, field.ty) => return (raw, false),
            Some(_) => {}
            None if field.required => return (raw, false),
            None => {}
        }
    }
    let OwnedValue::Object(mut map) = raw else {
        return (OwnedValue::Null, false);
    };
    let mut out = Map::new();
    for field in fields {
        let v = map
            .remove(field.name)
            .unwrap_or_else(|| OwnedValue::parse(field.default.as_bytes()).unwrap_or_default());
        out.entries_mut().push((field.name.to_owned(), v));
    }
    out.entries_mut().append(map.entries_mut());
    (OwnedValue::Object(out), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_defaults_in_declaration_order() {
        let raw = OwnedValue::parse(br#"{"model": "m", "extra": 1, "session_name": "s"}"#).unwrap();
        let (v, ok) = validate(raw, Model::ChatLog);
        assert!(ok);
        assert_eq!(
            v.to_string(),
            r#"{"session_name":"s","timestamp":"","model":"m","reasoning_effort":"high","messages":[],"usage":{},"extra":1}"#
        );
    }

    #[test]
    fn strict_types_fail_to_raw() {
        for text in [
            &br#"{"model": "m"}"#[..],
            br#"{"session_name": 5}"#,
            br#"{"session_name": "s", "messages": [1]}"#,
            br#"[1, 2]"#,
        ] {
            let raw = OwnedValue::parse(text).unwrap();
            let (v, ok) = validate(raw.clone(), Model::ChatLog);
            assert!(!ok);
            assert_eq!(v.to_json(), raw.to_json());
        }
        let raw =
            OwnedValue::parse(br#"{"session_name": "s", "last_turn_max_prompt_tokens": 5.0}"#)
                .unwrap();
        assert!(
            !validate(raw, Model::SessionMetadata).1,
            "strict int refuses 5.0"
        );
        let raw = OwnedValue::parse(br#"{"session_name": "s", "rollover_hint_shown": 1}"#).unwrap();
        assert!(
            !validate(raw, Model::SessionMetadata).1,
            "strict bool refuses 1"
        );
        let raw = OwnedValue::parse(br#"{"session_name": "s", "system_prompt": null}"#).unwrap();
        assert!(validate(raw, Model::SessionMetadata).1);
    }
}
