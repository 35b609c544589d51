//! `request_hash`es taken ahead. Each request ends with the same members
//! after `input` (the tool definitions, most of its bytes), hashed from a
//! copy of the running hash at each `response`; one hash chain alone leaves
//! the CPU's SHA unit idle between rounds, two side by side do not. So at
//! a `response` the request of the segment's next `response` is hashed
//! too: the same running hash grown by the items of the wire messages
//! between, both finished together ([`RequestHasher::hash_many`]).
//!
//! A hash taken ahead is handed out only where the path's own running hash
//! has reached the same point (as many items and bytes hashed); anywhere
//! else the request is hashed then, alone. The hashes are the ones the
//! path's running hash gives: the items between are the ones the emitter
//! appends, from the same wire messages, in the same order.

use crate::asf::RequestHasher;
use crate::openhands::view::WireShape;

use super::items::shape_items;

/// The hashes of a segment's requests, some taken ahead.
#[derive(Debug, Default)]
pub(super) struct Ahead {
    /// The wire indices of the segment's `response`s, ascending.
    responses: Vec<usize>,
    /// A hash taken ahead: the `response`'s wire index, where the running
    /// hash then stands, and the hash.
    taken: Option<(usize, (usize, u64), String)>,
    /// An item's canonical form being written.
    item: Vec<u8>,
}

impl Ahead {
    /// For a segment whose `response`s are at these wire indices.
    pub(super) fn new(responses: impl IntoIterator<Item = usize>) -> Self {
        let mut responses: Vec<usize> = responses.into_iter().collect();
        responses.sort_unstable();
        Ahead {
            responses,
            ..Ahead::default()
        }
    }

    /// The `request_hash` of the `response` at wire index `k`, whose request
    /// is `hasher` as it stands, the items of `wire[k]` not yet in it.
    pub(super) fn request_hash(
        &mut self,
        k: usize,
        hasher: &RequestHasher,
        wire: &[WireShape<'_>],
    ) -> String {
        let here = hasher.position();
        if let Some((at, position, hash)) = self.taken.take()
            && at == k
            && position == here
        {
            debug_assert_eq!(hash, hasher.hash(), "response {k}");
            return hash;
        }
        let next = self.responses[self.responses.partition_point(|&r| r <= k)..]
            .first()
            .copied()
            .filter(|&r| r < wire.len());
        let Some(next) = next else {
            return hasher.hash();
        };
        let mut ahead = hasher.clone();
        for m in &wire[k..next] {
            let Ok(()) = shape_items(m, &mut self.item, |c, _| {
                ahead.push_canonical(c);
                Ok::<(), std::convert::Infallible>(())
            });
        }
        let mut hashes = RequestHasher::hash_many(&[hasher, &ahead]).into_iter();
        let (now, later) = (hashes.next(), hashes.next());
        if let Some(later) = later {
            self.taken = Some((next, ahead.position(), later));
        }
        now.unwrap_or_else(|| hasher.hash())
    }
}
