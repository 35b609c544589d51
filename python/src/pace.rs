//! When a live iterator looks at its stores again and when it ends (the
//! `follow` iterators of both kinds of store).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use agentlog::follow::Follower;
use pyo3::prelude::*;

use crate::changes::poisoned;

/// A follow's pace: a scan is taken a change at a time; between scans, it
/// waits for the follower to see something; it ends after an idle timeout.
pub struct Pace {
    idle_timeout: Option<Duration>,
    /// When the last change was handed out (or the first call came).
    last: Instant,
    /// Whether the first call came.
    started: bool,
    /// Whether a scan is under way (or due at once).
    scanning: bool,
}

impl Pace {
    /// Ending after `idle_timeout` seconds with nothing new (`None`: never).
    pub fn new(idle_timeout: Option<f64>) -> Pace {
        Pace {
            idle_timeout: idle_timeout.map(Duration::from_secs_f64),
            last: Instant::now(),
            started: false,
            scanning: true,
        }
    }

    /// The next change: `step` hands out the next change of the scan under
    /// way (starting one when none is) and `None` at its end. A scan starts
    /// at the first call, and again once `follower` saw something (waited
    /// for with the GIL released, in slices that let Ctrl-C through);
    /// `None` once nothing came for the idle timeout. A scan that fails is
    /// the error, and the next call waits before the next scan.
    pub fn next<T>(
        &mut self,
        py: Python<'_>,
        follower: &Mutex<Follower>,
        mut step: impl FnMut(Python<'_>) -> PyResult<Option<T>>,
    ) -> PyResult<Option<T>> {
        if !self.started {
            self.started = true;
            self.last = Instant::now();
        }
        loop {
            if self.scanning {
                match step(py) {
                    Ok(Some(c)) => {
                        self.last = Instant::now();
                        return Ok(Some(c));
                    }
                    Ok(None) => self.scanning = false,
                    Err(e) => {
                        self.scanning = false;
                        return Err(e);
                    }
                }
            }
            let mut slice = Duration::from_millis(200);
            if let Some(t) = self.idle_timeout {
                let idle = self.last.elapsed();
                if idle >= t {
                    return Ok(None);
                }
                slice = slice.min(t - idle);
            }
            {
                let mut guard = follower.lock().map_err(|_| poisoned())?;
                let follower = &mut *guard;
                py.detach(|| follower.wait(Some(slice)));
            }
            py.check_signals()?;
            self.scanning = true;
        }
    }
}
