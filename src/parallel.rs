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
//! `agentlog` command's scans are built on [`for_each_ordered`], or on
//! [`for_each_ordered_ahead`] when the inputs are directories to read ahead
//! of the readers on a cold page cache ([`crate::readahead`]).

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::readahead::{Ahead, ReadAhead};

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

/// Like [`for_each_ordered`] over directories, with `read_ahead`'s I/O
/// threads reading the next directories into the page cache ahead of the
/// jobs ([`ReadAhead::run`]). The jobs take the inputs of a window in their
/// order (each thread of the pool takes the next input not yet taken), so
/// that what is read ahead is what comes next. Read-ahead off: exactly
/// [`for_each_ordered`].
pub fn for_each_ordered_ahead<I, S, T, E>(
    inputs: &[I],
    window: usize,
    read_ahead: ReadAhead,
    new_state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &I) -> T + Sync,
    mut sink: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E>
where
    I: AsRef<Path> + Sync,
    S: Send,
    T: Send,
{
    if !read_ahead.is_on() {
        return for_each_ordered(inputs, window, new_state, work, sink);
    }
    let threads = rayon::current_num_threads().max(1);
    let window = if window == 0 { threads * 16 } else { window };
    let free: Mutex<Vec<S>> = Mutex::new(Vec::new());
    read_ahead.run(inputs, |ahead| {
        let mut start = 0;
        while start < inputs.len() {
            let end = inputs.len().min(start.saturating_add(window));
            let results = in_order(inputs, start..end, threads, ahead, &free, &new_state, &work);
            for t in results {
                sink(t)?;
            }
            start = end;
        }
        Ok(())
    })
}

/// The results of `work` on `inputs[range]`, each thread of the pool taking
/// the next input not yet taken, in the inputs' order.
fn in_order<I, S, T>(
    inputs: &[I],
    range: std::ops::Range<usize>,
    threads: usize,
    ahead: &Ahead<'_>,
    free: &Mutex<Vec<S>>,
    new_state: &(impl Fn() -> S + Sync),
    work: &(impl Fn(&mut S, &I) -> T + Sync),
) -> Vec<T>
where
    I: Sync,
    S: Send,
    T: Send,
{
    let next = AtomicUsize::new(range.start);
    let parts: Vec<Vec<(usize, T)>> = (0..threads.min(range.len()))
        .into_par_iter()
        .with_max_len(1)
        .map(|_| {
            let mut lease = Lease {
                free,
                state: free.lock().ok().and_then(|mut v| v.pop()),
            };
            let mut out = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(input) = inputs.get(i).filter(|_| i < range.end) else {
                    break;
                };
                ahead.begin(i);
                let state = lease.state.get_or_insert_with(new_state);
                out.push((i, work(state, input)));
            }
            out
        })
        .collect();
    let mut all: Vec<(usize, T)> = parts.into_iter().flatten().collect();
    all.sort_unstable_by_key(|p| p.0);
    all.into_iter().map(|p| p.1).collect()
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
