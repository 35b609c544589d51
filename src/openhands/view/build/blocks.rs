//! The blocked list the condensations are applied to: removal by ID and
//! insertion at a position in about `sqrt(n)` steps each, where the SDK's
//! plain list takes `n`.

use smallvec::SmallVec;

use super::*;

/// A sequence of entries with removal by ID and insertion at a position,
/// each in about `sqrt(n)` steps: the entries live in blocks of at most
/// `2 * BLOCK` handles, each block knowing how many of its entries are
/// still in the sequence; removal marks entries dead through an index by
/// ID.
#[derive(Default)]
pub(super) struct Blocks<'v> {
    entries: Vec<ViewEntry>,
    alive: Vec<bool>,
    /// The block (stable number) each entry is in.
    block_of: Vec<usize>,
    /// Blocks by stable number: entry handles in sequence order.
    blocks: Vec<Vec<usize>>,
    /// Live entries per block, by stable number.
    live: Vec<usize>,
    /// Stable block numbers in sequence order.
    order: Vec<usize>,
    /// Handles of the entries with each ID (live or not): one as a rule,
    /// held inline.
    by_id: HashMap<Cow<'v, str>, SmallVec<[usize; 1]>>,
    len: usize,
}

pub(super) const BLOCK: usize = 256;

impl<'v> Blocks<'v> {
    pub(super) fn add(&mut self, e: ViewEntry, id: Cow<'v, str>) -> usize {
        let h = self.entries.len();
        self.entries.push(e);
        self.alive.push(true);
        self.block_of.push(usize::MAX);
        self.by_id.entry(id).or_default().push(h);
        self.len += 1;
        h
    }

    pub(super) fn new_block(&mut self, at: usize, handles: Vec<usize>) -> usize {
        let b = self.blocks.len();
        let live = handles
            .iter()
            .filter(|&&h| self.alive.get(h).copied().unwrap_or(false))
            .count();
        for &h in &handles {
            if let Some(x) = self.block_of.get_mut(h) {
                *x = b;
            }
        }
        self.blocks.push(handles);
        self.live.push(live);
        self.order.insert(at.min(self.order.len()), b);
        b
    }

    /// Appends at the end.
    pub(super) fn push(&mut self, e: ViewEntry, id: Cow<'v, str>) {
        let h = self.add(e, id);
        let last = self.order.last().copied();
        match last {
            Some(b) if self.blocks.get(b).is_some_and(|v| v.len() < 2 * BLOCK) => {
                if let Some(v) = self.blocks.get_mut(b) {
                    v.push(h);
                }
                if let Some(l) = self.live.get_mut(b) {
                    *l += 1;
                }
                if let Some(x) = self.block_of.get_mut(h) {
                    *x = b;
                }
            }
            _ => {
                self.new_block(self.order.len(), vec![h]);
            }
        }
    }

    /// Inserts so that `k` live entries come before it (`k` clamped to the
    /// length, as Python's `list.insert`).
    pub(super) fn insert(&mut self, k: usize, e: ViewEntry, id: Cow<'v, str>) {
        let k = k.min(self.len);
        let h = self.add(e, id);
        // The block holding the k-th live entry (the first block for 0).
        let mut before = 0;
        let mut at = None;
        for (i, &b) in self.order.iter().enumerate() {
            let live = self.live.get(b).copied().unwrap_or(0);
            if k == 0 || before + live >= k {
                at = Some((i, b));
                break;
            }
            before += live;
        }
        let Some((i, b)) = at else {
            self.new_block(self.order.len(), vec![h]);
            return;
        };
        let alive = &self.alive;
        let Some(block) = self.blocks.get_mut(b) else {
            return;
        };
        // Just after the (k - before)-th live entry of the block.
        let mut need = k - before;
        let mut pos = 0;
        while need > 0 && pos < block.len() {
            if block
                .get(pos)
                .is_some_and(|&x| alive.get(x).copied().unwrap_or(false))
            {
                need -= 1;
            }
            pos += 1;
        }
        block.insert(pos, h);
        let big = block.len() > 2 * BLOCK;
        if let Some(l) = self.live.get_mut(b) {
            *l += 1;
        }
        if let Some(x) = self.block_of.get_mut(h) {
            *x = b;
        }
        if big {
            let tail = block.split_off(BLOCK);
            let moved = tail
                .iter()
                .filter(|&&x| self.alive.get(x).copied().unwrap_or(false))
                .count();
            if let Some(l) = self.live.get_mut(b) {
                *l -= moved;
            }
            self.new_block(i + 1, tail);
        }
    }

    /// Removes every entry with this ID.
    pub(super) fn forget(&mut self, id: &str) {
        let Some(handles) = self.by_id.remove(id) else {
            return;
        };
        for h in handles {
            if let Some(a) = self.alive.get_mut(h)
                && *a
            {
                *a = false;
                self.len -= 1;
                if let Some(l) = self.block_of.get(h).and_then(|&b| self.live.get_mut(b)) {
                    *l -= 1;
                }
            }
        }
    }

    pub(super) fn into_vec(self) -> Vec<ViewEntry> {
        let mut out = Vec::with_capacity(self.len);
        for b in self.order {
            for &h in self.blocks.get(b).map_or(&[][..], Vec::as_slice) {
                if self.alive.get(h).copied().unwrap_or(false)
                    && let Some(&e) = self.entries.get(h)
                {
                    out.push(e);
                }
            }
        }
        out
    }
}
