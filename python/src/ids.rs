//! IDs given whole or by a unique prefix, case ignored, as the command
//! takes them (`show --id`, `view --branch`).

use std::collections::BTreeSet;
use std::path::Path;

use pyo3::PyErr;

use crate::errors::{Class, ambiguous, error};

/// The one candidate `given` names: equal to it, or the only one starting
/// with it (ASCII case ignored). `what` names the kind of thing in the
/// error; `place` the store or conversation looked in.
pub fn by_prefix<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    what: &str,
    place: &Path,
) -> Result<&'a str, PyErr> {
    let mut matching: BTreeSet<&'a str> = BTreeSet::new();
    let lower = given.to_ascii_lowercase();
    for c in candidates {
        if c == given {
            return Ok(c);
        }
        if !given.is_empty()
            && c.len() >= given.len()
            && c.get(..given.len())
                .is_some_and(|p| p.to_ascii_lowercase() == lower)
        {
            matching.insert(c);
        }
    }
    let mut it = matching.iter();
    match (it.next(), it.next()) {
        (Some(one), None) => Ok(one),
        (None, _) => Err(error(
            Class::NotFound,
            Some(place),
            format!("no {what} with ID {given} (nor one starting with it)"),
        )),
        (Some(_), Some(_)) => Err(ambiguous(
            Some(place),
            format!(
                "the ID prefix {given} names {} {what}s (give more of the ID)",
                matching.len()
            ),
            matching.iter().map(|s| (*s).to_owned()).collect(),
        )),
    }
}
