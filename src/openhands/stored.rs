//! Typed, borrowed views of the event kinds and their parts.
//!
//! Each type is declared with [`json_object!`](crate::json_object): every
//! member the reference declares is an `Option` field (absent, `null`, or
//! of another JSON type than declared: `None`), and `members` keeps the
//! object as read — its order, the members no field declares and those of
//! another type, byte for byte — so `write_to` gives back the same JSON
//! value. Strings borrow the parsed document; lists live in its arena.
//!
//! Lists whose elements are objects are read element by element
//! ([`Items`]): an element that is not an object is kept, with its error,
//! and the others still decode. Content lists ([`Contents`]) also accept a
//! bare string, as OpenHands does for a message's content.

use crate::json::{Dict, FieldValue, Item, Items, List, Str, Value};

use super::{ACTION_DELEGATE, ACTION_TASK, DEFAULT_REJECTION_REASON, int};

/// Declares an event kind with [`json_object!`](crate::json_object): the
/// envelope every event has (`kind`, `id`, `timestamp`, `source` with the
/// given doc, `parent_id`), then the kind's own members.
macro_rules! event_kind {
    (
        $(#[$meta:meta])*
        pub struct $name:ident<'a>, source: $source_doc:literal {
            $($members:tt)*
        }
    ) => {
        crate::json_object! {
            $(#[$meta])*
            pub struct $name<'a> {
                /// The kind.
                kind: Str<'a> = "kind",
                /// The event ID.
                id: Str<'a> = "id",
                /// The naive local timestamp.
                timestamp: Str<'a> = "timestamp",
                #[doc = $source_doc]
                source: Str<'a> = "source",
                /// The parent in the event tree (1.31.0+).
                parent_id: Str<'a> = "parent_id",
                $($members)*
            }
        }
    };
}

crate::json_object! {
    /// One `TextContent` or `ImageContent`.
    pub struct StoredContent<'a> {
        /// `text` or `image` ([`CONTENT_TEXT`](super::CONTENT_TEXT),
        /// [`CONTENT_IMAGE`](super::CONTENT_IMAGE)).
        type_: Str<'a> = "type",
        /// The text of a `TextContent`.
        text: Str<'a> = "text",
        /// The URLs of an `ImageContent`: http(s) or `data:` URLs.
        image_urls: List<'a, Str<'a>> = "image_urls",
        /// Whether the content marks a prompt-cache breakpoint.
        cache_prompt: bool = "cache_prompt",
    }
}

/// A list of `TextContent` and `ImageContent`, read element by element; or
/// a bare string, which OpenHands accepts for a message's content (as one
/// `TextContent`).
#[derive(Debug, Clone)]
pub enum Contents<'a> {
    /// A bare string, kept as such.
    Text(Str<'a>),
    /// A list; an element that is not an object is kept with its error.
    List(Items<'a, StoredContent<'a>>),
}

impl<'a> Contents<'a> {
    /// The elements (none for a bare string).
    pub fn items(&self) -> &[Item<'a, StoredContent<'a>>] {
        match self {
            Contents::Text(_) => &[],
            Contents::List(l) => l,
        }
    }

    /// Whether the value was a bare string.
    pub fn is_text(&self) -> bool {
        matches!(self, Contents::Text(_))
    }

    /// The texts, in order: the bare string, or each text element's
    /// `text` (elements of type `text` and elements with a `text` and no
    /// type).
    pub fn texts(&self) -> impl Iterator<Item = &'a str> + '_ {
        let bare = match self {
            Contents::Text(s) => Some(s.as_str()),
            Contents::List(_) => None,
        };
        bare.into_iter()
            .chain(self.items().iter().filter_map(|i| match i {
                Item::Ok(c) if c.type_.as_ref().is_none_or(|t| *t == super::CONTENT_TEXT) => {
                    c.text.as_ref().map(Str::as_str)
                }
                _ => None,
            }))
    }
}

impl<'a> FieldValue<'a> for Contents<'a> {
    fn decode_field(v: Value<'a>) -> Option<Self> {
        if let Some(s) = Str::decode_field(v) {
            return Some(Contents::Text(s));
        }
        Items::decode_field(v).map(Contents::List)
    }
    fn encode_field(&self, out: &mut Vec<u8>) {
        match self {
            Contents::Text(s) => s.encode_field(out),
            Contents::List(l) => l.encode_field(out),
        }
    }
}

/// An object whose values are all strings (`DelegateAction.tasks`), its
/// entries in order, keys and values kept with their raw literals. The
/// member is kept raw when a value is not a string.
pub type StrMap<'a> = Dict<'a, Str<'a>>;

crate::json_object! {
    /// An Anthropic `thinking` or `redacted_thinking` block.
    pub struct StoredThinkingBlock<'a> {
        /// `thinking` or `redacted_thinking`.
        type_: Str<'a> = "type",
        /// The thinking text.
        thinking: Str<'a> = "thinking",
        /// The block's signature (optional from 1.7.0).
        signature: Str<'a> = "signature",
        /// The redacted block's data.
        data: Str<'a> = "data",
    }
}

crate::json_object! {
    /// The OpenAI Responses reasoning item OpenHands keeps: summary and
    /// content as plain strings.
    pub struct StoredReasoningItem<'a> {
        /// The item's ID.
        id: Str<'a> = "id",
        /// The summary texts.
        summary: List<'a, Str<'a>> = "summary",
        /// The content texts.
        content: List<'a, Str<'a>> = "content",
        /// The encrypted reasoning.
        encrypted_content: Str<'a> = "encrypted_content",
        /// The item's status.
        status: Str<'a> = "status",
    }
}

crate::json_object! {
    /// A `MessageToolCall`: one function call as OpenHands stores it, its
    /// arguments a JSON text.
    pub struct StoredToolCall<'a> {
        /// The call's ID.
        id: Str<'a> = "id",
        /// The Responses output item's own ID (1.18.1+).
        responses_item_id: Str<'a> = "responses_item_id",
        /// The tool's name.
        name: Str<'a> = "name",
        /// The arguments, a JSON text.
        arguments: Str<'a> = "arguments",
        /// `completion` or `responses`: the API family.
        origin: Str<'a> = "origin",
    }
}

crate::json_object! {
    /// OpenHands' own LLM message, the `llm_message` of a `MessageEvent`.
    pub struct StoredMessage<'a> {
        /// `user`, `system`, `assistant` or `tool`.
        role: Str<'a> = "role",
        /// The content.
        content: Contents<'a> = "content",
        /// The tool calls of an assistant message.
        tool_calls: Items<'a, StoredToolCall<'a>> = "tool_calls",
        /// The call a tool message answers.
        tool_call_id: Str<'a> = "tool_call_id",
        /// The tool's name, for a tool message.
        name: Str<'a> = "name",
        /// The reasoning text.
        reasoning_content: Str<'a> = "reasoning_content",
        /// Anthropic thinking blocks.
        thinking_blocks: Items<'a, StoredThinkingBlock<'a>> = "thinking_blocks",
        /// The OpenAI Responses reasoning item.
        responses_reasoning_item: StoredReasoningItem<'a> = "responses_reasoning_item",
    }
}

event_kind! {
    /// A message from the user, the agent or the environment.
    pub struct MessageEvent<'a>, source: " `user`, `agent` or `environment`." {
        /// The exact message.
        llm_message: StoredMessage<'a> = "llm_message",
        /// The LLM response, on agent messages.
        llm_response_id: Str<'a> = "llm_response_id",
        /// Skills this message triggered.
        activated_skills: List<'a, Str<'a>> = "activated_skills",
        /// Additions appended after the message's content for the model.
        extended_content: Contents<'a> = "extended_content",
        /// The multi-agent origin (1.2.0+).
        sender: Str<'a> = "sender",
        /// A critic's result (1.9.0+).
        critic_result: Value<'a> = "critic_result",
    }
}

crate::json_object! {
    /// A tool call's action, kind-tagged. The members of the actions the
    /// converter reads are declared: the task tool's `TaskAction` and the
    /// delegate tool's `DelegateAction`.
    pub struct Action<'a> {
        /// The action's class name.
        kind: Str<'a> = "kind",
        /// `TaskAction`: a short description.
        description: Str<'a> = "description",
        /// `TaskAction`: the sub-agent's prompt.
        prompt: Str<'a> = "prompt",
        /// `TaskAction`: the sub-agent type.
        subagent_type: Str<'a> = "subagent_type",
        /// `TaskAction`: the task ID to continue.
        resume: Str<'a> = "resume",
        /// `DelegateAction`: `spawn` or `delegate`.
        command: Str<'a> = "command",
        /// `DelegateAction`: the sub-agents to spawn.
        ids: List<'a, Str<'a>> = "ids",
        /// `DelegateAction`: each sub-agent's task.
        tasks: StrMap<'a> = "tasks",
    }
}

impl<'a> Action<'a> {
    /// Reads an action object; `None` when it is absent or not an object.
    pub fn parse(v: Option<Value<'a>>) -> Option<Action<'a>> {
        Action::decode(v?)
    }

    /// Whether this is the task tool's action.
    pub fn is_task(&self) -> bool {
        self.kind.as_ref().is_some_and(|k| *k == ACTION_TASK)
    }

    /// Whether this is the delegate tool's action.
    pub fn is_delegate(&self) -> bool {
        self.kind.as_ref().is_some_and(|k| *k == ACTION_DELEGATE)
    }
}

event_kind! {
    /// One tool call. The response's text, reasoning and thinking are on
    /// the first action of a response only.
    pub struct ActionEvent<'a>, source: " The source (`agent`)." {
        /// The response's text.
        thought: Contents<'a> = "thought",
        /// The response's reasoning text.
        reasoning_content: Str<'a> = "reasoning_content",
        /// The response's thinking blocks.
        thinking_blocks: Items<'a, StoredThinkingBlock<'a>> = "thinking_blocks",
        /// The response's Responses reasoning item.
        responses_reasoning_item: StoredReasoningItem<'a> = "responses_reasoning_item",
        /// The kind-tagged action (absent when the call could not be
        /// executed); see [`ActionEvent::action_object`].
        action: Value<'a> = "action",
        /// The tool's name.
        tool_name: Str<'a> = "tool_name",
        /// The call's ID.
        tool_call_id: Str<'a> = "tool_call_id",
        /// The call as received.
        tool_call: StoredToolCall<'a> = "tool_call",
        /// The LLM response the call belongs to (groups parallel calls).
        llm_response_id: Str<'a> = "llm_response_id",
        /// `UNKNOWN`, `LOW`, `MEDIUM` or `HIGH`.
        security_risk: Str<'a> = "security_risk",
        /// A critic's result (1.9.0+).
        critic_result: Value<'a> = "critic_result",
        /// A short summary of the call (1.8.0+).
        summary: Str<'a> = "summary",
    }
}

impl<'a> ActionEvent<'a> {
    /// The action decoded as an [`Action`]; `None` when absent or not an
    /// object.
    pub fn action_object(&self) -> Option<Action<'a>> {
        Action::parse(self.action)
    }
}

crate::json_object! {
    /// A tool's kind-tagged observation. The members its kind's rendering
    /// reads are declared; the rest are kept.
    pub struct Observation<'a> {
        /// The observation's class name.
        kind: Str<'a> = "kind",
        /// The content.
        content: Contents<'a> = "content",
        /// Whether the tool failed.
        is_error: bool = "is_error",
        /// `TerminalObservation` (`ExecuteBashObservation` in 1.0–1.4):
        /// the command's metadata ([`Observation::terminal`]).
        metadata: Value<'a> = "metadata",
        /// Terminal and browser: where full outputs are saved (1.4.0+).
        full_output_save_dir: Str<'a> = "full_output_save_dir",
        /// Browser: a base64 screenshot.
        screenshot_data: Str<'a> = "screenshot_data",
        /// `TaskObservation`: the task ID.
        task_id: Str<'a> = "task_id",
        /// `TaskObservation`: the sub-agent type.
        subagent: Str<'a> = "subagent",
        /// `TaskObservation`: `completed` or `error`.
        status: Str<'a> = "status",
        /// `ConsultTomObservation`: the suggestions.
        suggestions: Str<'a> = "suggestions",
        /// `ConsultTomObservation`: the confidence.
        confidence: Value<'a> = "confidence",
        /// `ConsultTomObservation`: the reasoning.
        reasoning: Str<'a> = "reasoning",
        /// `SleeptimeComputeObservation`: the message.
        message: Str<'a> = "message",
        /// `SleeptimeComputeObservation`: conversations indexed.
        sessions_processed: Value<'a> = "sessions_processed",
    }
}

/// A terminal observation's metadata, as its rendering reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalMetadata<'a> {
    /// The exit code; −1 (the SDK's default: still running, or timed out)
    /// when absent or not an integer.
    pub exit_code: i64,
    /// The working directory.
    pub working_dir: Option<&'a str>,
    /// The Python interpreter.
    pub py_interpreter_path: Option<&'a str>,
    /// The text written before the output (default empty).
    pub prefix: &'a str,
    /// The text written after the output (default empty).
    pub suffix: &'a str,
}

impl<'a> Observation<'a> {
    /// Reads the `metadata` of a terminal observation. The exit code is the
    /// metadata's, which is what the SDK renders in every version (1.0–1.6
    /// write it there only; 1.7+ also at the top level, which the rendering
    /// does not read): −1, the SDK's default, when there is none.
    pub fn terminal(&self) -> TerminalMetadata<'a> {
        let m = self.metadata.and_then(|v| v.as_object());
        let get = |k: &str| m.and_then(|m| m.get(k));
        let s = |k: &str| get(k).and_then(|v| v.as_str());
        TerminalMetadata {
            exit_code: int(get("exit_code"))
                .filter(|i| i.exact)
                .map_or(-1, |i| i.value),
            working_dir: s("working_dir"),
            py_interpreter_path: s("py_interpreter_path"),
            prefix: s("prefix").unwrap_or(""),
            suffix: s("suffix").unwrap_or(""),
        }
    }
}

event_kind! {
    /// A tool's result.
    pub struct ObservationEvent<'a>, source: " The source (`environment`)." {
        /// The tool's name.
        tool_name: Str<'a> = "tool_name",
        /// The call answered.
        tool_call_id: Str<'a> = "tool_call_id",
        /// The kind-tagged observation.
        observation: Observation<'a> = "observation",
        /// The `ActionEvent` answered.
        action_id: Str<'a> = "action_id",
        /// Rules injected when a file is touched (1.34.0+).
        extended_content: Contents<'a> = "extended_content",
    }
}

event_kind! {
    /// A call the user or a hook rejected.
    pub struct UserRejectObservation<'a>, source: " The source (`environment`)." {
        /// The tool's name.
        tool_name: Str<'a> = "tool_name",
        /// The call answered.
        tool_call_id: Str<'a> = "tool_call_id",
        /// Why (default [`DEFAULT_REJECTION_REASON`]).
        rejection_reason: Str<'a> = "rejection_reason",
        /// `user` or `hook` (1.11.3+).
        rejection_source: Str<'a> = "rejection_source",
        /// The `ActionEvent` answered.
        action_id: Str<'a> = "action_id",
    }
}

impl<'a> UserRejectObservation<'a> {
    /// The rejection reason, the SDK's default when none was written.
    pub fn reason(&self) -> &'a str {
        self.rejection_reason
            .as_ref()
            .map_or(DEFAULT_REJECTION_REASON, Str::as_str)
    }
}

event_kind! {
    /// A call the agent could not run: an unknown tool, invalid arguments, a
    /// tool that raised, or a call cut by a pause or a crash.
    pub struct AgentErrorEvent<'a>, source: " The source (`agent`)." {
        /// The tool's name.
        tool_name: Str<'a> = "tool_name",
        /// The call answered.
        tool_call_id: Str<'a> = "tool_call_id",
        /// The error text.
        error: Str<'a> = "error",
        /// The error's classification (1.40.0+).
        classification: Value<'a> = "classification",
    }
}

impl AgentErrorEvent<'_> {
    /// Whether the error answers a call a pause or an interrupt cut
    /// ([`INTERRUPTED_PREFIX`](super::INTERRUPTED_PREFIX)).
    pub fn is_interrupted(&self) -> bool {
        self.error
            .as_ref()
            .is_some_and(|e| e.starts_with(super::INTERRUPTED_PREFIX))
    }
}

event_kind! {
    /// A context edit: the events it forgets leave the view, and its
    /// summary, when it has one and an offset, enters it at the offset.
    pub struct Condensation<'a>, source: " The source (`environment`)." {
        /// The IDs forgotten ([`Condensation::forgotten`]).
        forgotten_event_ids: Items<'a, Str<'a>> = "forgotten_event_ids",
        /// The summary.
        summary: Str<'a> = "summary",
        /// Where the summary goes ([`Condensation::offset`]).
        summary_offset: Value<'a> = "summary_offset",
        /// The condenser LLM's response.
        llm_response_id: Str<'a> = "llm_response_id",
    }
}

impl<'a> Condensation<'a> {
    /// The IDs the condensation forgets, and how many of its elements were
    /// not strings.
    pub fn forgotten(&self) -> (Vec<&'a str>, usize) {
        let mut ids = Vec::new();
        let mut bad = 0;
        for item in self.forgotten_event_ids.iter().flatten() {
            match item {
                Item::Ok(s) => ids.push(s.as_str()),
                Item::Bad { .. } => bad += 1,
            }
        }
        (ids, bad)
    }

    /// The summary offset; `None` when there is none or it is not a count
    /// (a whole number from 0, possibly written `3.0`, as pydantic accepts
    /// for an `int`).
    pub fn offset(&self) -> Option<u64> {
        int(self.summary_offset)
            .filter(|i| i.exact && i.value >= 0)
            .map(|i| i.value as u64)
    }

    /// The ID of the summary this condensation inserts (1.10.0+).
    pub fn summary_id(&self) -> Option<String> {
        self.id.as_ref().map(|id| super::summary_id(id))
    }
}

event_kind! {
    /// The system prompt and the tools the agent was given. Tools are chat
    /// tool params in SDK 1.0 to 1.6, `ToolDefinition` dumps with no
    /// parameter schema from 1.7.
    pub struct SystemPromptEvent<'a>, source: " The source (`agent`)." {
        /// The static system prompt (a `TextContent`).
        system_prompt: StoredContent<'a> = "system_prompt",
        /// The tools, each kept as read.
        tools: List<'a, Value<'a>> = "tools",
        /// Per-conversation context (1.11.3+).
        dynamic_context: StoredContent<'a> = "dynamic_context",
    }
}
