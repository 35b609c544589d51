//! The follower's file-system watch: inotify directly on Linux
//! ([`super::dir_watch`], what it keeps per directory is small), the
//! `notify` crate elsewhere (FSEvents, kqueue, ReadDirectoryChangesW).

use std::io;
use std::path::Path;
use std::time::Instant;

use super::Wake;

/// A recursive watch of the followed roots.
#[derive(Debug)]
pub(super) struct Watch {
    #[cfg(target_os = "linux")]
    inner: super::dir_watch::DirWatch,
    #[cfg(not(target_os = "linux"))]
    inner: notify_watch::NotifyWatch,
}

impl Watch {
    /// A watch of nothing yet; an error when the system gives no events.
    pub(super) fn new() -> io::Result<Watch> {
        #[cfg(target_os = "linux")]
        let inner = super::dir_watch::DirWatch::new()?;
        #[cfg(not(target_os = "linux"))]
        let inner = notify_watch::NotifyWatch::new()?;
        Ok(Watch { inner })
    }

    /// Watches `root` and everything under it.
    pub(super) fn add(&mut self, root: &Path) -> io::Result<()> {
        self.inner.add_root(root)
    }

    /// The next report, waiting until `deadline` (`None`: for as long as
    /// it takes); `Ok(None)` when the deadline passed first; an error when
    /// the watch stopped.
    pub(super) fn next(&mut self, deadline: Option<Instant>) -> io::Result<Option<Wake>> {
        self.inner.next(deadline)
    }
}

#[cfg(not(target_os = "linux"))]
mod notify_watch {
    use std::io;
    use std::path::Path;
    use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
    use std::time::Instant;

    use notify::{RecursiveMode, Watcher};

    use super::Wake;

    /// `notify`'s recommended watcher, its events sent over a channel.
    pub(super) struct NotifyWatch {
        watcher: notify::RecommendedWatcher,
        rx: Receiver<Wake>,
    }

    impl std::fmt::Debug for NotifyWatch {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("NotifyWatch").finish_non_exhaustive()
        }
    }

    impl NotifyWatch {
        pub(super) fn new() -> io::Result<NotifyWatch> {
            let (tx, rx) = channel();
            let handler = move |res: notify::Result<notify::Event>| {
                // Access events (a reader's open and close, ours
                // included) change nothing.
                let wake = match res {
                    Ok(e) if matches!(e.kind, notify::EventKind::Access(_)) => return,
                    Ok(e) if e.need_rescan() || e.paths.is_empty() => Wake::Rescan,
                    Ok(e) => Wake::Paths(e.paths),
                    Err(_) => Wake::Rescan,
                };
                let _ = tx.send(wake);
            };
            let watcher = notify::recommended_watcher(handler).map_err(io::Error::other)?;
            Ok(NotifyWatch { watcher, rx })
        }

        pub(super) fn add_root(&mut self, root: &Path) -> io::Result<()> {
            self.watcher
                .watch(root, RecursiveMode::Recursive)
                .map_err(io::Error::other)
        }

        pub(super) fn next(&mut self, deadline: Option<Instant>) -> io::Result<Option<Wake>> {
            let got = match deadline {
                None => self.rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(d) => self
                    .rx
                    .recv_timeout(d.saturating_duration_since(Instant::now())),
            };
            match got {
                Ok(w) => Ok(Some(w)),
                Err(RecvTimeoutError::Timeout) => Ok(None),
                Err(RecvTimeoutError::Disconnected) => {
                    Err(io::Error::other("the file-system watch stopped"))
                }
            }
        }
    }
}
