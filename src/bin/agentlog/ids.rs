//! IDs as people type and read them: taken by a unique prefix, as git
//! takes commit names ([`by_prefix`]), and shown shortened to the shortest
//! prefix that tells them apart ([`Shortener`]); `--json` always has them
//! whole.

use std::collections::BTreeSet;

use crate::out::{Fail, Res};

/// The fewest characters a shortened ID keeps.
pub const MIN_SHORT: usize = 8;

/// How many candidates an ambiguous prefix's error lists.
const MAX_LISTED: usize = 10;

/// The one candidate `given` names: the candidate equal to it, else the
/// only one starting with it (ASCII case ignored). `what` names the kind
/// of ID in messages ("event"), `place` where they were looked for. No
/// candidate, or several, is [`Fail::Problem`]: the message lists the
/// candidates the prefix names (up to ten).
pub fn by_prefix<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    what: &str,
    place: &str,
) -> Res<&'a str> {
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
        (None, _) => Err(Fail::Problem(format!(
            "{place}: no {what} with ID {given} (nor one starting with it)"
        ))),
        (Some(_), Some(_)) => {
            let n = matching.len();
            let mut listed: Vec<&str> = matching.iter().take(MAX_LISTED).copied().collect();
            if n > MAX_LISTED {
                listed.push("…");
            }
            Err(Fail::Problem(format!(
                "{place}: the ID prefix {given} names {n} {what}s: {} (give more of the ID)",
                listed.join(", ")
            )))
        }
    }
}

/// Shortens IDs to the shortest prefix (at least [`MIN_SHORT`] characters)
/// that tells every ID of a set apart.
#[derive(Debug, Clone, Copy)]
pub struct Shortener {
    len: usize,
}

impl Shortener {
    /// The shortener for this set of IDs.
    pub fn new<'a>(ids: impl IntoIterator<Item = &'a str>) -> Shortener {
        let mut sorted: Vec<&str> = ids.into_iter().collect();
        sorted.sort_unstable();
        sorted.dedup();
        let mut len = MIN_SHORT;
        for pair in sorted.windows(2) {
            let (a, b) = (pair[0].as_bytes(), pair[1].as_bytes());
            let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            len = len.max(common + 1);
        }
        Shortener { len }
    }

    /// `id`'s prefix (whole when it is short; cut at a character
    /// boundary).
    pub fn short<'a>(&self, id: &'a str) -> &'a str {
        if id.len() <= self.len {
            return id;
        }
        let mut end = self.len;
        while !id.is_char_boundary(end) {
            end += 1;
        }
        id.get(..end).unwrap_or(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_then_unique_prefix_then_ambiguous() {
        let ids = ["abcdef01", "abcdef02", "ffff0000"];
        assert_eq!(
            by_prefix("abcdef01", ids, "event", "x").ok(),
            Some("abcdef01")
        );
        assert_eq!(by_prefix("FF", ids, "event", "x").ok(), Some("ffff0000"));
        let Err(Fail::Problem(m)) = by_prefix("abc", ids, "event", "x") else {
            panic!("ambiguous prefix accepted");
        };
        assert!(m.contains("abcdef01, abcdef02"), "{m}");
        assert!(matches!(
            by_prefix("0", ids, "event", "x"),
            Err(Fail::Problem(_))
        ));
        assert!(matches!(
            by_prefix("", ids, "event", "x"),
            Err(Fail::Problem(_))
        ));
    }

    #[test]
    fn shortest_unique_prefix() {
        let s = Shortener::new(["1234567890aaxyz", "1234567890abxyz", "99"]);
        assert_eq!(s.short("1234567890aaxyz"), "1234567890aa");
        assert_eq!(s.short("99"), "99");
        assert_eq!(
            Shortener::new(["aaaaaaaaaaaa"]).short("aaaaaaaaaaaa"),
            "aaaaaaaa"
        );
    }
}
