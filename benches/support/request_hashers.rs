//! Each `response`'s request in a session file as the running hash a
//! converter holds when it writes that response: the settings and the items
//! hashed, the members after `input` not yet. Requests with the same
//! settings are cloned from one hasher, as a converter's are along a path,
//! so `RequestHasher::hash_many` finishes them side by side. What is left to
//! hash is what writing (or checking) each `request_hash` must hash beyond
//! the items.

use agentlog::asf::{RequestHasher, Session};

/// The running hash of each `response`'s request in `file` (none for a file
/// that does not read, or a response whose context does not rebuild).
pub fn request_hashers_of(file: &[u8]) -> Vec<RequestHasher> {
    let Ok(s) = Session::read(file) else {
        return Vec::new();
    };
    // One hasher with no item per distinct settings (by the canonical form
    // of the request with no item), each response's cloned from it.
    let mut bases: Vec<(Vec<u8>, RequestHasher)> = Vec::new();
    let mut out = Vec::new();
    for e in s.entries().iter().filter(|e| e.request_hash.is_some()) {
        let Ok(context) = s.request_context(&e.id) else {
            continue;
        };
        let Ok(key) = agentlog::asf::canon::to_canonical(&context.settings.to_checkpoint()) else {
            continue;
        };
        let base = match bases.iter().position(|(k, _)| *k == key) {
            Some(i) => &bases[i].1,
            None => {
                let Ok(h) = RequestHasher::new(&context.settings) else {
                    continue;
                };
                bases.push((key, h));
                &bases[bases.len() - 1].1
            }
        };
        let mut h = base.clone();
        if context.items.iter().all(|i| h.push(i).is_ok()) {
            out.push(h);
        }
    }
    out
}
