#![doc = include_str!("README.md")]

mod detect;
mod export;
mod fsops;
mod glibc_tz;
#[cfg(feature = "html")]
mod highlight;
mod journal;
mod layout;
mod list;
mod migrate;
mod names;
mod origin;
mod py;
mod recover;
mod save;
mod schema;
mod session;
mod store;
mod tail;
pub mod time;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use detect::is_sessions_dir;
pub use export::export_markdown_text;
#[cfg(feature = "html")]
pub use export::{render_html, render_html_themed};
pub use fsops::{HookAction, WriteHook, WriteStep};
pub use journal::PENDING_NAME;
pub use layout::LayoutProblem;
pub use list::{SessionEntry, SessionList, Skipped};
pub use migrate::{MigrationPlan, MigrationSummary};
pub use names::fs_safe_name;
pub use origin::{FileStamp, Origin};
pub use recover::Recovery;
pub use save::{SaveAll, SaveError, SaveNote};
pub use session::{ChatSession, TokenStats};
pub use store::{
    CrashSignal, LoadError, LoadedChatLog, LoadedSessionMetadata, RecordKind,
    canonical_record_locator,
};
pub use tail::{
    RecoveryChoice, TailKind, TailReport, UnknownChoice, VARIABLE_CONTEXT_SENTINEL,
    apply_tail_recovery, detect_incomplete_tail, recovery_indexes,
};
pub use time::{Clock, LocalDateTime, ManualClock, SystemClock, TimeZone};

/// The sessions root when neither an explicit directory nor
/// [`SESSIONS_DIR_ENV`] names one.
pub const DEFAULT_SESSIONS_DIR: &str = "oc_chat/sessions";

/// The environment variable that relocates the sessions root.
pub const SESSIONS_DIR_ENV: &str = "OC_CHAT_SESSIONS_DIR";

/// The reserved directory holding archived snapshots: `archive/{name}/`.
pub const ARCHIVE_DIR_NAME: &str = "archive";

/// The reserved directory holding pre-session-system orphan chat logs.
pub const LEGACY_DIR_NAME: &str = "legacy";

/// The clean-exit marker file in the sessions root.
pub const CLEAN_EXIT_MARKER_NAME: &str = ".oc_chat_clean_exit";

/// What a name that maps to nothing usable becomes.
pub const FS_SAFE_PLACEHOLDER: &str = "unnamed-session";

/// The sessions root: `explicit` if given, else the value of
/// [`SESSIONS_DIR_ENV`] if set (even empty, as `persistence.py` reads it), else
/// [`DEFAULT_SESSIONS_DIR`].
pub fn sessions_dir(explicit: Option<&Path>) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    match std::env::var_os(SESSIONS_DIR_ENV) {
        Some(v) => PathBuf::from(v),
        None => PathBuf::from(DEFAULT_SESSIONS_DIR),
    }
}

/// An OC Chat sessions store: its root directory, the clock and time zone
/// its stamps are made with, and an optional write hook (fault injection).
///
/// Every operation of `persistence.py`'s module is a method here; `sessions_dir`
/// arguments of `persistence.py` are the store's root. Relative roots and relative
/// path arguments are taken relative to the process's working directory,
/// as `persistence.py` takes them.
#[derive(Clone)]
pub struct SessionStore {
    dir: PathBuf,
    clock: Arc<dyn Clock>,
    tz: TimeZone,
    hook: Option<WriteHook>,
}

impl fmt::Debug for SessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionStore")
            .field("dir", &self.dir)
            .field("clock", &self.clock)
            .field("tz", &self.tz)
            .field("hook", &self.hook.is_some())
            .finish()
    }
}

impl SessionStore {
    /// A store rooted at `dir`, with the system clock and the local time
    /// zone ([`TimeZone::local`]). Nothing is created until something is
    /// written.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        SessionStore {
            dir: dir.into(),
            clock: Arc::new(SystemClock),
            tz: TimeZone::local(),
            hook: None,
        }
    }

    /// A store rooted where [`sessions_dir`] says: `explicit`, else the
    /// environment variable, else the default.
    pub fn locate(explicit: Option<&Path>) -> Self {
        Self::new(sessions_dir(explicit))
    }

    /// The same store with another clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The same store formatting stamps in another time zone.
    pub fn with_time_zone(mut self, tz: TimeZone) -> Self {
        self.tz = tz;
        self
    }

    /// The same store calling `hook` before every step of every write (see
    /// [`WriteStep`]): tests use it to fail or "crash" at each step.
    pub fn with_write_hook(mut self, hook: WriteHook) -> Self {
        self.hook = Some(hook);
        self
    }

    /// The sessions root.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The time zone stamps are made in.
    pub fn time_zone(&self) -> &TimeZone {
        &self.tz
    }

    /// The clock's current local time.
    pub(crate) fn now_local(&self) -> LocalDateTime {
        self.tz.local_of(self.clock.now())
    }

    pub(crate) fn io(&self) -> fsops::Io<'_> {
        fsops::Io {
            hook: self.hook.as_ref(),
        }
    }

    /// `Path(base) / fs_safe_name(name)`: where a session's directory is.
    pub fn session_dir(&self, name: &str) -> PathBuf {
        py::join(&self.dir, fs_safe_name(name))
    }

    /// `archive/{fs_safe_name(name)}` under the root.
    pub fn archive_dir(&self, name: &str) -> PathBuf {
        py::join(&py::join(&self.dir, ARCHIVE_DIR_NAME), fs_safe_name(name))
    }
}
