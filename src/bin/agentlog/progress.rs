//! A progress bar on standard error, shown only when standard error is a
//! terminal and the work has already taken more than a moment.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bar being drawn, so that messages on standard error are written
/// around it ([`suspend`]).
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Runs `f` (which writes to standard error) with the bar, if one is drawn,
/// taken off the screen.
pub fn suspend(f: impl FnOnce()) {
    let bar = ACTIVE.lock().ok().and_then(|g| g.clone());
    match bar {
        Some(bar) => bar.suspend(f),
        None => f(),
    }
}

/// How long work runs before the bar appears.
const DELAY: Duration = Duration::from_millis(400);

/// A progress bar that stays hidden until [`DELAY`] has passed, and never
/// shows when standard error is not a terminal.
pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: AtomicBool,
}

impl Progress {
    /// A bar over `len` units of `what` (e.g. "conversations").
    pub fn new(len: u64, what: &str) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
            let template = format!("{{bar:40}} {{pos}}/{{len}} {what} ({{eta}} left)");
            if let Ok(style) = ProgressStyle::with_template(&template) {
                bar.set_style(style);
            }
            bar
        });
        Progress {
            bar,
            start: Instant::now(),
            shown: AtomicBool::new(false),
        }
    }

    /// Counts `n` units done.
    pub fn inc(&self, n: u64) {
        let Some(bar) = &self.bar else { return };
        if !self.shown.load(Ordering::Relaxed)
            && self.start.elapsed() >= DELAY
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            if let Ok(mut g) = ACTIVE.lock() {
                *g = Some(bar.clone());
            }
        }
        bar.inc(n);
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            if let Ok(mut g) = ACTIVE.lock() {
                *g = None;
            }
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // Also when the work stopped early (a closed pipe, an error).
        self.finish();
    }
}
