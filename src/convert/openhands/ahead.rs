//! `request_hash`es taken ahead. Each request ends with the same members
//! after `input` (the tool definitions, most of its bytes), hashed from a
//! copy of the running hash at each `response`; one hash chain alone leaves
//! the CPU's SHA unit idle between rounds, two side by side do not. So the
//! segment's `response`s are taken in pairs: at the first of a pair, the
//! request of the second is hashed too, from a copy of the running hash
//! grown by the items of the wire messages between, both finished together
//! ([`RequestHasher::hash_many`]).
//!
//! The items between are written once: their canonical forms are kept for
//! the emitter, which appends them without hashing them again, and at the
//! next `response` the copy becomes the path's running hash
//! ([`PathState::adopt`]) — only where the path's own running hash and the
//! items appended since stand at the same place (as many items and bytes
//! hashed); anywhere else the path hashes its items itself and the request
//! is hashed then, alone. The hashes are the ones the path's running hash
//! gives: the items between are the ones the emitter appends, from the
//! same wire messages, in the same order.

use std::collections::VecDeque;
use std::rc::Rc;

use crate::asf::RequestHasher;
use crate::openhands::view::WireShape;

use super::fold::PathState;
use super::items::shape_items;

/// One item of a wire message: its canonical form and, for a
/// `function_call`, its `call_id`.
pub(super) type Item = (Rc<[u8]>, Option<String>);

/// The next `response`'s request, hashed ahead.
#[derive(Debug)]
struct Taken {
    /// The `response`'s wire index.
    at: usize,
    hash: String,
    /// The running hash it was finished from.
    hasher: RequestHasher,
}

/// The hashes of a segment's requests, some taken ahead, and the items
/// written for them.
#[derive(Debug, Default)]
pub(super) struct Ahead {
    /// The wire indices of the segment's `response`s, ascending.
    responses: Vec<usize>,
    taken: Option<Taken>,
    /// The items of the wire messages from the last `response` hashed
    /// here up to the one taken ahead, by wire index, for the emitter.
    items: VecDeque<(usize, Vec<Item>)>,
    /// An item's canonical form being written.
    buf: Vec<u8>,
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

    /// The items of wire message `k` when they were written ahead (the
    /// emitter appends them unhashed); `None`: the emitter writes them and
    /// the running hash takes them.
    pub(super) fn items_of(&mut self, k: usize) -> Option<Vec<Item>> {
        while let Some((j, _)) = self.items.front() {
            match j.cmp(&k) {
                std::cmp::Ordering::Less => {
                    self.items.pop_front();
                }
                std::cmp::Ordering::Equal => return self.items.pop_front().map(|(_, i)| i),
                std::cmp::Ordering::Greater => return None,
            }
        }
        None
    }

    /// The `request_hash` of the `response` at wire index `k`, whose
    /// request is the path's running hash as it stands, the items of
    /// `wire[k]` not yet in it.
    pub(super) fn request_hash(
        &mut self,
        k: usize,
        st: &mut PathState,
        wire: &[WireShape<'_>],
    ) -> String {
        self.items.clear();
        if let Some(t) = self.taken.take()
            && t.at == k
            && st.adopt(t.hasher)
        {
            debug_assert_eq!(t.hash, st.hasher().hash(), "response {k}");
            return t.hash;
        }
        self.take_ahead(k, st, wire)
    }

    /// Hashes the request at `k` and, when the segment has a `response`
    /// after it, that one's too, keeping its hash and the items between:
    /// the requests are hashed in pairs, the first of each pair's
    /// `response` taking the second's ahead.
    fn take_ahead(&mut self, k: usize, st: &mut PathState, wire: &[WireShape<'_>]) -> String {
        let hasher = st.hasher();
        let next = self.responses[self.responses.partition_point(|&r| r <= k)..]
            .first()
            .copied()
            .filter(|&r| r < wire.len());
        let Some(next) = next else {
            return hasher.hash();
        };
        let mut ahead = hasher.clone();
        for (j, m) in wire.iter().enumerate().take(next).skip(k) {
            let mut items = Vec::new();
            let Ok(()) = shape_items(m, &mut self.buf, |c, call| {
                ahead.push_canonical(c);
                items.push((Rc::from(c), call.map(str::to_owned)));
                Ok::<(), std::convert::Infallible>(())
            });
            self.items.push_back((j, items));
        }
        let mut hashes = RequestHasher::hash_many(&[hasher, &ahead]).into_iter();
        let (now, later) = (hashes.next(), hashes.next());
        match (now, later) {
            (Some(now), Some(hash)) => {
                self.taken = Some(Taken {
                    at: next,
                    hash,
                    hasher: ahead,
                });
                now
            }
            _ => {
                self.items.clear();
                st.hasher().hash()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asf::{Appender, Settings};
    use crate::json::{Map, OwnedValue};

    fn appender() -> Appender {
        let mut h = Map::new();
        h.insert("id", OwnedValue::string("s".to_owned()));
        h.insert(
            "created_at",
            OwnedValue::string("2026-01-01T00:00:00Z".to_owned()),
        );
        Appender::trusted(h, Vec::new()).expect("header")
    }

    /// A path at its first `config` (model and instructions, no tools), and
    /// the items the tests append.
    fn path() -> (PathState, [Rc<[u8]>; 2]) {
        let config =
            OwnedValue::parse(br#"{"model":"m","instructions":"be brief"}"#).expect("json");
        let st = PathState::new(&config, None).expect("config");
        let items = [
            Rc::from(&br#"{"content":"one","role":"user","type":"message"}"#[..]),
            Rc::from(&br#"{"content":"two","role":"assistant","type":"message"}"#[..]),
        ];
        (st, items)
    }

    /// The hash of the config's request with `items`, hashed one by one.
    fn hashed(items: &[Rc<[u8]>]) -> String {
        let mut settings = Settings::default();
        settings.apply(
            &OwnedValue::parse(br#"{"model":"m","instructions":"be brief"}"#).expect("json"),
        );
        let mut h = RequestHasher::new(&settings).expect("settings");
        for i in items {
            h.push_canonical(i);
        }
        h.hash()
    }

    #[test]
    fn a_copy_is_adopted_only_where_the_path_and_its_unhashed_items_stand() {
        let mut a = appender();
        // The copy holds both items the path appended unhashed: adopted.
        let (mut st, items) = path();
        let mut ahead = st.hasher().clone();
        for i in &items {
            ahead.push_canonical(i);
            st.append_canonical_item(&mut a, "2026-01-01T00:00:00Z", i.clone(), None, None, false)
                .expect("append");
        }
        assert!(st.adopt(ahead));
        assert_eq!(st.hasher().hash(), hashed(&items));

        // The copy holds one of the two: not adopted, and the path hashes
        // both itself.
        let (mut st, items) = path();
        let mut short = st.hasher().clone();
        short.push_canonical(&items[0]);
        for i in &items {
            st.append_canonical_item(&mut a, "2026-01-01T00:00:00Z", i.clone(), None, None, false)
                .expect("append");
        }
        assert!(!st.adopt(short));
        assert_eq!(st.hasher().hash(), hashed(&items));

        // Items appended unhashed are hashed before one appended hashed,
        // and before the running hash is read.
        let (mut st, items) = path();
        st.append_canonical_item(
            &mut a,
            "2026-01-01T00:00:00Z",
            items[0].clone(),
            None,
            None,
            false,
        )
        .expect("append");
        st.append_canonical_item(
            &mut a,
            "2026-01-01T00:00:00Z",
            items[1].clone(),
            None,
            None,
            true,
        )
        .expect("append");
        assert_eq!(st.hasher().hash(), hashed(&items));
    }
}
