//! What the view needs from each event file, decoded once, leniently, with
//! strings borrowed from the file's bytes when they hold no escape.

use std::borrow::Cow;

use crate::json::{Parser, Value};

use super::message::{Content, ImageContent, LegacyFlags, Message, ReasoningItem, Role};
use super::message::{TextContent, ThinkingBlock, ToolCall};
use super::version::{Detector, Evidence};
use crate::openhands::{DEFAULT_REJECTION_REASON, Kind, ROOT_PARENT};

/// The `parent_id` member as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParentField<'a> {
    /// Absent (a root at index 0, or a legacy event).
    Absent,
    /// `"__root__"`: an explicit new root.
    Root,
    /// An event id.
    Id(Cow<'a, str>),
}

/// Why an event gives the view nothing although its kind would.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventProblem {
    /// The file is not JSON (or is empty): the byte offset and message.
    Malformed {
        /// Byte offset of the fault, when known.
        offset: Option<usize>,
        /// The parser's message.
        message: String,
    },
    /// The file is JSON but not an object.
    NotAnObject,
    /// A member the kind requires is missing or of another type.
    MissingMember(&'static str),
}

/// One event as the view sees it.
#[derive(Debug, Clone)]
pub struct ViewEvent<'a> {
    /// The index from the file name.
    pub index: usize,
    /// The event id from the file name (the tree resolves parents by it).
    pub file_id: &'a str,
    /// The JSON `id` (the view matches events by it); the file id when the
    /// member is missing.
    pub id: Cow<'a, str>,
    /// The `kind` member; `None` when absent or not a string.
    pub kind: Option<Kind<'a>>,
    /// `parent_id` as stored.
    pub parent: ParentField<'a>,
    /// Set when the event could not be used.
    pub problem: Option<EventProblem>,
    pub(crate) body: Body<'a>,
}

/// Kind-specific data.
#[derive(Debug, Clone, Default)]
pub(crate) enum Body<'a> {
    #[default]
    None,
    System {
        prompt: TextContent<'a>,
        dynamic: Option<TextContent<'a>>,
    },
    Message(Box<Message<'a>>, Vec<Content<'a>>),
    Action(Box<ActionData<'a>>),
    Observation(Box<ObservationData<'a>>),
    Reject {
        tool_name: Option<Cow<'a, str>>,
        tool_call_id: Cow<'a, str>,
        reason: Cow<'a, str>,
    },
    Error {
        tool_name: Option<Cow<'a, str>>,
        tool_call_id: Cow<'a, str>,
        error: Cow<'a, str>,
    },
    Condensation {
        forgotten: Vec<Cow<'a, str>>,
        summary: Option<Cow<'a, str>>,
        offset: Option<usize>,
    },
    Summary(Cow<'a, str>),
}

#[derive(Debug, Clone)]
pub(crate) struct ActionData<'a> {
    pub(crate) thought: Vec<Content<'a>>,
    pub(crate) reasoning_content: Option<Cow<'a, str>>,
    pub(crate) thinking_blocks: Vec<ThinkingBlock<'a>>,
    pub(crate) reasoning_item: Option<ReasoningItem<'a>>,
    pub(crate) tool_call: ToolCall<'a>,
    pub(crate) tool_call_id: Cow<'a, str>,
    pub(crate) llm_response_id: Cow<'a, str>,
}

#[derive(Debug, Clone)]
pub(crate) struct ObservationData<'a> {
    pub(crate) tool_name: Option<Cow<'a, str>>,
    pub(crate) tool_call_id: Cow<'a, str>,
    pub(crate) content: Vec<Content<'a>>,
    pub(crate) is_error: bool,
    pub(crate) special: Special<'a>,
    pub(crate) extended: Vec<Content<'a>>,
}

/// Observation kinds that render themselves (their `to_llm_content` in
/// the tools' `definition.py`).
#[derive(Debug, Clone)]
pub(crate) enum Special<'a> {
    Plain,
    Terminal {
        prefix: Cow<'a, str>,
        suffix: Cow<'a, str>,
        working_dir: Option<Cow<'a, str>>,
        py_interpreter: Option<Cow<'a, str>>,
        exit_code: i64,
        save_dir: Option<Cow<'a, str>>,
    },
    Browser {
        screenshot: Option<Cow<'a, str>>,
        save_dir: Option<Cow<'a, str>>,
    },
    Task {
        task_id: Cow<'a, str>,
        subagent: Cow<'a, str>,
        status: Cow<'a, str>,
    },
    Tom {
        suggestions: Cow<'a, str>,
        confidence: Option<f64>,
        reasoning: Option<Cow<'a, str>>,
    },
    Sleeptime {
        message: Cow<'a, str>,
        sessions: i64,
    },
}

impl<'a> ViewEvent<'a> {
    /// The `tool_call_id` of an action or observation-like event.
    pub fn tool_call_id(&self) -> Option<&str> {
        match &self.body {
            Body::Action(a) => Some(&a.tool_call_id),
            Body::Observation(o) => Some(&o.tool_call_id),
            Body::Reject { tool_call_id, .. } | Body::Error { tool_call_id, .. } => {
                Some(tool_call_id)
            }
            _ => None,
        }
    }

    /// The `llm_response_id` of an action.
    pub fn llm_response_id(&self) -> Option<&str> {
        match &self.body {
            Body::Action(a) => Some(&a.llm_response_id),
            _ => None,
        }
    }

    /// Whether an action carries thinking blocks (starts a tool loop).
    pub fn has_thinking_blocks(&self) -> bool {
        matches!(&self.body, Body::Action(a) if !a.thinking_blocks.is_empty())
    }

    /// The kind as the view uses it: an event whose data could not be
    /// decoded has none (the model never sees it).
    pub(crate) fn effective_kind(&self) -> Option<&Kind<'a>> {
        if self.problem.is_some() {
            None
        } else {
            self.kind.as_ref()
        }
    }
}

/// A string value borrowed from `input` when its literal has no escape.
pub(crate) fn cow<'a>(input: &'a [u8], v: Value<'_>) -> Option<Cow<'a, str>> {
    let text = v.as_str()?;
    if input.is_empty() {
        // Nothing to borrow from (`decode_parsed`): no span is asked for,
        // which spares the document its pass over the structural indexes.
        return Some(Cow::Owned(text.to_owned()));
    }
    let span = v.span();
    let start = span.start as usize + 1;
    let end = (span.end as usize).saturating_sub(1);
    // Every escape is longer than what it stands for: a literal as long as
    // its text has none, and its bytes are the text's.
    if let Some(raw) = input.get(start..end)
        && raw.len() == text.len()
        && let Ok(s) = std::str::from_utf8(raw)
    {
        return Some(Cow::Borrowed(s));
    }
    Some(Cow::Owned(text.to_owned()))
}

/// [`cow`] of a member found already (`None` when it was not there).
fn opt_cow<'a>(input: &'a [u8], v: Option<Value<'_>>) -> Option<Cow<'a, str>> {
    v.and_then(|x| cow(input, x))
}

fn get_cow<'a>(input: &'a [u8], v: Value<'_>, key: &str) -> Option<Cow<'a, str>> {
    opt_cow(input, v.get(key))
}

fn get_bool(v: Value<'_>, key: &str) -> Option<bool> {
    v.get(key).and_then(|x| x.as_bool())
}

/// A `TextContent` object.
fn text_content<'a>(input: &'a [u8], v: Value<'_>, det: &mut Detector) -> Option<TextContent<'a>> {
    let [text, cache, trunc] =
        v.as_object()?
            .get_many(["text", "cache_prompt", "enable_truncation"]);
    let enable_truncation = trunc.and_then(|t| t.as_bool());
    det.add(if enable_truncation.is_some() {
        Evidence::EnableTruncation
    } else {
        Evidence::NoEnableTruncation
    });
    Some(TextContent {
        text: cow(input, text?)?,
        cache_prompt: cache.and_then(|c| c.as_bool()).unwrap_or(false),
        enable_truncation,
    })
}

/// A content list (`TextContent | ImageContent` objects); a bare string is
/// one text part and `null` none, as `Message` coerces them.
fn content_list<'a>(input: &'a [u8], v: Option<Value<'_>>, det: &mut Detector) -> Vec<Content<'a>> {
    let Some(v) = v else { return Vec::new() };
    if let Some(t) = cow(input, v) {
        return vec![Content::Text(TextContent::new(t))];
    }
    let Some(arr) = v.as_array() else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(arr.len());
    for item in arr.iter() {
        match item.get("type").and_then(|t| t.as_str()) {
            Some("image") => {
                let urls = item
                    .get("image_urls")
                    .and_then(|u| u.as_array())
                    .map(|a| a.iter().filter_map(|u| cow(input, u)).collect())
                    .unwrap_or_default();
                out.push(Content::Image(ImageContent {
                    image_urls: urls,
                    cache_prompt: get_bool(item, "cache_prompt").unwrap_or(false),
                }));
            }
            _ => {
                if let Some(t) = text_content(input, item, det) {
                    out.push(Content::Text(t));
                }
            }
        }
    }
    out
}

fn thinking_blocks<'a>(input: &'a [u8], v: Option<Value<'_>>) -> Vec<ThinkingBlock<'a>> {
    let Some(arr) = v.and_then(|v| v.as_array()) else {
        return Vec::new();
    };
    arr.iter()
        .filter_map(|b| match b.get("type").and_then(|t| t.as_str()) {
            Some("redacted_thinking") => Some(ThinkingBlock::Redacted {
                data: get_cow(input, b, "data")?,
            }),
            _ => Some(ThinkingBlock::Thinking {
                thinking: get_cow(input, b, "thinking")?,
                signature: get_cow(input, b, "signature"),
            }),
        })
        .collect()
}

fn str_list<'a>(input: &'a [u8], v: Option<Value<'_>>) -> Option<Vec<Cow<'a, str>>> {
    let arr = v?.as_array()?;
    Some(arr.iter().filter_map(|x| cow(input, x)).collect())
}

fn reasoning_item<'a>(input: &'a [u8], v: Option<Value<'_>>) -> Option<ReasoningItem<'a>> {
    let v = v?;
    v.as_object()?;
    Some(ReasoningItem {
        id: get_cow(input, v, "id"),
        summary: str_list(input, v.get("summary")).unwrap_or_default(),
        content: str_list(input, v.get("content")),
        encrypted_content: get_cow(input, v, "encrypted_content"),
        status: get_cow(input, v, "status"),
    })
}

fn tool_call<'a>(input: &'a [u8], v: Value<'_>) -> Option<ToolCall<'a>> {
    let [id, name, arguments, origin, item] =
        v.as_object()?
            .get_many(["id", "name", "arguments", "origin", "responses_item_id"]);
    let arguments = match arguments {
        Some(a) => match cow(input, a) {
            Some(s) => s,
            // Not a string: pydantic would refuse; keep its JSON text.
            None => Cow::Owned(a.raw_str().to_owned()),
        },
        None => return None,
    };
    Some(ToolCall {
        id: cow(input, id?)?,
        name: cow(input, name?)?,
        arguments,
        origin: origin
            .and_then(|o| cow(input, o))
            .unwrap_or(Cow::Borrowed("completion")),
        responses_item_id: item.and_then(|i| cow(input, i)),
    })
}

/// A `Message` object (`MessageEvent.llm_message`).
fn message<'a>(input: &'a [u8], v: Value<'_>, det: &mut Detector) -> Option<Message<'a>> {
    // Its members, found in one walk (the last of a repeated name, as
    // `get` finds it).
    let [
        role,
        cache_enabled,
        send,
        content,
        tool_calls,
        tool_call_id,
        name,
        reasoning_content,
        thinking,
        reasoning_item_value,
        vision,
        function_calling,
        force_string,
    ] = v.as_object()?.get_many([
        "role",
        "cache_enabled",
        "send_reasoning_content",
        "content",
        "tool_calls",
        "tool_call_id",
        "name",
        "reasoning_content",
        "thinking_blocks",
        "responses_reasoning_item",
        "vision_enabled",
        "function_calling_enabled",
        "force_string_serializer",
    ]);
    let role = Role::parse(role?.as_str()?)?;
    let cache_enabled = cache_enabled.and_then(|b| b.as_bool());
    let send = send.and_then(|b| b.as_bool());
    match (cache_enabled.is_some(), send.is_some()) {
        (true, false) => det.add(Evidence::MessageFlagsV1_0),
        (_, true) => det.add(Evidence::MessageFlags),
        (false, false) => det.add(Evidence::NoMessageFlags),
    }
    let flag = |f: Option<Value<'_>>| f.and_then(|b| b.as_bool()).unwrap_or(false);
    let text = |t| opt_cow(input, t);
    Some(Message {
        role,
        content: content_list(input, content, det),
        tool_calls: tool_calls
            .and_then(|t| t.as_array())
            .map(|a| a.iter().filter_map(|c| tool_call(input, c)).collect()),
        tool_call_id: text(tool_call_id),
        name: text(name),
        reasoning_content: text(reasoning_content),
        thinking_blocks: thinking_blocks(input, thinking),
        responses_reasoning_item: reasoning_item(input, reasoning_item_value),
        flags: LegacyFlags {
            cache_enabled: cache_enabled.unwrap_or(false),
            vision_enabled: flag(vision),
            function_calling_enabled: flag(function_calling),
            force_string_serializer: flag(force_string),
            send_reasoning_content: send.unwrap_or(false),
        },
    })
}

fn observation<'a>(
    input: &'a [u8],
    ev: Value<'_>,
    det: &mut Detector,
) -> Result<ObservationData<'a>, EventProblem> {
    // The members read, found in one walk over the event's members (the
    // last of a repeated name, as `get` finds it).
    let [obs, tool_call_id, extended, tool_name] = match ev.as_object() {
        Some(o) => o.get_many([
            "observation",
            "tool_call_id",
            "extended_content",
            "tool_name",
        ]),
        None => [None; 4],
    };
    let obs = obs
        .filter(|o| o.as_object().is_some())
        .ok_or(EventProblem::MissingMember("observation"))?;
    let tool_call_id =
        opt_cow(input, tool_call_id).ok_or(EventProblem::MissingMember("tool_call_id"))?;
    match extended {
        Some(_) => det.add(Evidence::ObservationExtendedContent),
        None => det.add(Evidence::NoObservationExtendedContent),
    }
    // The observation's members read whatever its kind, in one walk.
    let [kind, metadata, save_dir, content, is_error] = match obs.as_object() {
        Some(o) => o.get_many([
            "kind",
            "metadata",
            "full_output_save_dir",
            "content",
            "is_error",
        ]),
        None => [None; 5],
    };
    let save_dir = || opt_cow(input, save_dir);
    let kind = kind.and_then(|k| k.as_str()).unwrap_or("");
    let special = match kind {
        "TerminalObservation" | "ExecuteBashObservation" => {
            det.add(if kind == "TerminalObservation" {
                Evidence::Terminal
            } else {
                Evidence::ExecuteBash
            });
            let [prefix, suffix, working_dir, py_interpreter, exit_code] =
                match metadata.and_then(|m| m.as_object()) {
                    Some(m) => m.get_many([
                        "prefix",
                        "suffix",
                        "working_dir",
                        "py_interpreter_path",
                        "exit_code",
                    ]),
                    None => [None; 5],
                };
            let text = |v| opt_cow(input, v);
            Special::Terminal {
                prefix: text(prefix).unwrap_or(Cow::Borrowed("")),
                suffix: text(suffix).unwrap_or(Cow::Borrowed("")),
                working_dir: text(working_dir),
                py_interpreter: text(py_interpreter),
                exit_code: exit_code.and_then(|e| e.as_i64()).unwrap_or(-1),
                save_dir: save_dir(),
            }
        }
        "BrowserObservation" => Special::Browser {
            screenshot: get_cow(input, obs, "screenshot_data"),
            save_dir: save_dir(),
        },
        "TaskObservation" => Special::Task {
            task_id: get_cow(input, obs, "task_id").unwrap_or_default(),
            subagent: get_cow(input, obs, "subagent").unwrap_or_default(),
            status: get_cow(input, obs, "status").unwrap_or_default(),
        },
        "ConsultTomObservation" => Special::Tom {
            suggestions: get_cow(input, obs, "suggestions").unwrap_or_default(),
            confidence: obs.get("confidence").and_then(|c| c.as_f64()),
            reasoning: get_cow(input, obs, "reasoning"),
        },
        "SleeptimeComputeObservation" => Special::Sleeptime {
            message: get_cow(input, obs, "message").unwrap_or_default(),
            sessions: obs
                .get("sessions_processed")
                .and_then(|c| c.as_i64())
                .unwrap_or(0),
        },
        _ => Special::Plain,
    };
    Ok(ObservationData {
        tool_name: opt_cow(input, tool_name),
        tool_call_id,
        content: content_list(input, content, det),
        is_error: is_error.and_then(|x| x.as_bool()).unwrap_or(false),
        special,
        extended: content_list(input, extended, det),
    })
}

fn action<'a>(
    input: &'a [u8],
    ev: Value<'_>,
    det: &mut Detector,
) -> Result<ActionData<'a>, EventProblem> {
    // The members read, found in one walk over the event's members (the
    // last of a repeated name, as `get` finds it).
    let Some(obj) = ev.as_object() else {
        return Err(EventProblem::MissingMember("tool_call"));
    };
    let [
        call,
        tool_call_id,
        llm_response_id,
        summary,
        action,
        thought,
        reasoning_content,
        thinking,
        reasoning_item_v,
    ] = obj.get_many([
        "tool_call",
        "tool_call_id",
        "llm_response_id",
        "summary",
        "action",
        "thought",
        "reasoning_content",
        "thinking_blocks",
        "responses_reasoning_item",
    ]);
    let call = call
        .and_then(|c| tool_call(input, c))
        .ok_or(EventProblem::MissingMember("tool_call"))?;
    let tool_call_id =
        opt_cow(input, tool_call_id).ok_or(EventProblem::MissingMember("tool_call_id"))?;
    let llm_response_id =
        opt_cow(input, llm_response_id).ok_or(EventProblem::MissingMember("llm_response_id"))?;
    if summary.is_some() {
        det.add(Evidence::ActionSummary);
    }
    if let Some(action) = action
        && action.get("kind").and_then(|k| k.as_str()) == Some("ExecuteBashAction")
    {
        det.add(Evidence::ExecuteBash);
    }
    Ok(ActionData {
        thought: content_list(input, thought, det),
        reasoning_content: opt_cow(input, reasoning_content),
        thinking_blocks: thinking_blocks(input, thinking),
        reasoning_item: reasoning_item(input, reasoning_item_v),
        tool_call: call,
        tool_call_id,
        llm_response_id,
    })
}

/// Decodes one event file. `raw` must outlive the result; `parser` is
/// reused from file to file. `visit` is shown each event that parsed, with
/// its document's root, before the parser moves on (one parse serving
/// another reader of the same events).
pub(crate) fn decode<'a>(
    parser: &mut Parser,
    index: usize,
    file_id: &'a str,
    raw: &'a [u8],
    det: &mut Detector,
    visit: &mut dyn FnMut(&ViewEvent<'a>, Value<'_>),
) -> ViewEvent<'a> {
    let mut ev = ViewEvent {
        index,
        file_id,
        id: Cow::Borrowed(file_id),
        kind: None,
        parent: ParentField::Absent,
        problem: None,
        body: Body::None,
    };
    let doc = match parser.parse(raw) {
        Ok(d) => d,
        Err(e) => {
            ev.problem = Some(EventProblem::Malformed {
                offset: e.offset(),
                message: e.to_string(),
            });
            return ev;
        }
    };
    let root = doc.root();
    let ev = decode_root(ev, raw, raw, root, det);
    visit(&ev, root);
    ev
}

/// [`decode`] of an event another reader parsed (the export's reader, while
/// its buffer still grows): the same event, with every string owned
/// instead of borrowed from the file's bytes, no `file_id` yet, and the
/// file id's place kept for `id` when the event has no `id` member
/// ([`ViewEvent::with_file_id`] gives both).
pub(crate) fn decode_parsed(
    index: usize,
    raw: &[u8],
    root: Value<'_>,
    det: &mut Detector,
) -> ViewEvent<'static> {
    let ev = ViewEvent {
        index,
        file_id: "",
        id: Cow::Borrowed(""),
        kind: None,
        parent: ParentField::Absent,
        problem: None,
        body: Body::None,
    };
    // Borrowing from an empty input never succeeds: every string is owned.
    decode_root(ev, raw, &[], root, det)
}

impl<'a> ViewEvent<'a> {
    /// An event of [`decode_parsed`] with its file's id: the id is the
    /// file id when the event has no `id` member, as [`decode`] makes it.
    pub(crate) fn with_file_id(mut self, file_id: &'a str) -> ViewEvent<'a> {
        self.file_id = file_id;
        // `decode_parsed` owns every string it read, so a borrowed id is
        // the placeholder of a missing member.
        if matches!(self.id, Cow::Borrowed(_)) {
            self.id = Cow::Borrowed(file_id);
        }
        self
    }
}

/// [`decode`] past the parse: the event's members, from its document's
/// root. `bytes` are the file's (its JSON style is evidence); strings are
/// borrowed from `input` where their literal has no escape (`input` is
/// `bytes`, or empty for owned strings).
fn decode_root<'a>(
    mut ev: ViewEvent<'a>,
    bytes: &[u8],
    raw: &'a [u8],
    root: Value<'_>,
    det: &mut Detector,
) -> ViewEvent<'a> {
    if root.as_object().is_none() {
        ev.problem = Some(EventProblem::NotAnObject);
        return ev;
    }
    if bytes.starts_with(b"{\"kind\": ") {
        det.add(Evidence::SpacedJson);
    } else if bytes.starts_with(b"{\"id\":\"") {
        det.add(Evidence::CompactJson);
    }
    // The envelope's members, found in one walk.
    let [kind, id, parent] = match root.as_object() {
        Some(o) => o.get_many(["kind", "id", "parent_id"]),
        None => [None; 3],
    };
    // A known kind is told from the document's string without owning it
    // (the reader's documents have nothing to borrow from: `cow` copies).
    if let Some(k) = kind {
        if let Some(known) = k.as_str().and_then(Kind::known) {
            ev.kind = Some(known);
        } else if let Some(name) = cow(raw, k) {
            ev.kind = Some(Kind::parse(name));
        }
    }
    if let Some(id) = id.and_then(|id| cow(raw, id)) {
        ev.id = id;
    }
    if let Some(p) = parent {
        det.add(Evidence::EventTree);
        match cow(raw, p) {
            Some(p) if p == ROOT_PARENT => ev.parent = ParentField::Root,
            Some(p) => ev.parent = ParentField::Id(p),
            None => {}
        }
    }
    let body: Result<Body<'a>, EventProblem> = match &ev.kind {
        Some(Kind::SystemPrompt) => {
            if let Some(first) = root
                .get("tools")
                .and_then(|t| t.as_array())
                .and_then(|a| a.get(0))
            {
                if first.get("action_type").is_some() {
                    det.add(Evidence::ToolDefinitions);
                } else if first.get("type").and_then(|t| t.as_str()) == Some("function") {
                    det.add(Evidence::ChatToolParams);
                }
            }
            let dynamic = root
                .get("dynamic_context")
                .and_then(|d| text_content(raw, d, det));
            if dynamic.is_some() {
                det.add(Evidence::DynamicContext);
            }
            root.get("system_prompt")
                .and_then(|p| text_content(raw, p, det))
                .map(|prompt| Body::System { prompt, dynamic })
                .ok_or(EventProblem::MissingMember("system_prompt"))
        }
        Some(Kind::Message) => root
            .get("llm_message")
            .and_then(|m| message(raw, m, det))
            .map(|m| {
                Body::Message(
                    Box::new(m),
                    content_list(raw, root.get("extended_content"), det),
                )
            })
            .ok_or(EventProblem::MissingMember("llm_message")),
        Some(Kind::Action) => action(raw, root, det).map(|a| Body::Action(Box::new(a))),
        Some(Kind::Observation) => {
            observation(raw, root, det).map(|o| Body::Observation(Box::new(o)))
        }
        Some(Kind::UserReject) => {
            match root.get("rejection_source") {
                Some(_) => det.add(Evidence::RejectionSource),
                None => det.add(Evidence::NoRejectionSource),
            }
            get_cow(raw, root, "tool_call_id")
                .map(|tool_call_id| Body::Reject {
                    tool_name: get_cow(raw, root, "tool_name"),
                    tool_call_id,
                    reason: get_cow(raw, root, "rejection_reason")
                        .unwrap_or(Cow::Borrowed(DEFAULT_REJECTION_REASON)),
                })
                .ok_or(EventProblem::MissingMember("tool_call_id"))
        }
        Some(Kind::AgentError) => {
            match root.get("classification") {
                Some(_) => det.add(Evidence::ErrorClassification),
                None => det.add(Evidence::NoErrorClassification),
            }
            match (
                get_cow(raw, root, "tool_call_id"),
                get_cow(raw, root, "error"),
            ) {
                (Some(tool_call_id), Some(error)) => Ok(Body::Error {
                    tool_name: get_cow(raw, root, "tool_name"),
                    tool_call_id,
                    error,
                }),
                (None, _) => Err(EventProblem::MissingMember("tool_call_id")),
                (_, None) => Err(EventProblem::MissingMember("error")),
            }
        }
        Some(Kind::Condensation) => Ok(Body::Condensation {
            forgotten: str_list(raw, root.get("forgotten_event_ids")).unwrap_or_default(),
            summary: get_cow(raw, root, "summary"),
            offset: root
                .get("summary_offset")
                .and_then(|o| o.as_i64())
                .and_then(|o| usize::try_from(o).ok()),
        }),
        Some(Kind::CondensationSummary) => get_cow(raw, root, "summary")
            .map(Body::Summary)
            .ok_or(EventProblem::MissingMember("summary")),
        _ => Ok(Body::None),
    };
    match body {
        Ok(b) => ev.body = b,
        Err(p) => ev.problem = Some(p),
    }
    ev
}

// What these test (events decoded from another parse) is built for the
// Parquet export alone.
#[cfg(all(test, feature = "parquet"))]
mod tests {
    use super::*;

    /// An event decoded from another parse (`decode_parsed`: its strings
    /// owned, a known kind told without owning it) reads as the one
    /// decoded from its file: known kinds, one this crate does not know,
    /// kinds spelt with escapes, and a kind that is not a string.
    #[test]
    fn a_parsed_event_decodes_as_its_file() {
        let raws: [&[u8]; 6] = [
            br#"{"id":"a","timestamp":"t","source":"agent","kind":"PauseEvent"}"#,
            br#"{"id":"u","timestamp":"t","source":"agent","kind":"FancyNewEvent"}"#,
            br#"{"id":"e","timestamp":"t","source":"agent","kind":"Pause\u0045vent"}"#,
            br#"{"id":"x","timestamp":"t","source":"agent","kind":"Fancy\u004eewEvent"}"#,
            br#"{"id":"n","timestamp":"t","source":"agent","kind":7}"#,
            br#"{"id":"m","timestamp":"t","source":"agent","kind":"PauseEvent","kind":"Other"}"#,
        ];
        let kinds = [
            Some(Kind::Pause),
            Some(Kind::parse("FancyNewEvent")),
            Some(Kind::Pause),
            Some(Kind::parse("FancyNewEvent")),
            None,
            Some(Kind::parse("Other")),
        ];
        for (raw, kind) in raws.into_iter().zip(kinds) {
            let mut p = Parser::new();
            let mut det = Detector::default();
            let from_file = decode(&mut p, 0, "", raw, &mut det, &mut |_, _| {});
            let mut q = Parser::new();
            let doc = q.parse(raw).unwrap();
            let mut det = Detector::default();
            let parsed = decode_parsed(0, doc.input(), doc.root(), &mut det);
            assert_eq!(
                format!("{:?}", from_file.kind),
                format!("{:?}", parsed.kind),
                "{}",
                String::from_utf8_lossy(raw)
            );
            assert_eq!(parsed.kind, kind, "{}", String::from_utf8_lossy(raw));
            assert_eq!(format!("{from_file:?}"), format!("{parsed:?}"));
        }
    }
}
