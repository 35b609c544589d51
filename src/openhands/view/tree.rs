//! The event tree (SDK 1.31+ `openhands/sdk/conversation/state.py` and
//! `event_store.py`): effective parents, the head, the
//! active branch, every branch, and the faults a hand-edited or damaged log
//! can have (cycles, parents that name no event), which are reported and
//! never looped on.

use std::collections::HashMap;

use super::event::{ParentField, ViewEvent};
use super::version::SdkVersion;

/// An event's effective parent (`EventLog._effective_parent_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parent {
    /// No parent: index 0 without `parent_id`, or `parent_id: "__root__"`.
    Root,
    /// `parent_id` names the event at this position.
    Explicit(usize),
    /// No `parent_id` at index > 0: the previous event (legacy chain).
    Legacy(usize),
    /// `parent_id` names no event of the log.
    Dangling(String),
}

impl Parent {
    /// The parent's position, when it is an event of the log.
    pub fn position(&self) -> Option<usize> {
        match self {
            Parent::Explicit(p) | Parent::Legacy(p) => Some(*p),
            Parent::Root | Parent::Dangling(_) => None,
        }
    }
}

/// The head (HEAD) of the tree: the parent of the next event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// The event at this position.
    Event(usize),
    /// No head: an empty log, `head_is_empty`, or a fallback that found no
    /// event.
    Empty,
    /// `leaf_event_id` names no event of the log.
    Dangling(String),
}

/// Where a walk from an event towards its root stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathFault {
    /// The walk came back to the event at this position.
    Cycle(usize),
    /// The event at this position has a parent id naming no event.
    Dangling(usize, String),
}

/// One root-to-tip path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branch {
    /// Positions of the events, root first.
    pub events: Vec<usize>,
    /// Why the walk stopped before a root, if it did.
    pub fault: Option<PathFault>,
}

impl Branch {
    /// The tip (last event), if any.
    pub fn tip(&self) -> Option<usize> {
        self.events.last().copied()
    }
}

/// The tree over a conversation's events (positions = the order given).
#[derive(Debug, Clone)]
pub struct EventTree {
    parents: Vec<Parent>,
    head: Head,
    active: Branch,
    /// Whether each event becomes the head when appended.
    becomes_head: Vec<bool>,
}

/// What the state file says about the head.
#[derive(Debug, Clone, Default)]
pub struct HeadState<'s> {
    /// `leaf_event_id`.
    pub leaf_event_id: Option<&'s str>,
    /// `head_is_empty`.
    pub head_is_empty: bool,
}

impl EventTree {
    /// Builds the tree: effective parents, the head by `version`'s rule,
    /// and the active branch.
    pub fn build(events: &[ViewEvent<'_>], state: &HeadState<'_>, version: SdkVersion) -> Self {
        let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(events.len());
        for (pos, e) in events.iter().enumerate() {
            by_id.entry(e.file_id).or_insert(pos);
        }
        let parents = events
            .iter()
            .enumerate()
            .map(|(pos, e)| match &e.parent {
                ParentField::Root => Parent::Root,
                ParentField::Id(id) => match by_id.get(id.as_ref()) {
                    Some(&p) => Parent::Explicit(p),
                    None => Parent::Dangling(id.to_string()),
                },
                ParentField::Absent if pos == 0 => Parent::Root,
                ParentField::Absent => Parent::Legacy(pos - 1),
            })
            .collect();
        let becomes_head = events
            .iter()
            .map(|e| e.kind.as_ref().is_none_or(|k| k.becomes_head()))
            .collect();
        let head = resolve_head(events, state, version, &by_id);
        let mut tree = EventTree {
            parents,
            head,
            active: Branch {
                events: Vec::new(),
                fault: None,
            },
            becomes_head,
        };
        tree.active = match tree.head {
            Head::Event(h) => tree.path_to_root(h),
            _ => Branch {
                events: Vec::new(),
                fault: None,
            },
        };
        tree
    }

    /// The effective parent of the event at `pos`.
    pub fn parent(&self, pos: usize) -> Option<&Parent> {
        self.parents.get(pos)
    }

    /// The effective parents, by position.
    pub fn parents(&self) -> &[Parent] {
        &self.parents
    }

    /// The head.
    pub fn head(&self) -> &Head {
        &self.head
    }

    /// The active branch: root to head.
    pub fn active_branch(&self) -> &Branch {
        &self.active
    }

    /// The path from the root to the event at `pos` (`path_to_root`,
    /// reversed), stopping at a cycle or a dangling parent.
    pub fn path_to_root(&self, pos: usize) -> Branch {
        let mut seen = vec![false; self.parents.len()];
        let mut out = Vec::new();
        let mut fault = None;
        let mut cur = Some(pos);
        while let Some(p) = cur {
            match seen.get_mut(p) {
                Some(s) if *s => {
                    fault = Some(PathFault::Cycle(p));
                    break;
                }
                Some(s) => *s = true,
                None => break,
            }
            out.push(p);
            cur = match self.parents.get(p) {
                Some(Parent::Explicit(q) | Parent::Legacy(q)) => Some(*q),
                Some(Parent::Dangling(id)) => {
                    fault = Some(PathFault::Dangling(p, id.clone()));
                    None
                }
                Some(Parent::Root) | None => None,
            };
        }
        out.reverse();
        Branch { events: out, fault }
    }

    /// Tips: events that no other event continues (state-update artifacts
    /// never count as a continuation, nor as a tip, since they never become
    /// the head).
    pub fn tips(&self) -> Vec<usize> {
        let mut continued = vec![false; self.parents.len()];
        for (pos, p) in self.parents.iter().enumerate() {
            if self.is_state_update(pos) {
                continue;
            }
            if let Some(q) = p.position()
                && q != pos
                && let Some(c) = continued.get_mut(q)
            {
                *c = true;
            }
        }
        (0..self.parents.len())
            .filter(|&p| !continued[p] && !self.is_state_update(p))
            .collect()
    }

    /// Only state updates are never the head: a `ConversationErrorEvent`
    /// becomes the head when appended (SDK 1.31+
    /// `ConversationState.append_event`; the Go reference's
    /// `IsArtifact` says otherwise, and the SDK wins).
    fn is_state_update(&self, pos: usize) -> bool {
        self.becomes_head.get(pos) == Some(&false)
    }

    /// Every branch: the path from the root to each tip, tips in log order.
    pub fn branches(&self) -> Vec<Branch> {
        self.tips()
            .into_iter()
            .map(|t| self.path_to_root(t))
            .collect()
    }

    /// The branches whose tip is not on the active branch (left by
    /// `navigate_to`, or by a head that names an older event).
    pub fn abandoned_branches(&self) -> Vec<Branch> {
        let mut on_active = vec![false; self.parents.len()];
        for &p in &self.active.events {
            if let Some(x) = on_active.get_mut(p) {
                *x = true;
            }
        }
        self.branches()
            .into_iter()
            .filter(|b| b.tip().is_some_and(|t| !on_active[t]))
            .collect()
    }

    /// The cycles of the parent relation, each as the positions on it in
    /// walk order starting from its smallest position.
    pub fn cycles(&self) -> Vec<Vec<usize>> {
        // 0 = unvisited, 1 = on the current walk, 2 = finished.
        let n = self.parents.len();
        let mut state = vec![0u8; n];
        let mut cycles = Vec::new();
        // One walk at a time, in one buffer.
        let mut walk = Vec::new();
        for start in 0..n {
            if state[start] != 0 {
                continue;
            }
            walk.clear();
            let mut cur = Some(start);
            while let Some(p) = cur {
                match state.get(p).copied() {
                    Some(0) => {
                        state[p] = 1;
                        walk.push(p);
                        cur = self.parents.get(p).and_then(Parent::position);
                    }
                    Some(1) => {
                        if let Some(at) = walk.iter().position(|&w| w == p) {
                            let mut cycle: Vec<usize> = walk.get(at..).unwrap_or(&[]).to_vec();
                            if let Some(min_at) = cycle
                                .iter()
                                .enumerate()
                                .min_by_key(|(_, v)| **v)
                                .map(|(i, _)| i)
                            {
                                cycle.rotate_left(min_at);
                            }
                            cycles.push(cycle);
                        }
                        cur = None;
                    }
                    _ => cur = None,
                }
            }
            for &p in &walk {
                state[p] = 2;
            }
        }
        cycles
    }

    /// Events whose `parent_id` names no event: (position, the id).
    pub fn dangling(&self) -> Vec<(usize, &str)> {
        self.parents
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match p {
                Parent::Dangling(id) => Some((i, id.as_str())),
                _ => None,
            })
            .collect()
    }
}

fn resolve_head(
    events: &[ViewEvent<'_>],
    state: &HeadState<'_>,
    version: SdkVersion,
    by_id: &HashMap<&str, usize>,
) -> Head {
    if let Some(leaf) = state.leaf_event_id {
        return match by_id.get(leaf) {
            Some(&p) => Head::Event(p),
            None => Head::Dangling(leaf.to_owned()),
        };
    }
    if state.head_is_empty || events.is_empty() {
        return Head::Empty;
    }
    if version >= SdkVersion::V1_35_0 {
        events
            .iter()
            .rposition(|e| !e.kind.as_ref().is_some_and(|k| k.is_artifact()))
            .map_or(Head::Empty, Head::Event)
    } else {
        let last = events.len() - 1;
        match events.get(last).map(|e| &e.parent) {
            Some(ParentField::Absent) => Head::Event(last),
            _ if version < SdkVersion::V1_31_0 => Head::Event(last),
            _ => Head::Empty,
        }
    }
}
