//! One human sentence for each problem the view reports
//! ([`ViewIssue`], [`EventProblem`], [`PathFault`]): what is wrong and where,
//! for error messages (never Rust's `Debug` form).

use std::fmt;

use super::{EventProblem, PathFault, ViewIssue};

impl fmt::Display for EventProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventProblem::Malformed {
                offset: Some(o),
                message,
            } => write!(f, "not JSON at byte {o}: {message}"),
            EventProblem::Malformed {
                offset: None,
                message,
            } => write!(f, "not JSON: {message}"),
            EventProblem::NotAnObject => f.write_str("a JSON value where an object was expected"),
            EventProblem::MissingMember(m) => {
                write!(f, "the member {m} is missing or of another type")
            }
        }
    }
}

impl fmt::Display for PathFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathFault::Cycle(i) => write!(f, "it comes back to event {i}"),
            PathFault::Dangling(i, id) => write!(f, "event {i}'s parent_id {id} names no event"),
        }
    }
}

impl fmt::Display for ViewIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ViewIssue::Event { index, problem } => write!(f, "event {index}: {problem}"),
            ViewIssue::BaseState(e) => write!(f, "base_state.json: {e}"),
            ViewIssue::Cycle(ix) => {
                f.write_str("the parents form a cycle through events ")?;
                for (n, i) in ix.iter().enumerate() {
                    if n > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{i}")?;
                }
                Ok(())
            }
            ViewIssue::DanglingParent { index, parent_id } => {
                write!(f, "event {index}: its parent_id {parent_id} names no event")
            }
            ViewIssue::DanglingHead(id) => write!(f, "the head {id} names no event"),
            ViewIssue::BrokenBranch(p) => write!(f, "the active branch stops early: {p}"),
            ViewIssue::ConflictingEvidence => {
                f.write_str("the files' version evidence contradicts itself")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_problem_is_one_sentence_without_debug_syntax() {
        let all = [
            ViewIssue::Event {
                index: 3,
                problem: EventProblem::Malformed {
                    offset: Some(9),
                    message: "expected a value".into(),
                },
            },
            ViewIssue::Event {
                index: 4,
                problem: EventProblem::MissingMember("id"),
            },
            ViewIssue::BaseState("not an object".into()),
            ViewIssue::Cycle(vec![1, 2]),
            ViewIssue::DanglingParent {
                index: 5,
                parent_id: "p".into(),
            },
            ViewIssue::DanglingHead("h".into()),
            ViewIssue::BrokenBranch(PathFault::Dangling(2, "x".into())),
            ViewIssue::ConflictingEvidence,
        ];
        for issue in &all {
            let s = issue.to_string();
            assert!(
                !s.contains('{') && !s.contains("Some(") && !s.contains('\n'),
                "{s}"
            );
        }
        assert_eq!(
            all[0].to_string(),
            "event 3: not JSON at byte 9: expected a value"
        );
        assert_eq!(
            all[3].to_string(),
            "the parents form a cycle through events 1, 2"
        );
    }
}
