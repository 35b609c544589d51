//! Tests that change process-wide state: environment variables (`TZ`,
//! `TZDIR`, `OC_CHAT_SESSIONS_DIR`) and the working directory. Apart from
//! the `it` crate so that no other test reads that state while it changes;
//! here every test holds [`process_lock`] for its whole run, so they take
//! turns.

#[path = "../common/mod.rs"]
mod common;

mod occhat_cwd;
mod occhat_env;
mod occhat_oracle;
#[cfg(target_os = "linux")]
mod occhat_tz_glibc;

use std::sync::{Mutex, MutexGuard};

/// The lock every test of this binary holds while it runs.
fn process_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
