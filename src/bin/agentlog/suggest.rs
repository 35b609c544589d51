//! "Did you mean": the names close to one that is not there.
//!
//! Close is: the same name but for ASCII case, one holding the other, or
//! within an edit distance (characters inserted, removed or changed) of a
//! third of the name's length (at least 2).

/// How many names a suggestion lists.
const MAX: usize = 5;

/// The names of `candidates` close to `given` (see the module docs), the
/// closest first, at most five.
pub fn close<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let g: Vec<char> = given.to_lowercase().chars().collect();
    let limit = (g.len() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter(|c| *c != given)
        .filter_map(|c| {
            let lower = c.to_lowercase();
            let cc: Vec<char> = lower.chars().collect();
            let d = distance(&g, &cc);
            let holds = !g.is_empty() && {
                let gl: String = g.iter().collect();
                lower.contains(&gl) || gl.contains(&lower)
            };
            (d <= limit || holds).then_some((d, c))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(MAX).map(|(_, c)| c).collect()
}

/// `"; close names: a, b"`, or nothing when none is close.
pub fn hint<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let names = close(given, candidates);
    if names.is_empty() {
        String::new()
    } else {
        format!("; close names: {}", names.join(", "))
    }
}

/// The edit distance of two strings of characters.
fn distance(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let change = prev[j] + usize::from(ca != cb);
            row[j + 1] = change.min(prev[j + 1] + 1).min(row[j] + 1);
        }
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_first() {
        let names = [
            "weekly-report",
            "weekly-reports",
            "daily",
            "Weekly-Report2",
            "zzz",
        ];
        assert_eq!(
            close("weekly-reprot", names),
            ["weekly-report", "Weekly-Report2", "weekly-reports"]
        );
        assert_eq!(close("week", names).len(), 3, "held in the longer names");
        assert!(close("qqqqqqqq", names).is_empty());
        assert_eq!(hint("dialy", names), "; close names: daily");
        assert_eq!(distance(&['a', 'b'], &['b', 'a']), 2);
    }
}
