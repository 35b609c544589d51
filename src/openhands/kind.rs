//! The event kinds: the vocabulary of the `kind` member, in one place.
//!
//! [`Kind`] names every event class the SDK defines (1.0.0 to 1.58.2) as a
//! variant and keeps any other `kind` as its string, so that a kind this
//! crate does not know is still told apart, counted and written back. Each
//! kind's JSON spelling is written once, in its `KIND_*` constant (the
//! reference's names); [`Kind::as_str`] and [`Kind::parse`] are the only
//! code that maps between the two, and every rule that depends on the kind
//! alone (whether the model sees it, whether it answers a tool call, whether
//! it is a node of the event tree, whether it becomes the head) is a method
//! of [`Kind`].

use std::borrow::Cow;
use std::fmt;

/// The system prompt and the tools the agent was given.
pub const KIND_SYSTEM_PROMPT: &str = "SystemPromptEvent";
/// A message from the user, the agent or the environment.
pub const KIND_MESSAGE: &str = "MessageEvent";
/// One tool call.
pub const KIND_ACTION: &str = "ActionEvent";
/// A tool's result.
pub const KIND_OBSERVATION: &str = "ObservationEvent";
/// A call the user or a hook rejected.
pub const KIND_USER_REJECT: &str = "UserRejectObservation";
/// A call the agent could not run.
pub const KIND_AGENT_ERROR: &str = "AgentErrorEvent";
/// A context edit: forgotten events and an optional summary.
pub const KIND_CONDENSATION: &str = "Condensation";
/// A request to condense.
pub const KIND_CONDENSATION_REQUEST: &str = "CondensationRequest";
/// The summary a condensation inserts (built in memory, never written).
pub const KIND_CONDENSATION_SUMMARY: &str = "CondensationSummaryEvent";
/// `pause()`.
pub const KIND_PAUSE: &str = "PauseEvent";
/// `interrupt()` of an async run (1.23.0+).
pub const KIND_INTERRUPT: &str = "InterruptEvent";
/// A change of a state field (agent-server conversations).
pub const KIND_STATE_UPDATE: &str = "ConversationStateUpdateEvent";
/// A run-loop failure (1.1.0+).
pub const KIND_CONVERSATION_ERROR: &str = "ConversationErrorEvent";
/// An agent-server error (sent on the websocket only).
pub const KIND_SERVER_ERROR: &str = "ServerErrorEvent";
/// A security analyzer's verdicts (1.54.0+).
pub const KIND_SECURITY_ANALYSIS: &str = "SecurityAnalysisEvent";
/// A hook run (1.13.0+).
pub const KIND_HOOK_EXECUTION: &str = "HookExecutionEvent";
/// Prompt and response token IDs (1.1.0+).
pub const KIND_TOKEN: &str = "TokenEvent";
/// A raw completion log (agent server, 1.3.0+).
pub const KIND_COMPLETION_LOG: &str = "LLMCompletionLogEvent";
/// An ACP agent's tool call (1.12.0+).
pub const KIND_ACP_TOOL_CALL: &str = "ACPToolCallEvent";
/// Token deltas (websocket only, 1.18.1+).
pub const KIND_STREAMING_DELTA: &str = "StreamingDeltaEvent";

/// Every event kind the SDK defines, from 1.0.0 to 1.58.2, including the
/// three it never writes into `events/` (`CondensationSummaryEvent`,
/// `ServerErrorEvent`, `StreamingDeltaEvent`), in the order of
/// [`Kind::KNOWN`].
pub const KNOWN_KINDS: [&str; 20] = [
    KIND_SYSTEM_PROMPT,
    KIND_MESSAGE,
    KIND_ACTION,
    KIND_OBSERVATION,
    KIND_USER_REJECT,
    KIND_AGENT_ERROR,
    KIND_CONDENSATION,
    KIND_CONDENSATION_REQUEST,
    KIND_CONDENSATION_SUMMARY,
    KIND_PAUSE,
    KIND_INTERRUPT,
    KIND_STATE_UPDATE,
    KIND_CONVERSATION_ERROR,
    KIND_SERVER_ERROR,
    KIND_SECURITY_ANALYSIS,
    KIND_HOOK_EXECUTION,
    KIND_TOKEN,
    KIND_COMPLETION_LOG,
    KIND_ACP_TOOL_CALL,
    KIND_STREAMING_DELTA,
];

/// An event's kind: the Python class named by its `kind` member.
///
/// The SDK's classes are variants; any other name is kept as
/// [`Unknown`](Kind::Unknown), borrowed from the event where it can be.
/// `Kind::parse(k.as_str()) == k` for every kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Kind<'a> {
    /// [`KIND_SYSTEM_PROMPT`].
    SystemPrompt,
    /// [`KIND_MESSAGE`].
    Message,
    /// [`KIND_ACTION`].
    Action,
    /// [`KIND_OBSERVATION`].
    Observation,
    /// [`KIND_USER_REJECT`].
    UserReject,
    /// [`KIND_AGENT_ERROR`].
    AgentError,
    /// [`KIND_CONDENSATION`].
    Condensation,
    /// [`KIND_CONDENSATION_REQUEST`].
    CondensationRequest,
    /// [`KIND_CONDENSATION_SUMMARY`] (never written by the SDK, read if
    /// found).
    CondensationSummary,
    /// [`KIND_PAUSE`].
    Pause,
    /// [`KIND_INTERRUPT`].
    Interrupt,
    /// [`KIND_STATE_UPDATE`].
    StateUpdate,
    /// [`KIND_CONVERSATION_ERROR`].
    ConversationError,
    /// [`KIND_SERVER_ERROR`].
    ServerError,
    /// [`KIND_SECURITY_ANALYSIS`].
    SecurityAnalysis,
    /// [`KIND_HOOK_EXECUTION`].
    HookExecution,
    /// [`KIND_TOKEN`].
    Token,
    /// [`KIND_COMPLETION_LOG`].
    CompletionLog,
    /// [`KIND_ACP_TOOL_CALL`].
    AcpToolCall,
    /// [`KIND_STREAMING_DELTA`].
    StreamingDelta,
    /// A name the SDK (up to 1.58.2) does not define, as written.
    Unknown(Cow<'a, str>),
}

impl<'a> Kind<'a> {
    /// Every kind the SDK defines, in the order of [`KNOWN_KINDS`].
    pub const KNOWN: [Kind<'static>; 20] = [
        Kind::SystemPrompt,
        Kind::Message,
        Kind::Action,
        Kind::Observation,
        Kind::UserReject,
        Kind::AgentError,
        Kind::Condensation,
        Kind::CondensationRequest,
        Kind::CondensationSummary,
        Kind::Pause,
        Kind::Interrupt,
        Kind::StateUpdate,
        Kind::ConversationError,
        Kind::ServerError,
        Kind::SecurityAnalysis,
        Kind::HookExecution,
        Kind::Token,
        Kind::CompletionLog,
        Kind::AcpToolCall,
        Kind::StreamingDelta,
    ];

    /// The kind named `name` (the `kind` member, unescaped): a variant for
    /// the SDK's classes, [`Unknown`](Kind::Unknown) for any other name.
    pub fn parse(name: impl Into<Cow<'a, str>>) -> Kind<'a> {
        let name = name.into();
        match Kind::known(&name) {
            Some(known) => known,
            None => Kind::Unknown(name),
        }
    }

    /// The variant of the SDK's class named `name` (the `kind` member,
    /// unescaped), as [`parse`](Kind::parse) reads it; `None` for any other
    /// name (which `parse` keeps as [`Unknown`](Kind::Unknown)). It takes
    /// the name by reference, so that a caller need not own it to tell the
    /// known kinds.
    pub fn known(name: &str) -> Option<Kind<'static>> {
        Some(match name {
            KIND_SYSTEM_PROMPT => Kind::SystemPrompt,
            KIND_MESSAGE => Kind::Message,
            KIND_ACTION => Kind::Action,
            KIND_OBSERVATION => Kind::Observation,
            KIND_USER_REJECT => Kind::UserReject,
            KIND_AGENT_ERROR => Kind::AgentError,
            KIND_CONDENSATION => Kind::Condensation,
            KIND_CONDENSATION_REQUEST => Kind::CondensationRequest,
            KIND_CONDENSATION_SUMMARY => Kind::CondensationSummary,
            KIND_PAUSE => Kind::Pause,
            KIND_INTERRUPT => Kind::Interrupt,
            KIND_STATE_UPDATE => Kind::StateUpdate,
            KIND_CONVERSATION_ERROR => Kind::ConversationError,
            KIND_SERVER_ERROR => Kind::ServerError,
            KIND_SECURITY_ANALYSIS => Kind::SecurityAnalysis,
            KIND_HOOK_EXECUTION => Kind::HookExecution,
            KIND_TOKEN => Kind::Token,
            KIND_COMPLETION_LOG => Kind::CompletionLog,
            KIND_ACP_TOOL_CALL => Kind::AcpToolCall,
            KIND_STREAMING_DELTA => Kind::StreamingDelta,
            _ => return None,
        })
    }

    /// The name as the `kind` member spells it.
    pub fn as_str(&self) -> &str {
        match self {
            Kind::Unknown(name) => name,
            known => known.known_str().unwrap_or_default(),
        }
    }

    /// The name of a kind the SDK defines; `None` for
    /// [`Unknown`](Kind::Unknown).
    pub const fn known_str(&self) -> Option<&'static str> {
        Some(match self {
            Kind::SystemPrompt => KIND_SYSTEM_PROMPT,
            Kind::Message => KIND_MESSAGE,
            Kind::Action => KIND_ACTION,
            Kind::Observation => KIND_OBSERVATION,
            Kind::UserReject => KIND_USER_REJECT,
            Kind::AgentError => KIND_AGENT_ERROR,
            Kind::Condensation => KIND_CONDENSATION,
            Kind::CondensationRequest => KIND_CONDENSATION_REQUEST,
            Kind::CondensationSummary => KIND_CONDENSATION_SUMMARY,
            Kind::Pause => KIND_PAUSE,
            Kind::Interrupt => KIND_INTERRUPT,
            Kind::StateUpdate => KIND_STATE_UPDATE,
            Kind::ConversationError => KIND_CONVERSATION_ERROR,
            Kind::ServerError => KIND_SERVER_ERROR,
            Kind::SecurityAnalysis => KIND_SECURITY_ANALYSIS,
            Kind::HookExecution => KIND_HOOK_EXECUTION,
            Kind::Token => KIND_TOKEN,
            Kind::CompletionLog => KIND_COMPLETION_LOG,
            Kind::AcpToolCall => KIND_ACP_TOOL_CALL,
            Kind::StreamingDelta => KIND_STREAMING_DELTA,
            Kind::Unknown(_) => return None,
        })
    }

    /// The same kind, owning an unknown name.
    pub fn into_owned(self) -> Kind<'static> {
        match self {
            Kind::Unknown(name) => Kind::Unknown(Cow::Owned(name.into_owned())),
            Kind::SystemPrompt => Kind::SystemPrompt,
            Kind::Message => Kind::Message,
            Kind::Action => Kind::Action,
            Kind::Observation => Kind::Observation,
            Kind::UserReject => Kind::UserReject,
            Kind::AgentError => Kind::AgentError,
            Kind::Condensation => Kind::Condensation,
            Kind::CondensationRequest => Kind::CondensationRequest,
            Kind::CondensationSummary => Kind::CondensationSummary,
            Kind::Pause => Kind::Pause,
            Kind::Interrupt => Kind::Interrupt,
            Kind::StateUpdate => Kind::StateUpdate,
            Kind::ConversationError => Kind::ConversationError,
            Kind::ServerError => Kind::ServerError,
            Kind::SecurityAnalysis => Kind::SecurityAnalysis,
            Kind::HookExecution => Kind::HookExecution,
            Kind::Token => Kind::Token,
            Kind::CompletionLog => Kind::CompletionLog,
            Kind::AcpToolCall => Kind::AcpToolCall,
            Kind::StreamingDelta => Kind::StreamingDelta,
        }
    }

    /// Whether the SDK defines the kind ([`KNOWN_KINDS`]).
    pub fn is_known(&self) -> bool {
        !matches!(self, Kind::Unknown(_))
    }

    /// Whether events of the kind enter the model's context: the SDK's
    /// LLM-convertible kinds.
    pub fn in_context(&self) -> bool {
        matches!(
            self,
            Kind::SystemPrompt
                | Kind::Message
                | Kind::Action
                | Kind::Observation
                | Kind::UserReject
                | Kind::AgentError
                | Kind::CondensationSummary
        )
    }

    /// Whether events of the kind answer a tool call (the SDK's
    /// `ObservationBaseEvent`s).
    pub fn is_observation_like(&self) -> bool {
        matches!(
            self,
            Kind::Observation | Kind::UserReject | Kind::AgentError
        )
    }

    /// Whether events of the kind are not nodes of the event tree:
    /// OpenHands stamps them with a parent, and skips them when it falls back
    /// to the last event for a missing leaf (1.35.0+, `_resolve_active_leaf`,
    /// which calls them "non-tree artifacts"): `ConversationStateUpdateEvent`
    /// and `ConversationErrorEvent`.
    ///
    /// The reference also says OpenHands never makes one the head; the SDK
    /// (1.31–1.58) does make a `ConversationErrorEvent` the head when it
    /// appends one. [`becomes_head`](Self::becomes_head) tells that apart.
    pub fn is_artifact(&self) -> bool {
        matches!(self, Kind::StateUpdate | Kind::ConversationError)
    }

    /// Whether appending an event of the kind moves the head to it (1.31.0+,
    /// `ConversationState.append_event`): every kind but
    /// `ConversationStateUpdateEvent`.
    pub fn becomes_head(&self) -> bool {
        !matches!(self, Kind::StateUpdate)
    }
}

impl fmt::Display for Kind<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for Kind<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Kind<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (k, name) in Kind::KNOWN.iter().zip(KNOWN_KINDS) {
            assert_eq!(k.as_str(), name);
            assert_eq!(&Kind::parse(name), k);
            assert_eq!(Kind::known(name).as_ref(), Some(k));
        }
        let other = Kind::parse("FancyNewEvent");
        assert_eq!(other, Kind::Unknown(Cow::Borrowed("FancyNewEvent")));
        assert_eq!(Kind::known("FancyNewEvent"), None);
        assert_eq!(Kind::known(""), None);
        assert_eq!(Kind::known("actionevent"), None);
        assert_eq!(other.as_str(), "FancyNewEvent");
        assert!(!other.is_known() && !other.in_context() && other.becomes_head());
    }
}
