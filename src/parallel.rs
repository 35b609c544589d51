//! Ordered parallel scans with reused per-job state (feature `parallel`).
//!
//! A scan works on many inputs (conversation directories) on rayon's
//! thread pool and hands the results, in the inputs' order whatever the
//! scheduling, to a sink on the calling thread, a window of inputs at a
//! time, so that memory stays bounded by the window whatever the number of
//! inputs and the sink sees the first results early.
//!
//! Each job borrows a state (a reader with its buffers) from a free list
//! and gives it back when done, so buffers are reused across jobs and only
//! grow to the largest input: rayon calls a `map_init` initialiser once per
//! split of the work, far more often than once per thread, and a fresh
//! state would regrow every buffer (page faults that cost more than the
//! reading). [`Store::par_map`](crate::openhands::Store::par_map),
//! [`Store::par_for_each`](crate::openhands::Store::par_for_each) and the
//! `agentlog` command's scans are built on [`for_each_ordered`].

use std::sync::Mutex;

use rayon::prelude::*;

/// A state lent to one job, given back to the free list when dropped.
struct Lease<'p, S> {
    free: &'p Mutex<Vec<S>>,
    state: Option<S>,
}

impl<S> Drop for Lease<'_, S> {
    fn drop(&mut self) {
        if let (Some(s), Ok(mut free)) = (self.state.take(), self.free.lock()) {
            free.push(s);
        }
    }
}

/// Runs `work` on every input in parallel, each job with a state taken from
/// a free list (made with `new_state` when the list is empty, given back
/// after the job), and hands the results to `sink` on the calling thread in
/// the inputs' order, `window` inputs at a time (0: 16 per thread of
/// rayon's pool). Stops at the first error of `sink` and returns it; the
/// inputs of later windows are then not worked on.
pub fn for_each_ordered<I, S, T, E>(
    inputs: &[I],
    window: usize,
    new_state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &I) -> T + Sync,
    mut sink: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E>
where
    I: Sync,
    S: Send,
    T: Send,
{
    let window = if window == 0 {
        rayon::current_num_threads().max(1) * 16
    } else {
        window
    };
    let free: Mutex<Vec<S>> = Mutex::new(Vec::new());
    let lease = || Lease {
        free: &free,
        state: free.lock().ok().and_then(|mut v| v.pop()),
    };
    for chunk in inputs.chunks(window) {
        let results: Vec<T> = chunk
            .par_iter()
            .map_init(lease, |lease, input| {
                let state = lease.state.get_or_insert_with(&new_state);
                work(state, input)
            })
            .collect();
        for t in results {
            sink(t)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn results_in_order_states_reused_errors_stop() {
        let inputs: Vec<usize> = (0..1000).collect();
        let made = AtomicUsize::new(0);
        let mut seen = Vec::new();
        let r: Result<(), ()> = for_each_ordered(
            &inputs,
            64,
            || {
                made.fetch_add(1, Ordering::Relaxed);
                Vec::<usize>::new()
            },
            |buf, &i| {
                buf.push(i);
                i * 2
            },
            |t| {
                seen.push(t);
                Ok(())
            },
        );
        assert!(r.is_ok());
        assert_eq!(seen, inputs.iter().map(|i| i * 2).collect::<Vec<_>>());
        // States are reused: at most one per job of a window is ever alive,
        // and every later window takes them back from the free list.
        assert!(made.load(Ordering::Relaxed) <= 64);

        let mut count = 0;
        let r = for_each_ordered(
            &inputs,
            10,
            || (),
            |_, &i| i,
            |i| {
                count += 1;
                if i == 25 { Err(i) } else { Ok(()) }
            },
        );
        assert_eq!((r, count), (Err(25), 26));
    }
}
