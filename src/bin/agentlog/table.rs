//! Aligned tables for the human output, measured in display columns
//! (`unicode-width`: a CJK character or an emoji takes two, a combining
//! mark none, so NFC and NFD names align alike).
//!
//! A table wider than the terminal ([`crate::brief::columns`]) is fitted by
//! narrowing its widest column, one column at a time, until the rows fit:
//! every column is kept, and a cut cell keeps its start and its end with
//! `…` between (a path its store and its file, a name both of its ends).
//! Numbers, times and the like are never cut.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// How a column is laid out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Col {
    /// Left-aligned text that may be cut in the middle to fit.
    Text,
    /// Left-aligned, never cut (an ID prefix, a time).
    Fixed,
    /// Right-aligned, never cut (a count).
    Number,
}

/// The narrowest a text column is cut to (its header's width if wider).
const MIN_TEXT: usize = 8;

/// The display width of `s`.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// `s` cut to `max` display columns, its start and end kept with `…`
/// between (as many columns of each, the start taking the odd one).
pub fn fit_middle(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let room = max - 1;
    let (head_room, tail_room) = (room - room / 2, room / 2);
    let mut head = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > head_room {
            break;
        }
        used += w;
        head.push(c);
    }
    let mut tail: Vec<char> = Vec::new();
    let mut used = 0;
    for c in s.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > tail_room {
            break;
        }
        used += w;
        tail.push(c);
    }
    // A combining mark cut from its letter would stand alone.
    while tail.last().is_some_and(|c| c.width() == Some(0)) {
        tail.pop();
    }
    head.push('…');
    head.extend(tail.into_iter().rev());
    head
}

/// `s` padded with spaces to `w` display columns.
fn pad(s: &str, w: usize, right: bool) -> String {
    let fill = " ".repeat(w.saturating_sub(width(s)));
    if right {
        fill + s
    } else {
        format!("{s}{fill}")
    }
}

/// The lines of a table: the header, then one per row, columns two spaces
/// apart, fitted into `columns` display columns as the module says (when
/// the columns that cannot be cut leave room), trailing spaces trimmed.
pub fn lines(head: &[&str], kinds: &[Col], rows: &[Vec<String>], columns: usize) -> Vec<String> {
    let n = head.len();
    let mut w: Vec<usize> = head.iter().map(|h| width(h)).collect();
    for r in rows {
        for (i, cell) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(width(cell));
        }
    }
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * n.saturating_sub(1);
    let floor: Vec<usize> = head
        .iter()
        .zip(kinds)
        .zip(&w)
        .map(|((h, k), &natural)| match k {
            Col::Text => natural.min(MIN_TEXT.max(width(h))),
            _ => natural,
        })
        .collect();
    let mut excess = total(&w).saturating_sub(columns);
    while excess > 0 {
        // The widest column that can still give.
        let Some(i) = (0..n)
            .filter(|&i| w[i] > floor[i])
            .max_by_key(|&i| (w[i], std::cmp::Reverse(i)))
        else {
            break;
        };
        // Down to the next widest (or as far as needed), at least one.
        let next = (0..n)
            .filter(|&j| j != i)
            .map(|j| w[j])
            .filter(|&x| x < w[i])
            .max()
            .unwrap_or(0)
            .max(floor[i]);
        let give = (w[i] - next).clamp(1, excess);
        w[i] -= give;
        excess -= give;
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut l = String::new();
        for (i, cell) in cells.enumerate().take(n) {
            if i > 0 {
                l.push_str("  ");
            }
            let cell = if kinds[i] == Col::Text {
                fit_middle(cell, w[i])
            } else {
                cell.to_owned()
            };
            l.push_str(&pad(&cell, w[i], kinds[i] == Col::Number));
        }
        l.trim_end().to_owned()
    };
    let mut out = Vec::with_capacity(rows.len() + 1);
    out.push(line(&mut head.iter().copied()));
    for r in rows {
        out.push(line(&mut r.iter().map(String::as_str)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_and_combining_characters_are_measured_by_display_width() {
        assert_eq!(width("会议"), 4);
        assert_eq!(width("🚀"), 2);
        assert_eq!(width("Cafe\u{301}"), 4);
        assert_eq!(width("Café"), 4);
    }

    #[test]
    fn the_middle_is_cut_and_both_ends_kept() {
        assert_eq!(fit_middle("abcdefghij", 5), "ab…ij");
        assert_eq!(fit_middle("abc", 5), "abc");
        let cjk = fit_middle("会议记录项目计划书", 9);
        assert!(
            width(&cjk) <= 9 && cjk.starts_with("会议") && cjk.ends_with("划书"),
            "{cjk}"
        );
        // A combining mark is not left without its letter.
        let nfd = fit_middle("xxxxe\u{301}e\u{301}e\u{301}", 4);
        assert!(!nfd.contains("…\u{301}"), "{nfd:?}");
    }

    #[test]
    fn the_widest_column_gives_way_and_every_column_stays() {
        let rows = vec![vec![
            "openhands".to_owned(),
            "x".repeat(180),
            "12".to_owned(),
            "a/b/c/d".to_owned(),
        ]];
        let kinds = [Col::Fixed, Col::Text, Col::Number, Col::Text];
        let l = lines(&["FORMAT", "NAME", "N", "PATH"], &kinds, &rows, 60);
        for line in &l {
            assert!(width(line) <= 60, "{line}");
        }
        assert!(l[1].contains("openhands") && l[1].contains("12") && l[1].ends_with("a/b/c/d"));
        assert!(l[1].contains('…'));
    }
}
