//! What the model saw: for an OpenHands conversation directory, the event
//! tree, the active branch, the condensed view and the exact messages the
//! agent sends to the model next — as the SDK version that wrote the
//! directory builds them (SDK `openhands/sdk/conversation/state.py`,
//! `openhands/sdk/context/view.py` and `view/`, and
//! `LLMConvertibleEvent.events_to_messages` in `openhands/sdk/event/base.py`).
//!
//! # Pipeline
//!
//! 1. Every event file is parsed once ([`ViewEvent`]): the envelope and what
//!    the view and the messages need from its kind, strings borrowed from
//!    the file's bytes when their JSON literal has no escape.
//! 2. The writer's version is inferred from the files ([`Detected`],
//!    [`Evidence`]: JSON style, message and content members, tool and
//!    observation kinds, state members, the `events/` sidecars); each fact
//!    bounds the writer, the newest known release inside the bounds is
//!    reproduced, and in a conversation a newer SDK resumed (facts of two
//!    writers) the newest writer wins and the mix is reported. Forced with
//!    [`ViewOptions::version`].
//! 3. The event tree ([`EventTree`]): effective parents, the head
//!    (`leaf_event_id`, `head_is_empty`, or the version's fallback), the
//!    active branch, every branch, abandoned branches, cycles and dangling
//!    parents (reported in [`View::issues`], never looped on).
//! 4. The events of the conversation (the active branch from 1.31, every
//!    event before) go through `View.from_events` of the version
//!    ([`View::entries`]): condensations, summaries, batch atomicity,
//!    tool-call matching, observation uniqueness, tool-loop atomicity.
//! 5. The events the agent turns into messages ([`View::context`]: the view,
//!    or before 1.3.0 without a condenser every LLM-convertible event) become
//!    [`Message`]s as `events_to_messages` does: one assistant message per
//!    batch of parallel calls, observations rendered by kind, consecutive
//!    plain user messages merged from 1.26.0.
//! 6. On demand: the SDK's `Message.model_dump(mode="json")` objects
//!    ([`View::sdk_messages`]) and the chat-completions dicts of
//!    `LLM.format_messages_for_llm` ([`View::wire_messages`]).
//!
//! # Example
//!
//! ```
//! use agentlog::openhands::view::{EventInput, View, ViewInput, ViewOptions};
//!
//! let system = br#"{"id":"s","timestamp":"t","source":"agent","system_prompt":{"cache_prompt":false,"type":"text","text":"You are helpful."},"tools":[],"kind":"SystemPromptEvent"}"#;
//! let user = br#"{"id":"u","timestamp":"t","source":"user","llm_message":{"role":"user","content":[{"cache_prompt":false,"type":"text","text":"Hi"}],"thinking_blocks":[]},"kind":"MessageEvent"}"#;
//! let input = ViewInput {
//!     events: vec![
//!         EventInput { index: 0, file_id: "s", raw: system },
//!         EventInput { index: 1, file_id: "u", raw: user },
//!     ],
//!     ..Default::default()
//! };
//! let view = View::build(&input, &ViewOptions::default());
//! assert_eq!(view.event_ids(), ["s", "u"]);
//! // The text "Hi" is borrowed from the file's bytes.
//! assert!(matches!(
//!     &view.messages()[1].content[0],
//!     agentlog::openhands::view::Content::Text(t) if matches!(t.text, std::borrow::Cow::Borrowed("Hi"))
//! ));
//! let wire = view.wire_messages();
//! assert_eq!(
//!     wire[1].to_string_styled(agentlog::json::Style::COMPACT),
//!     r#"{"content":[{"type":"text","text":"Hi"}],"role":"user"}"#
//! );
//! ```
//!
//! With the reader: `View::from_conversation(&read_conversation(dir)?, &ViewOptions::default())`.
//!
//! # Limitations (kept, written down)
//!
//! - Before 1.10.0 the SDK gives a condensation summary a fresh random id on
//!   every build; here it is `<condensation id>-summary` as in later
//!   versions (its position and content are the SDK's).
//! - The wire form needs the model's capabilities. [`WireOptions`] derives
//!   them from the state's `agent.llm`: prompt caching, string serialization
//!   and `reasoning_content` from the SDK's own model-name lists, vision
//!   from a list of model families that approximates litellm's model table
//!   (override with [`View::wire_messages_with`]). The SDK's newer
//!   inlining of http(s) image URLs and provider-specific image resizing
//!   (which download or re-encode images) are not reproduced; `data:` URLs
//!   and URLs pass through unchanged.
//! - The Responses API form (`format_messages_for_responses`, used for
//!   GPT-5 and Codex models) is not built; only chat completions.
//! - Truncated tool output: the notice names the file the SDK writes under
//!   `observations/` when it renders the message; the file is not written
//!   here (a view is read-only), so the text is what the SDK sends when its
//!   write succeeds.
//! - A file that is not JSON, or an event missing a member its kind
//!   requires, makes the SDK refuse the whole conversation; here the event
//!   is reported ([`ViewIssue::Event`]) and left out of the view.
//! - Condensers are not run (they may call an LLM): the view is the
//!   context with the condensations already on disk applied, as the
//!   corpus oracles define it.
//! - Strings are borrowed from the event files when their JSON literal has
//!   no escape; text with escapes (most multi-line text) is decoded into an
//!   owned string once, and rendered text (terminal output with its
//!   footers, rejections, task headers) is owned by construction.
//! - Behaviour between SDK 1.43.1 and 1.58.2 was checked against the
//!   corpus oracles of 1.58.2 only (the SDK sources read stop at 1.43.1).

mod build;
mod describe;
mod early;
mod event;
mod heads;
mod message;
mod render;
mod state;
mod text;
mod tree;
mod version;

use std::borrow::Cow;

use crate::json::{OwnedValue, Parser, Value};
use crate::openhands::Kind;

pub use build::ViewEntry;
pub(crate) use early::{EarlyEvents, EarlyState};
pub use event::{EventProblem, ParentField, ViewEvent};
pub use message::{
    Content, ImageContent, LegacyFlags, Message, ReasoningItem, Role, TEXT_CONTENT_LIMIT,
    TextContent, ThinkingBlock, ToolCall, WireOptions, to_wire_values,
};
pub(crate) use message::{WireContent, WirePart, WireShape};
#[cfg(test)]
pub(crate) use message::{tests as message_tests, wire_shapes};
pub use render::{ERROR_HEADER, MAX_BROWSER_OUTPUT_SIZE, MAX_CMD_OUTPUT_SIZE};
pub use state::wire_options_for_llm;
use state::{StateInfo, read_state};
pub use tree::{Branch, EventTree, Head, HeadState, Parent, PathFault};
pub use version::{Detected, Evidence, SdkVersion, ViewAlgorithm};

use event::Body;
use version::Detector;

/// One event file, as the reader found it.
#[derive(Debug, Clone, Copy)]
pub struct EventInput<'a> {
    /// The index from the file name.
    pub index: usize,
    /// The event id from the file name.
    pub file_id: &'a str,
    /// The file's bytes.
    pub raw: &'a [u8],
}

/// What the `events/` listing showed besides event files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sidecars {
    /// `.eventlog.lock` exists (written by 1.8.2+).
    pub eventlog_lock: bool,
    /// An `.eventlog-len-N.marker` exists (written by 1.45.0+).
    pub length_marker: bool,
}

/// A conversation directory's contents, as the view needs them.
#[derive(Debug, Clone, Default)]
pub struct ViewInput<'a> {
    /// The events in index order, from index 0 up to the first missing
    /// index (the files the SDK reads).
    pub events: Vec<EventInput<'a>>,
    /// `base_state.json`, if present.
    pub base_state: Option<&'a [u8]>,
    /// The sidecar files of `events/`, when the directory was listed.
    pub sidecars: Option<Sidecars>,
}

impl<'a> ViewInput<'a> {
    /// The input of a conversation the reader read: its events (index
    /// order, up to the first missing index; a file that did not read is
    /// passed on and reported by the view), `base_state.json` and the
    /// sidecars of `events/`.
    pub fn from_conversation(conv: &'a super::Conversation) -> Self {
        let sidecars = conv.events_error().is_none().then(|| Sidecars {
            eventlog_lock: conv.sidecars().iter().any(|s| s == ".eventlog.lock"),
            length_marker: conv
                .sidecars()
                .iter()
                .any(|s| s.starts_with(".eventlog-len-") && s.ends_with(".marker")),
        });
        ViewInput {
            events: conv
                .events()
                .map(|e| EventInput {
                    index: usize::try_from(e.index()).unwrap_or(usize::MAX),
                    file_id: e.file_id(),
                    raw: e.raw(),
                })
                .collect(),
            base_state: conv.state().map(|f| f.raw()),
            sidecars,
        }
    }
}

/// [`View::of`]: the view with the default options.
impl<'a> From<&'a super::Conversation> for View<'a> {
    fn from(conv: &'a super::Conversation) -> View<'a> {
        View::of(conv)
    }
}

/// Choices the caller can make.
#[derive(Debug, Clone, Default)]
pub struct ViewOptions {
    /// Reproduce this SDK version instead of the one inferred from the files.
    pub version: Option<SdkVersion>,
    /// View the branch ending at the event with this id (as if
    /// `navigate_to(id)`) instead of the state's head.
    pub head: Option<String>,
}

/// Something the view noticed and worked around.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ViewIssue {
    /// An event could not be used (the SDK would refuse the conversation).
    Event {
        /// The event's index.
        index: usize,
        /// What is wrong.
        problem: EventProblem,
    },
    /// `base_state.json` is not a JSON object.
    BaseState(String),
    /// The parent relation has a cycle through these event indices.
    Cycle(Vec<usize>),
    /// An event's `parent_id` names no event.
    DanglingParent {
        /// The event's index.
        index: usize,
        /// The id it names.
        parent_id: String,
    },
    /// The head names no event.
    DanglingHead(String),
    /// The walk from the head to the root stopped early.
    BrokenBranch(PathFault),
    /// Version evidence contradicted itself.
    ConflictingEvidence,
}

/// The rebuilt context of one conversation.
#[derive(Debug)]
pub struct View<'a> {
    events: Vec<ViewEvent<'a>>,
    tree: EventTree,
    detected: Detected,
    conversation: Vec<usize>,
    entries: Vec<ViewEntry>,
    context: Vec<ViewEntry>,
    messages: Vec<Message<'a>>,
    message_entries: Vec<std::ops::Range<usize>>,
    wire: WireOptions,
    issues: Vec<ViewIssue>,
}

/// A conversation's events decoded, its state read and its writer's version
/// found: what every view of it at any head starts from.
struct Decoded<'a> {
    events: Vec<ViewEvent<'a>>,
    state: StateInfo<'a>,
    detected: Detected,
    issues: Vec<ViewIssue>,
}

impl<'a> Decoded<'a> {
    /// The view at `options.head` (the state's head when `None`).
    fn into_view(self, options: &ViewOptions) -> View<'a> {
        View::assemble(
            self.events,
            &self.state,
            self.detected,
            self.issues,
            options.head.as_deref(),
        )
    }
}

impl<'a> View<'a> {
    /// Builds the view of a conversation.
    pub fn build(input: &ViewInput<'a>, options: &ViewOptions) -> View<'a> {
        View::build_with(input, options, &mut crate::json::PooledParser::take())
    }

    /// [`View::build`] parsing with the caller's `parser` (reused from one
    /// conversation to the next, its buffers are not made again for each).
    pub(crate) fn build_with(
        input: &ViewInput<'a>,
        options: &ViewOptions,
        parser: &mut Parser,
    ) -> View<'a> {
        let d = View::decode(input, options, parser, None, None, &mut |_, _, _| {});
        d.into_view(options)
    }

    /// [`View::build_with`] with the events `early` decoded from another
    /// reader's parse of them: each event of `input` that `early` holds
    /// (by index) is taken from there instead of being parsed again, the
    /// others are parsed. The view is the one [`View::build_with`] builds
    /// when `early` holds, in order, the events of `input` that parse as
    /// JSON objects (each decoded from its own bytes): the caller's
    /// guarantee; `early` says when it could not keep it
    /// ([`EarlyEvents::spoil`]), and is then not used. `state`, when given,
    /// is read from a parse of `input.base_state` (the caller's guarantee),
    /// which is then not parsed again.
    #[cfg(feature = "parquet")]
    pub(crate) fn build_early(
        input: &ViewInput<'a>,
        options: &ViewOptions,
        parser: &mut Parser,
        early: EarlyEvents,
        state: Option<EarlyState<'a>>,
    ) -> View<'a> {
        let early = (!early.spoilt).then_some(early);
        let d = View::decode(input, options, parser, early, state, &mut |_, _, _| {});
        d.into_view(options)
    }

    /// [`View::build`], showing `visit` each event that parsed, once, from
    /// the parse the view is built from: its position in `input.events`
    /// (and in [`View::events`]), the decoded event and its document's
    /// root (the search index takes its texts there).
    #[cfg(feature = "search")]
    pub(crate) fn build_visiting(
        input: &ViewInput<'a>,
        options: &ViewOptions,
        visit: &mut dyn FnMut(usize, &ViewEvent<'a>, Value<'_>),
    ) -> View<'a> {
        let d = View::decode(
            input,
            options,
            &mut crate::json::PooledParser::take(),
            None,
            None,
            visit,
        );
        d.into_view(options)
    }

    /// Parses and decodes every event, reads the state and finds the
    /// writer's version. `visit` is shown each event that parsed (its
    /// position in `input.events`, the decoded event, its document's root).
    ///
    /// With `early`, the events it holds are taken from it (in `input`'s
    /// order, matched by index) and its evidence stands for theirs; with
    /// `early_state`, the state is taken from it instead of parsed.
    fn decode(
        input: &ViewInput<'a>,
        options: &ViewOptions,
        parser: &mut Parser,
        early: Option<EarlyEvents>,
        early_state: Option<EarlyState<'a>>,
        visit: &mut dyn FnMut(usize, &ViewEvent<'a>, Value<'_>),
    ) -> Decoded<'a> {
        let (mut det, mut taken) = match early {
            Some(e) => (e.det, e.events.into_iter()),
            None => (Detector::default(), Vec::new().into_iter()),
        };
        let mut next = taken.next();
        let mut issues = Vec::new();
        let events: Vec<ViewEvent<'a>> = input
            .events
            .iter()
            .enumerate()
            .map(|(p, e)| {
                if next.as_ref().is_some_and(|n| n.index == e.index)
                    && let Some(ev) = std::mem::replace(&mut next, taken.next())
                {
                    return ev.with_file_id(e.file_id);
                }
                event::decode(
                    parser,
                    e.index,
                    e.file_id,
                    e.raw,
                    &mut det,
                    &mut |ev, root| visit(p, ev, root),
                )
            })
            .collect();
        if let Some(sc) = input.sidecars {
            det.add(if sc.eventlog_lock {
                Evidence::LockFile
            } else {
                Evidence::NoLockFile
            });
            det.add(if sc.length_marker {
                Evidence::LengthMarker
            } else {
                Evidence::NoLengthMarker
            });
        }
        let state = match (input.base_state, early_state) {
            (Some(_), Some(s)) => {
                det.merge(s.det);
                s.info
            }
            (Some(raw), None) => read_state(raw, parser, &mut det, &mut issues),
            (None, _) => StateInfo::default(),
        };
        let detected = match options.version {
            Some(v) => Detected::forced(v),
            None => det.finish(),
        };
        if detected.conflicting {
            issues.push(ViewIssue::ConflictingEvidence);
        }
        for e in &events {
            if let Some(p) = &e.problem {
                issues.push(ViewIssue::Event {
                    index: e.index,
                    problem: p.clone(),
                });
            }
        }
        Decoded {
            events,
            state,
            detected,
            issues,
        }
    }

    /// The view at `head` (the state's head when `None`) of decoded events.
    fn assemble(
        events: Vec<ViewEvent<'a>>,
        state: &StateInfo<'a>,
        detected: Detected,
        mut issues: Vec<ViewIssue>,
        head: Option<&str>,
    ) -> View<'a> {
        let tree = View::tree_of(&events, state, &detected, head);
        let plan = View::plan(&events, &tree, state, &detected, &mut issues, head);
        View::finish(events, tree, state, detected, issues, plan)
    }

    /// [`View::assemble`] from a copy of `events` in which only the events
    /// of the view's context keep their kind-specific data: the tree, the
    /// conversation and the entries are found from `events` as they stand,
    /// and the messages are made from the context's events alone, so no
    /// other event's data is copied.
    fn assemble_cloned(
        events: &[ViewEvent<'a>],
        state: &StateInfo<'a>,
        detected: Detected,
        mut issues: Vec<ViewIssue>,
        head: Option<&str>,
    ) -> View<'a> {
        let tree = View::tree_of(events, state, &detected, head);
        let (conversation, entries, context) =
            View::plan(events, &tree, state, &detected, &mut issues, head);
        let mut keep = vec![false; events.len()];
        for e in &context {
            let (ViewEntry::Event(p) | ViewEntry::Summary(p)) = *e;
            if let Some(k) = keep.get_mut(p) {
                *k = true;
            }
        }
        let copy: Vec<ViewEvent<'a>> = events
            .iter()
            .zip(&keep)
            .map(|(e, &k)| ViewEvent {
                index: e.index,
                file_id: e.file_id,
                id: e.id.clone(),
                kind: e.kind.clone(),
                parent: e.parent.clone(),
                problem: e.problem.clone(),
                body: if k { e.body.clone() } else { Body::None },
            })
            .collect();
        View::finish(
            copy,
            tree,
            state,
            detected,
            issues,
            (conversation, entries, context),
        )
    }

    /// The event tree of `events` at `head` (the state's when `None`).
    fn tree_of(
        events: &[ViewEvent<'a>],
        state: &StateInfo<'a>,
        detected: &Detected,
        head: Option<&str>,
    ) -> EventTree {
        let head_state = HeadState {
            leaf_event_id: head.or(state.leaf.as_deref()),
            head_is_empty: head.is_none() && state.head_is_empty,
        };
        EventTree::build(events, &head_state, detected.version)
    }

    /// The conversation, the entries and the context of the view of
    /// `events` whose tree is `tree`; what the tree shows wrong is added
    /// to `issues`.
    #[allow(clippy::type_complexity)]
    fn plan(
        events: &[ViewEvent<'a>],
        tree: &EventTree,
        state: &StateInfo<'a>,
        detected: &Detected,
        issues: &mut Vec<ViewIssue>,
        head: Option<&str>,
    ) -> (Vec<usize>, Vec<ViewEntry>, Vec<ViewEntry>) {
        let version = detected.version;
        for cycle in tree.cycles() {
            issues.push(ViewIssue::Cycle(
                cycle
                    .iter()
                    .filter_map(|&p| events.get(p).map(|e| e.index))
                    .collect(),
            ));
        }
        for (p, id) in tree.dangling() {
            issues.push(ViewIssue::DanglingParent {
                index: events.get(p).map_or(p, |e| e.index),
                parent_id: id.to_owned(),
            });
        }
        if let Head::Dangling(id) = tree.head() {
            issues.push(ViewIssue::DanglingHead(id.clone()));
        }
        if let Some(f) = &tree.active_branch().fault {
            issues.push(ViewIssue::BrokenBranch(f.clone()));
        }
        let conversation: Vec<usize> = if version >= SdkVersion::V1_31_0 || head.is_some() {
            tree.active_branch().events.clone()
        } else {
            (0..events.len()).collect()
        };
        let entries = build::from_events(events, &conversation, version);
        let context: Vec<ViewEntry> = if version < SdkVersion::V1_3_0 && !state.condenser {
            conversation
                .iter()
                .copied()
                .filter(|&p| {
                    events
                        .get(p)
                        .is_some_and(|e| e.effective_kind().is_some_and(Kind::in_context))
                })
                .map(ViewEntry::Event)
                .collect()
        } else {
            entries.clone()
        };
        (conversation, entries, context)
    }

    /// The view of its parts, its messages made from the context's events
    /// (their data moved into the messages).
    #[allow(clippy::type_complexity)]
    fn finish(
        mut events: Vec<ViewEvent<'a>>,
        tree: EventTree,
        state: &StateInfo<'a>,
        detected: Detected,
        issues: Vec<ViewIssue>,
        (conversation, entries, context): (Vec<usize>, Vec<ViewEntry>, Vec<ViewEntry>),
    ) -> View<'a> {
        let (messages, message_entries) =
            events_to_messages(&mut events, &context, detected.version);
        View {
            events,
            tree,
            detected,
            conversation,
            entries,
            context,
            messages,
            message_entries,
            wire: state.wire.unwrap_or(WireOptions {
                function_calling: true,
                ..WireOptions::default()
            }),
            issues,
        }
    }

    /// Builds the view of a conversation the reader read
    /// ([`read_conversation`](super::read_conversation)).
    /// [`View::of`] is the same with the default options.
    pub fn from_conversation(conv: &'a super::Conversation, options: &ViewOptions) -> View<'a> {
        View::build(&ViewInput::from_conversation(conv), options)
    }

    /// The view of a conversation with the default options (the SDK
    /// version inferred from the files, the state's head):
    /// [`from_conversation`](Self::from_conversation) with
    /// [`ViewOptions::default`]. Also `View::from(&conv)`.
    pub fn of(conv: &'a super::Conversation) -> View<'a> {
        View::from_conversation(conv, &ViewOptions::default())
    }

    /// The version whose behaviour the view reproduces, and why.
    pub fn version(&self) -> &Detected {
        &self.detected
    }

    /// Every event, in index order. The kind-specific data has been moved
    /// into [`View::messages`]; the envelope stays.
    pub fn events(&self) -> &[ViewEvent<'a>] {
        &self.events
    }

    /// The event tree.
    pub fn tree(&self) -> &EventTree {
        &self.tree
    }

    /// Positions (in [`View::events`]) of the events the SDK's conversation
    /// holds: the active branch from 1.31.0 (or with
    /// [`ViewOptions::head`]), every event before.
    pub fn conversation(&self) -> &[usize] {
        &self.conversation
    }

    /// The JSON ids of the active branch's events, root first.
    pub fn active_branch_ids(&self) -> Vec<&str> {
        self.tree
            .active_branch()
            .events
            .iter()
            .filter_map(|&p| self.events.get(p).map(|e| e.id.as_ref()))
            .collect()
    }

    /// The JSON ids of a branch's events (from [`EventTree::branches`],
    /// [`EventTree::abandoned_branches`] or [`EventTree::path_to_root`]).
    pub fn branch_ids(&self, branch: &Branch) -> Vec<&str> {
        branch
            .events
            .iter()
            .filter_map(|&p| self.events.get(p).map(|e| e.id.as_ref()))
            .collect()
    }

    /// The SDK's `View`: the events (and summaries) in the model's context.
    pub fn entries(&self) -> &[ViewEntry] {
        &self.entries
    }

    /// The id of a view entry: the event's JSON id, or
    /// `<condensation id>-summary`.
    pub fn entry_id(&self, e: ViewEntry) -> Cow<'_, str> {
        build::entry_id(&self.events, e)
    }

    /// The ids of [`View::entries`], in order.
    pub fn event_ids(&self) -> Vec<Cow<'_, str>> {
        self.entries.iter().map(|&e| self.entry_id(e)).collect()
    }

    /// The events turned into messages: [`View::entries`], except before
    /// 1.3.0 without a condenser, where the agent used every LLM-convertible
    /// event of the conversation.
    pub fn context(&self) -> &[ViewEntry] {
        &self.context
    }

    /// The messages the agent sends next.
    pub fn messages(&self) -> &[Message<'a>] {
        &self.messages
    }

    /// The entries of [`View::context`] that message `i` of
    /// [`View::messages`] was made from, in order (a batch of parallel
    /// calls, plain user messages merged into one, an event with its
    /// observation); empty when there is no message `i`.
    pub fn message_entries(&self, i: usize) -> &[ViewEntry] {
        self.message_entries
            .get(i)
            .and_then(|r| self.context.get(r.clone()))
            .unwrap_or_default()
    }

    /// The message the event at position `p` gives on its own, when the
    /// view still holds its data: an LLM-convertible event that is not in
    /// [`View::context`] (forgotten by a condensation, or on no message).
    /// `None` for an event whose data went into [`View::messages`], and
    /// for kinds that give no message.
    #[cfg(feature = "html")]
    pub(crate) fn lone_message(&self, p: usize) -> Option<Message<'a>> {
        let e = self.events.get(p)?;
        e.effective_kind()?;
        render::event_message(e.body.clone(), self.detected.version)
    }

    /// For a condensation event at position `p`: how many events it
    /// forgets and its summary, if any.
    #[cfg(feature = "html")]
    pub(crate) fn condensation(&self, p: usize) -> Option<(usize, Option<&str>)> {
        match &self.events.get(p)?.body {
            Body::Condensation {
                forgotten, summary, ..
            } => Some((forgotten.len(), summary.as_deref())),
            _ => None,
        }
    }

    /// Takes the messages.
    pub fn into_messages(self) -> Vec<Message<'a>> {
        self.messages
    }

    /// The messages as the SDK's `Message.model_dump(mode="json")` objects.
    pub fn sdk_messages(&self) -> Vec<OwnedValue> {
        self.messages
            .iter()
            .map(|m| m.to_sdk_value(self.detected.version))
            .collect()
    }

    /// The wire options derived from the state's `agent.llm` (native
    /// function calling only, when there is no state).
    pub fn wire_options(&self) -> WireOptions {
        self.wire
    }

    /// The chat-completions messages `format_messages_for_llm` sends.
    pub fn wire_messages(&self) -> Vec<OwnedValue> {
        self.wire_messages_with(&self.wire)
    }

    /// The chat-completions messages with the caller's options.
    pub fn wire_messages_with(&self, options: &WireOptions) -> Vec<OwnedValue> {
        to_wire_values(&self.messages, options, self.detected.version)
    }

    /// [`View::wire_messages`] as their members borrowed from the
    /// messages, without building the values.
    pub(crate) fn wire_shapes(&self) -> Vec<message::WireShape<'_>> {
        message::wire_shapes(&self.messages, &self.wire, self.detected.version)
    }

    /// [`View::wire_messages`] written as compact JSON without building
    /// the values: `each` is given each message's position, the bytes
    /// [`OwnedValue::write_to`] with [`Style::COMPACT`](crate::json::Style::COMPACT)
    /// writes for it, and the members it would answer to `get`.
    #[cfg(feature = "parquet")]
    pub(crate) fn write_wire_messages<E>(
        &self,
        each: impl FnMut(usize, &[u8], message::WireFacts<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        message::write_wire_messages(&self.messages, &self.wire, self.detected.version, each)
    }

    /// What the view noticed and worked around.
    pub fn issues(&self) -> &[ViewIssue] {
        &self.issues
    }
}

/// `LLMConvertibleEvent.events_to_messages`, moving each event's data into
/// its message; with each message, the range of `context` it was made from.
fn events_to_messages<'a>(
    events: &mut [ViewEvent<'a>],
    context: &[ViewEntry],
    version: SdkVersion,
) -> (Vec<Message<'a>>, Vec<std::ops::Range<usize>>) {
    let mut messages: Vec<Message<'a>> = Vec::with_capacity(context.len());
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::with_capacity(context.len());
    let merge_users = version >= SdkVersion::V1_26_0;
    let mut i = 0;
    while let Some(&entry) = context.get(i) {
        let first = i;
        let msg = match entry {
            ViewEntry::Summary(p) => {
                i += 1;
                match events.get(p).map(|e| &e.body) {
                    Some(Body::Condensation {
                        summary: Some(s), ..
                    }) => Some(render::summary_message(s.clone())),
                    _ => None,
                }
            }
            ViewEntry::Event(p) => {
                let rid = events
                    .get(p)
                    .filter(|e| e.effective_kind() == Some(&Kind::Action))
                    .and_then(|e| e.llm_response_id())
                    .map(str::to_owned);
                match rid {
                    Some(rid) => {
                        let start = i;
                        let mut batch = Vec::new();
                        while let Some(&ViewEntry::Event(q)) = context.get(i) {
                            let Some(ev) = events.get_mut(q) else { break };
                            if ev.effective_kind() != Some(&Kind::Action)
                                || ev.llm_response_id() != Some(rid.as_str())
                            {
                                break;
                            }
                            if let Body::Action(a) = std::mem::take(&mut ev.body) {
                                batch.push(*a);
                            }
                            i += 1;
                        }
                        if i == start {
                            i += 1;
                        }
                        Some(render::combine_actions(batch, version))
                    }
                    None => {
                        i += 1;
                        events.get_mut(p).and_then(|e| {
                            render::event_message(std::mem::take(&mut e.body), version)
                        })
                    }
                }
            }
        };
        let Some(msg) = msg else { continue };
        if merge_users
            && msg.is_plain_user()
            && let Some(prev) = messages.last_mut()
            && prev.is_plain_user()
        {
            prev.content.extend(msg.content);
            if let Some(r) = ranges.last_mut() {
                r.end = i;
            }
            continue;
        }
        messages.push(msg);
        ranges.push(first..i);
    }
    (messages, ranges)
}
