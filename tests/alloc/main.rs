//! Tests that measure the heap through a counting global allocator: no
//! allocation in steady state (`json`, `openhands_reread`,
//! `openhands_store`), bounded peaks (`event_budget`, `resources`). Apart
//! from the `it` crate because the allocator is the process's, and every
//! other test's allocations would count; here every test holds
//! [`measure_lock`] for its whole run, so that no other test allocates while
//! one measures.

#[path = "../common/mod.rs"]
mod common;

mod event_budget;
mod json;
mod openhands_reread;
mod openhands_store;
mod resources;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Forwards every call to the system allocator and counts: allocations
/// (`alloc`, `alloc_zeroed`, `realloc`) of every thread and of the thread
/// that asks, and the bytes held now and at the peak.
struct Counting;

/// Allocations of every thread.
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
/// Bytes held now.
static CURRENT: AtomicUsize = AtomicUsize::new(0);
/// The most bytes held since the last [`peak_of`] started.
static PEAK: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Allocations made by this thread while counting is on.
    static THREAD: Cell<Option<usize>> = const { Cell::new(None) };
}

fn counted() {
    ALLOCS.fetch_add(1, Ordering::Relaxed);
    let _ = THREAD.try_with(|c| {
        if let Some(n) = c.get() {
            c.set(Some(n + 1));
        }
    });
}

fn grew(by: usize) {
    let now = CURRENT.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// bookkeeping allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        counted();
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        counted();
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        counted();
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The lock every test of this binary holds while it runs.
fn measure_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// How many heap allocations `f` makes on this thread.
fn allocations<R>(f: impl FnOnce() -> R) -> (usize, R) {
    THREAD.with(|c| c.set(Some(0)));
    let r = f();
    (THREAD.with(|c| c.replace(None)).unwrap_or(0), r)
}

/// How many heap allocations every thread makes while `f` runs.
fn allocations_all_threads<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = ALLOCS.load(Ordering::SeqCst);
    let r = f();
    (ALLOCS.load(Ordering::SeqCst) - before, r)
}

/// The peak heap above the starting point while `f` runs, in bytes.
fn peak_of<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let base = CURRENT.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    let r = f();
    (PEAK.load(Ordering::SeqCst).saturating_sub(base), r)
}

/// The bytes held now.
fn heap_now() -> usize {
    CURRENT.load(Ordering::SeqCst)
}
