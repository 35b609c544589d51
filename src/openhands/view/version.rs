//! SDK versions, the behaviour changes the view depends on, and telling the
//! writer's version from the files alone.
//!
//! No file records which SDK wrote it, so the version is inferred from
//! structural evidence — members, kinds and JSON spellings that each
//! release's model definitions (`openhands/sdk/event/`, `openhands/sdk/llm/message.py`,
//! the tools' `definition.py` files) introduce or drop: each piece of
//! evidence bounds the writer's version from below or above, and the view
//! picks the newest known release inside the bounds (behaviour that the
//! files cannot tell apart is then the current one). The caller can
//! force a version instead ([`ViewOptions::version`](super::ViewOptions)).

use std::fmt;

/// An SDK release number, `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SdkVersion {
    /// Major number.
    pub major: u16,
    /// Minor number.
    pub minor: u16,
    /// Patch number.
    pub patch: u16,
}

impl SdkVersion {
    /// A version from its three numbers.
    pub const fn new(major: u16, minor: u16, patch: u16) -> Self {
        SdkVersion {
            major,
            minor,
            patch,
        }
    }

    /// 1.0.0: the first release; a view is built only with a condenser.
    pub const V1_0_0: SdkVersion = SdkVersion::new(1, 0, 0);
    /// 1.1.0: `send_reasoning_content`; empty text dropped from tool-call
    /// turns on the wire.
    pub const V1_1_0: SdkVersion = SdkVersion::new(1, 1, 0);
    /// 1.2.0: thinking blocks go to their own wire key.
    pub const V1_2_0: SdkVersion = SdkVersion::new(1, 2, 0);
    /// 1.3.0: the view is always built (with or without a condenser).
    pub const V1_3_0: SdkVersion = SdkVersion::new(1, 3, 0);
    /// 1.4.0: truncated tool output saved under `observations/`.
    pub const V1_4_0: SdkVersion = SdkVersion::new(1, 4, 0);
    /// 1.6.0: `TextContent.enable_truncation`.
    pub const V1_6_0: SdkVersion = SdkVersion::new(1, 6, 0);
    /// 1.7.0: pairing drops whole batches; optional thinking signatures.
    pub const V1_7_0: SdkVersion = SdkVersion::new(1, 7, 0);
    /// 1.7.2: browser screenshots saved under `observations/`.
    pub const V1_7_2: SdkVersion = SdkVersion::new(1, 7, 2);
    /// 1.10.0: condensations applied in order, summary ids
    /// `<condensation id>-summary`, `Message` flags dropped.
    pub const V1_10_0: SdkVersion = SdkVersion::new(1, 10, 0);
    /// 1.11.1: send-time truncation only for tool results;
    /// `enable_truncation` gone.
    pub const V1_11_1: SdkVersion = SdkVersion::new(1, 11, 1);
    /// 1.11.3: the system prompt's dynamic context.
    pub const V1_11_3: SdkVersion = SdkVersion::new(1, 11, 3);
    /// 1.11.5: view properties enforced to a fixed point.
    pub const V1_11_5: SdkVersion = SdkVersion::new(1, 11, 5);
    /// 1.18.1: `MessageToolCall.responses_item_id`.
    pub const V1_18_1: SdkVersion = SdkVersion::new(1, 18, 1);
    /// 1.19.1: terminal output files named `terminal_output_*`.
    pub const V1_19_1: SdkVersion = SdkVersion::new(1, 19, 1);
    /// 1.20.1: observation uniqueness.
    pub const V1_20_1: SdkVersion = SdkVersion::new(1, 20, 1);
    /// 1.26.0: consecutive plain user messages merged.
    pub const V1_26_0: SdkVersion = SdkVersion::new(1, 26, 0);
    /// 1.29.0: an empty plain assistant content list is sent as `""`.
    pub const V1_29_0: SdkVersion = SdkVersion::new(1, 29, 0);
    /// 1.31.0: the event tree (`parent_id`, `leaf_event_id`).
    pub const V1_31_0: SdkVersion = SdkVersion::new(1, 31, 0);
    /// 1.35.0: the legacy-leaf fallback skips artifacts.
    pub const V1_35_0: SdkVersion = SdkVersion::new(1, 35, 0);
    /// 1.43.0: merged multi-call messages keep `responses_reasoning_item`.
    pub const V1_43_0: SdkVersion = SdkVersion::new(1, 43, 0);
    /// The newest release this crate knows (1.58.2).
    pub const LATEST: SdkVersion = SdkVersion::new(1, 58, 2);

    /// Parses `"1.31.2"` (a leading `v` is accepted).
    pub fn parse(s: &str) -> Option<SdkVersion> {
        let s = s.strip_prefix('v').unwrap_or(s);
        let mut it = s.split('.');
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        let patch = it.next().map_or(Some(0), |p| p.parse().ok())?;
        if it.next().is_some() {
            return None;
        }
        Some(SdkVersion::new(major, minor, patch))
    }

    /// Whether this is a release the crate knows (one of
    /// [`known_releases`](Self::known_releases)).
    pub fn is_known(self) -> bool {
        Self::known_releases().any(|v| v == self)
    }

    /// The releases the crate knows, oldest first.
    pub fn known_releases() -> impl DoubleEndedIterator<Item = SdkVersion> {
        KNOWN_RELEASES
            .iter()
            .map(|&(a, b, c)| SdkVersion::new(a, b, c))
    }

    /// Which view algorithm this version runs.
    pub fn algorithm(self) -> ViewAlgorithm {
        if self >= SdkVersion::V1_11_5 {
            ViewAlgorithm::Properties
        } else if self >= SdkVersion::V1_10_0 {
            ViewAlgorithm::Sequential
        } else {
            ViewAlgorithm::Legacy
        }
    }
}

impl fmt::Display for SdkVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The three versions of the SDK's `View.from_events` (the version ranges
/// that differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViewAlgorithm {
    /// 1.0.0 – 1.9.x: every condensation's forgotten ids at once, only the
    /// latest summary, one pairing pass (SDK 1.0.0–1.9.1
    /// `openhands/sdk/context/view.py`).
    Legacy,
    /// 1.10.0 – 1.11.4: condensations applied in order, batch atomicity and
    /// pairing passes (SDK 1.10.0 `openhands/sdk/context/view.py`).
    Sequential,
    /// 1.11.5 and later: properties enforced to a fixed point (SDK 1.11.5+
    /// `openhands/sdk/context/view/view.py` and `view/properties/*.py`).
    Properties,
}

/// Releases the crate knows, oldest first: the representative chosen for a
/// range of possible writers is the newest of these inside the range.
const KNOWN_RELEASES: &[(u16, u16, u16)] = &[
    (1, 0, 0),
    (1, 1, 0),
    (1, 2, 0),
    (1, 3, 0),
    (1, 4, 0),
    (1, 4, 1),
    (1, 5, 0),
    (1, 5, 1),
    (1, 5, 2),
    (1, 6, 0),
    (1, 7, 0),
    (1, 7, 1),
    (1, 7, 2),
    (1, 7, 3),
    (1, 7, 4),
    (1, 8, 0),
    (1, 8, 1),
    (1, 8, 2),
    (1, 9, 0),
    (1, 9, 1),
    (1, 10, 0),
    (1, 11, 0),
    (1, 11, 1),
    (1, 11, 2),
    (1, 11, 3),
    (1, 11, 4),
    (1, 11, 5),
    (1, 12, 0),
    (1, 13, 0),
    (1, 13, 1),
    (1, 14, 0),
    (1, 15, 0),
    (1, 16, 0),
    (1, 16, 1),
    (1, 17, 0),
    (1, 18, 0),
    (1, 18, 1),
    (1, 19, 0),
    (1, 19, 1),
    (1, 20, 0),
    (1, 20, 1),
    (1, 21, 0),
    (1, 21, 1),
    (1, 22, 0),
    (1, 22, 1),
    (1, 23, 0),
    (1, 23, 1),
    (1, 24, 0),
    (1, 25, 0),
    (1, 26, 0),
    (1, 27, 0),
    (1, 27, 1),
    (1, 28, 0),
    (1, 28, 1),
    (1, 29, 0),
    (1, 29, 2),
    (1, 29, 3),
    (1, 30, 0),
    (1, 31, 0),
    (1, 31, 1),
    (1, 31, 2),
    (1, 32, 0),
    (1, 33, 0),
    (1, 34, 0),
    (1, 35, 0),
    (1, 36, 0),
    (1, 36, 1),
    (1, 37, 0),
    (1, 37, 1),
    (1, 38, 0),
    (1, 39, 0),
    (1, 39, 1),
    (1, 40, 0),
    (1, 40, 1),
    (1, 41, 0),
    (1, 42, 0),
    (1, 42, 1),
    (1, 43, 0),
    (1, 43, 1),
    (1, 44, 0),
    (1, 45, 0),
    (1, 47, 0),
    (1, 50, 1),
    (1, 53, 0),
    (1, 54, 0),
    (1, 55, 0),
    (1, 55, 1),
    (1, 57, 0),
    (1, 58, 2),
];

/// One fact seen in the files and what it says about the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Evidence {
    /// `json.dumps`-style events (`kind` first, `", "` separators): ≤ 1.7.3.
    SpacedJson,
    /// pydantic-style compact events (`kind` last): ≥ 1.7.4.
    CompactJson,
    /// `SystemPromptEvent.tools` holds OpenAI tool dicts: ≤ 1.6.0.
    ChatToolParams,
    /// `SystemPromptEvent.tools` holds tool definitions: ≥ 1.7.0.
    ToolDefinitions,
    /// A message carries `cache_enabled` but not `send_reasoning_content`:
    /// 1.0.x.
    MessageFlagsV1_0,
    /// A message carries `send_reasoning_content`: 1.1.0 – 1.9.x.
    MessageFlags,
    /// A message without the deprecated flags: ≥ 1.10.0.
    NoMessageFlags,
    /// `TextContent.enable_truncation`: 1.6.0 – 1.11.0.
    EnableTruncation,
    /// A `TextContent` without `enable_truncation`: not 1.6.0 – 1.11.0
    /// (which always write it).
    NoEnableTruncation,
    /// `ExecuteBash*` kinds: ≤ 1.2.0.
    ExecuteBash,
    /// `Terminal*` kinds: ≥ 1.3.0.
    Terminal,
    /// `parent_id` on an event or `head_is_empty` in the state: ≥ 1.31.0.
    EventTree,
    /// `.eventlog.lock` exists: ≥ 1.8.2.
    LockFile,
    /// No `.eventlog.lock` in a listed `events/`: ≤ 1.8.1.
    NoLockFile,
    /// `.eventlog-len-N.marker` exists: ≥ 1.45.0.
    LengthMarker,
    /// No length marker in a listed `events/`: ≤ 1.44.x.
    NoLengthMarker,
    /// `ObservationEvent.extended_content`: ≥ 1.34.0.
    ObservationExtendedContent,
    /// An `ObservationEvent` without `extended_content`: ≤ 1.33.x.
    NoObservationExtendedContent,
    /// `AgentErrorEvent.classification`: ≥ 1.40.0.
    ErrorClassification,
    /// An `AgentErrorEvent` without `classification`: ≤ 1.39.x.
    NoErrorClassification,
    /// `UserRejectObservation.rejection_source`: ≥ 1.11.3.
    RejectionSource,
    /// A `UserRejectObservation` without `rejection_source`: ≤ 1.11.2.
    NoRejectionSource,
    /// `SystemPromptEvent.dynamic_context`: ≥ 1.11.3.
    DynamicContext,
    /// `ActionEvent.summary`: ≥ 1.8.0.
    ActionSummary,
    /// State `activated_path_rules`: ≥ 1.34.0; absent: ≤ 1.33.x.
    StatePathRules(bool),
    /// State `tags`: ≥ 1.16.0; absent: ≤ 1.15.x.
    StateTags(bool),
    /// State `blocked_actions`: ≥ 1.7.1; absent: ≤ 1.7.0.
    StateBlockedActions(bool),
    /// State `agent_state`: ≥ 1.11.2; absent: ≤ 1.11.1.
    StateAgentState(bool),
    /// State `invoked_skills`: ≥ 1.18.0; absent: ≤ 1.17.x.
    StateInvokedSkills(bool),
    /// State without `head_is_empty` (always written from 1.31.0): ≤ 1.30.x.
    NoHeadIsEmpty,
}

impl Evidence {
    /// The writer versions the fact allows: `[min, max_exclusive)`.
    pub fn bounds(self) -> (SdkVersion, Option<SdkVersion>) {
        use Evidence::*;
        let v = SdkVersion::new;
        match self {
            SpacedJson => (v(1, 0, 0), Some(v(1, 7, 4))),
            CompactJson => (v(1, 7, 4), None),
            ChatToolParams => (v(1, 0, 0), Some(v(1, 7, 0))),
            ToolDefinitions => (v(1, 7, 0), None),
            MessageFlagsV1_0 => (v(1, 0, 0), Some(v(1, 1, 0))),
            MessageFlags => (v(1, 1, 0), Some(v(1, 10, 0))),
            NoMessageFlags => (v(1, 10, 0), None),
            EnableTruncation => (v(1, 6, 0), Some(v(1, 11, 1))),
            NoEnableTruncation => (v(1, 0, 0), None),
            ExecuteBash => (v(1, 0, 0), Some(v(1, 3, 0))),
            Terminal => (v(1, 3, 0), None),
            EventTree => (v(1, 31, 0), None),
            LockFile => (v(1, 8, 2), None),
            NoLockFile => (v(1, 0, 0), Some(v(1, 8, 2))),
            LengthMarker => (v(1, 45, 0), None),
            NoLengthMarker => (v(1, 0, 0), Some(v(1, 45, 0))),
            ObservationExtendedContent => (v(1, 34, 0), None),
            NoObservationExtendedContent => (v(1, 0, 0), Some(v(1, 34, 0))),
            ErrorClassification => (v(1, 40, 0), None),
            NoErrorClassification => (v(1, 0, 0), Some(v(1, 40, 0))),
            RejectionSource => (v(1, 11, 3), None),
            NoRejectionSource => (v(1, 0, 0), Some(v(1, 11, 3))),
            DynamicContext => (v(1, 11, 3), None),
            ActionSummary => (v(1, 8, 0), None),
            StatePathRules(true) => (v(1, 34, 0), None),
            StatePathRules(false) => (v(1, 0, 0), Some(v(1, 34, 0))),
            StateTags(true) => (v(1, 16, 0), None),
            StateTags(false) => (v(1, 0, 0), Some(v(1, 16, 0))),
            StateBlockedActions(true) => (v(1, 7, 1), None),
            StateBlockedActions(false) => (v(1, 0, 0), Some(v(1, 7, 1))),
            StateAgentState(true) => (v(1, 11, 2), None),
            StateAgentState(false) => (v(1, 0, 0), Some(v(1, 11, 2))),
            StateInvokedSkills(true) => (v(1, 18, 0), None),
            StateInvokedSkills(false) => (v(1, 0, 0), Some(v(1, 18, 0))),
            NoHeadIsEmpty => (v(1, 0, 0), Some(v(1, 31, 0))),
        }
    }
}

impl Evidence {
    /// Writer versions the fact rules out, `[from, to)`, beyond
    /// [`bounds`](Self::bounds).
    pub fn excludes(self) -> Option<(SdkVersion, SdkVersion)> {
        match self {
            Evidence::NoEnableTruncation => Some((SdkVersion::V1_6_0, SdkVersion::V1_11_1)),
            _ => None,
        }
    }
}

/// How the version the view follows was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    /// The version whose behaviour the view reproduces.
    pub version: SdkVersion,
    /// Whether the caller forced it.
    pub forced: bool,
    /// The oldest writer the evidence allows.
    pub min: SdkVersion,
    /// The first version the evidence excludes (`None`: no upper bound).
    pub max_exclusive: Option<SdkVersion>,
    /// Whether pieces of evidence contradicted each other: an upper bound
    /// below another fact's lower bound (files of an older writer in a
    /// conversation a newer SDK resumed). The newest writer's range is
    /// kept.
    pub conflicting: bool,
    /// The evidence, each fact once, in the order first seen.
    pub evidence: Vec<Evidence>,
}

impl Detected {
    /// A version the caller forces.
    pub fn forced(version: SdkVersion) -> Self {
        Detected {
            version,
            forced: true,
            min: version,
            max_exclusive: None,
            conflicting: false,
            evidence: Vec::new(),
        }
    }
}

/// Collects evidence and narrows the range of possible writers.
#[derive(Debug, Default)]
pub(crate) struct Detector {
    evidence: Vec<Evidence>,
}

impl Detector {
    pub(crate) fn add(&mut self, e: Evidence) {
        if !self.evidence.contains(&e) {
            self.evidence.push(e);
        }
    }

    /// Adds `other`'s evidence, in its order (as if each had been added
    /// here).
    pub(crate) fn merge(&mut self, other: Detector) {
        for e in other.evidence {
            self.add(e);
        }
    }

    /// The range of the newest writer: every lower bound holds for it (it
    /// is at least as new as any writer whose traces are in the files);
    /// an upper bound below that comes from an older writer of a
    /// conversation a newer SDK resumed, and is set aside (and reported
    /// as conflicting).
    pub(crate) fn finish(self) -> Detected {
        let min = self
            .evidence
            .iter()
            .map(|e| e.bounds().0)
            .max()
            .unwrap_or(SdkVersion::V1_0_0);
        let mut max: Option<SdkVersion> = None;
        let mut conflicting = false;
        for e in &self.evidence {
            if let Some(hi) = e.bounds().1 {
                if hi <= min {
                    conflicting = true;
                } else {
                    max = Some(max.map_or(hi, |m| m.min(hi)));
                }
            }
        }
        let excluded: Vec<(SdkVersion, SdkVersion)> =
            self.evidence.iter().filter_map(|e| e.excludes()).collect();
        let in_range = |v: &SdkVersion| *v >= min && max.is_none_or(|m| *v < m);
        let allowed = |v: &SdkVersion| !excluded.iter().any(|(a, b)| v >= a && v < b);
        let releases = || {
            KNOWN_RELEASES
                .iter()
                .rev()
                .map(|&(a, b, c)| SdkVersion::new(a, b, c))
        };
        let version = releases()
            .find(|v| in_range(v) && allowed(v))
            .or_else(|| {
                conflicting = true;
                releases().find(in_range)
            })
            .unwrap_or(min);
        Detected {
            version,
            forced: false,
            min,
            max_exclusive: max,
            conflicting,
            evidence: self.evidence,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_order() {
        assert_eq!(
            SdkVersion::parse("v1.31.2"),
            Some(SdkVersion::new(1, 31, 2))
        );
        assert_eq!(SdkVersion::parse("1.7"), Some(SdkVersion::new(1, 7, 0)));
        assert_eq!(SdkVersion::parse("1.x.0"), None);
        assert!(SdkVersion::new(1, 9, 1) < SdkVersion::V1_10_0);
        assert_eq!(
            SdkVersion::new(1, 11, 4).algorithm(),
            ViewAlgorithm::Sequential
        );
        assert_eq!(SdkVersion::new(1, 9, 1).algorithm(), ViewAlgorithm::Legacy);
        assert_eq!(SdkVersion::LATEST.algorithm(), ViewAlgorithm::Properties);
    }

    #[test]
    fn narrows_to_newest_known_release() {
        let mut d = Detector::default();
        d.add(Evidence::CompactJson);
        d.add(Evidence::MessageFlags);
        d.add(Evidence::NoLockFile);
        let r = d.finish();
        assert_eq!(r.version, SdkVersion::new(1, 8, 1));
        assert_eq!(r.min, SdkVersion::new(1, 7, 4));
        assert!(!r.conflicting);

        let mut d = Detector::default();
        d.add(Evidence::SpacedJson);
        d.add(Evidence::MessageFlagsV1_0);
        assert_eq!(d.finish().version, SdkVersion::V1_0_0);

        let r = Detector::default().finish();
        assert_eq!(r.version, SdkVersion::LATEST);

        // 1.1.0 – 1.6.x, but no enable_truncation: older than 1.6.0.
        let mut d = Detector::default();
        d.add(Evidence::SpacedJson);
        d.add(Evidence::ChatToolParams);
        d.add(Evidence::MessageFlags);
        d.add(Evidence::NoEnableTruncation);
        assert_eq!(d.finish().version, SdkVersion::new(1, 5, 2));
    }

    #[test]
    fn conflicting_evidence_is_reported_not_fatal() {
        let mut d = Detector::default();
        d.add(Evidence::LengthMarker);
        d.add(Evidence::SpacedJson);
        let r = d.finish();
        assert!(r.conflicting);
        assert_eq!(r.version, SdkVersion::LATEST);
    }
}
