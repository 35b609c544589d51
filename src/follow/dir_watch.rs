//! The follower's file-system watch on Linux: inotify through the
//! `inotify` crate, one watch per directory under each root, new
//! directories watched as they appear.
//!
//! What it keeps is small, because a follower keeps it for every
//! directory of the store for as long as it runs: per watched directory,
//! its watch descriptor, its parent's and its name (24 bytes and the
//! name's), in a vector sorted by descriptor; a path is rebuilt from the
//! names when an event names the directory. The kernel's queue is read in
//! the caller's thread (no thread of its own): [`DirWatch::next`] waits on
//! the inotify descriptor with `poll(2)`.
//!
//! Guarantees: events of reads (open, access, close without writing) are
//! not asked for, so a scan does not wake the follower. When the kernel's
//! queue overflows, [`Wake::Rescan`] is reported and every root is walked
//! again, so that directories created while events were lost are watched.
//! A link to a directory is followed (once: links under a linked directory
//! are not), as the store's walk takes links to conversations.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Instant;

use inotify::{EventMask, Inotify, WatchMask};

use super::Wake;

/// What each directory is watched for: changes, not reads.
const MASK: WatchMask = WatchMask::ATTRIB
    .union(WatchMask::CREATE)
    .union(WatchMask::DELETE)
    .union(WatchMask::CLOSE_WRITE)
    .union(WatchMask::MODIFY)
    .union(WatchMask::MOVED_FROM)
    .union(WatchMask::MOVED_TO)
    .union(WatchMask::DELETE_SELF)
    .union(WatchMask::MOVE_SELF);

/// How many names a path is rebuilt from at most (a guard: the names form
/// a tree, never a cycle).
const MAX_DEPTH: usize = 4096;

/// One watched directory.
#[derive(Debug)]
struct Dir {
    /// Its watch descriptor.
    wd: i32,
    /// Its parent's, or 0 for a root (descriptors start at 1).
    parent: i32,
    /// Its name in its parent (empty for a root).
    name: Box<OsStr>,
}

/// A recursive watch of directory trees (see the [module docs](self)).
pub(super) struct DirWatch {
    inotify: Inotify,
    /// The roots: watch descriptor and path as given.
    roots: Vec<(i32, PathBuf)>,
    /// Every watched directory, sorted by descriptor.
    dirs: Vec<Dir>,
    /// The kernel's events are read into this.
    buf: Vec<u8>,
    /// What was read and not yet reported.
    pending: VecDeque<Wake>,
}

impl std::fmt::Debug for DirWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirWatch")
            .field("roots", &self.roots)
            .field("dirs", &self.dirs.len())
            .finish()
    }
}

impl DirWatch {
    /// An inotify instance watching nothing yet.
    pub(super) fn new() -> io::Result<DirWatch> {
        Ok(DirWatch {
            inotify: Inotify::init()?,
            roots: Vec::new(),
            dirs: Vec::new(),
            buf: vec![0; 16 * 1024],
            pending: VecDeque::new(),
        })
    }

    /// Watches `root` and every directory under it.
    pub(super) fn add_root(&mut self, root: &Path) -> io::Result<()> {
        let wd = self.inotify.watches().add(root, MASK)?;
        let wd = wd.get_watch_descriptor_id();
        self.roots.push((wd, root.to_path_buf()));
        self.put(Dir {
            wd,
            parent: 0,
            name: Box::default(),
        });
        if fs::metadata(root).is_ok_and(|m| m.is_dir()) {
            self.walk(root, wd, false)?;
        }
        self.dirs.shrink_to_fit();
        Ok(())
    }

    /// Records `d`, over what its descriptor named before.
    fn put(&mut self, d: Dir) {
        match self.dirs.binary_search_by_key(&d.wd, |x| x.wd) {
            Ok(i) => self.dirs[i] = d,
            Err(i) => self.dirs.insert(i, d),
        }
    }

    fn find(&self, wd: i32) -> Option<&Dir> {
        self.dirs
            .binary_search_by_key(&wd, |x| x.wd)
            .ok()
            .map(|i| &self.dirs[i])
    }

    /// Watches the directories under `dir` (watched as `wd`), depth first;
    /// `linked`: `dir` was reached through a link (links under it are not
    /// followed). Fails only when the watch limit is reached.
    fn walk(&mut self, dir: &Path, wd: i32, linked: bool) -> io::Result<()> {
        let mut stack = vec![(dir.to_path_buf(), wd, linked)];
        while let Some((path, wd, linked)) = stack.pop() {
            let Ok(rd) = fs::read_dir(&path) else {
                continue;
            };
            for e in rd.flatten() {
                let Ok(t) = e.file_type() else { continue };
                let link = t.is_symlink();
                if !(t.is_dir() || link && !linked && e.path().is_dir()) {
                    continue;
                }
                let child = e.path();
                if let Some(cwd) = self.watch_child(wd, &child, &e.file_name())? {
                    stack.push((child, cwd, linked || link));
                }
            }
        }
        Ok(())
    }

    /// Watches the directory `path`, named `name` in the directory watched
    /// as `parent`: its descriptor, to walk it; `None` when it is gone or
    /// is `parent` or one of its ancestors (a link back up).
    fn watch_child(&mut self, parent: i32, path: &Path, name: &OsStr) -> io::Result<Option<i32>> {
        let wd = match self.inotify.watches().add(path, MASK | WatchMask::ONLYDIR) {
            Ok(wd) => wd.get_watch_descriptor_id(),
            // The watch limit: the caller polls instead.
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => return Err(e),
            Err(_) => return Ok(None),
        };
        // Already watched under another name: moved (its move unseen), or
        // reached through a link. Named here, unless that makes a cycle.
        if let Some(d) = self.find(wd)
            && (d.parent != parent || *d.name != *name)
            && self.lineage(parent).any(|a| a == wd)
        {
            return Ok(None);
        }
        self.put(Dir {
            wd,
            parent,
            name: name.into(),
        });
        Ok(Some(wd))
    }

    /// `wd` and the descriptors of its ancestors, up to its root.
    fn lineage(&self, wd: i32) -> impl Iterator<Item = i32> + '_ {
        let mut at = Some(wd);
        std::iter::from_fn(move || {
            let wd = at?;
            at = self.find(wd).map(|d| d.parent).filter(|&p| p != 0);
            Some(wd)
        })
        .take(MAX_DEPTH)
    }

    /// The path of the directory watched as `wd`, under its root.
    fn path(&self, wd: i32) -> Option<PathBuf> {
        let mut names = Vec::new();
        let mut at = wd;
        for _ in 0..MAX_DEPTH {
            let d = self.find(at)?;
            if d.parent == 0 {
                let root = self.roots.iter().find(|(w, _)| *w == at)?;
                let mut p = root.1.clone();
                p.extend(names.iter().rev());
                return Some(p);
            }
            names.push(&*d.name);
            at = d.parent;
        }
        None
    }

    /// Forgets the directories watched as `wds` (sorted), and every
    /// directory whose path went through one of them.
    fn forget(&mut self, wds: &[i32]) {
        let before = self.dirs.len();
        self.dirs.retain(|d| wds.binary_search(&d.wd).is_err());
        if self.dirs.len() == before {
            return;
        }
        loop {
            let gone: Vec<i32> = self
                .dirs
                .iter()
                .filter(|d| d.parent != 0 && self.find(d.parent).is_none())
                .map(|d| d.wd)
                .collect();
            if gone.is_empty() {
                break;
            }
            self.dirs.retain(|d| !gone.contains(&d.wd));
        }
    }

    /// The directory named `name` in the one watched as `parent`.
    fn child(&self, parent: i32, name: &OsStr) -> Option<i32> {
        self.dirs
            .iter()
            .find(|d| d.parent == parent && *d.name == *name)
            .map(|d| d.wd)
    }

    /// Reads what the kernel queued, into `pending`; new directories are
    /// watched at once.
    fn read(&mut self) -> io::Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        let res = self.read_into(&mut buf);
        self.buf = buf;
        res
    }

    fn read_into(&mut self, buf: &mut [u8]) -> io::Result<()> {
        loop {
            let events = match self.inotify.read_events(buf) {
                Ok(ev) => ev,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let mut paths = Vec::new();
            let mut lost = false;
            let mut gone = Vec::new();
            for e in events {
                let wd = e.wd.get_watch_descriptor_id();
                if e.mask.contains(EventMask::Q_OVERFLOW) {
                    lost = true;
                    continue;
                }
                if e.mask.contains(EventMask::IGNORED) {
                    // The directory is gone (its removal was reported):
                    // forgotten with the others of this read, at once.
                    gone.push(wd);
                    continue;
                }
                let Some(dir) = self.path(wd) else { continue };
                let path = match e.name {
                    Some(n) => dir.join(n),
                    None => dir,
                };
                if e.mask.contains(EventMask::ISDIR)
                    && let Some(name) = e.name
                {
                    if e.mask.contains(EventMask::MOVED_FROM) {
                        // Moved away (a move within the roots names it
                        // again at its MOVED_TO).
                        if let Some(c) = self.child(wd, name) {
                            self.forget(&[c]);
                        }
                    } else if e.mask.intersects(EventMask::CREATE | EventMask::MOVED_TO)
                        && let Some(c) = self.watch_child(wd, &path, name)?
                    {
                        self.walk(&path, c, false)?;
                    }
                }
                paths.push(path);
            }
            gone.sort_unstable();
            self.forget(&gone);
            if lost {
                self.pending.push_back(Wake::Rescan);
                self.rewalk()?;
            }
            if !paths.is_empty() {
                self.pending.push_back(Wake::Paths(paths));
            }
        }
    }

    /// Walks every root again (after lost events): directories created
    /// meanwhile are watched.
    fn rewalk(&mut self) -> io::Result<()> {
        for (wd, root) in self.roots.clone() {
            if fs::metadata(&root).is_ok_and(|m| m.is_dir()) {
                self.walk(&root, wd, false)?;
            }
        }
        Ok(())
    }

    /// The next report, waiting until `deadline` (`None`: for as long as
    /// it takes); `Ok(None)` when the deadline passed first. An error: the
    /// watch cannot go on.
    pub(super) fn next(&mut self, deadline: Option<Instant>) -> io::Result<Option<Wake>> {
        loop {
            if let Some(w) = self.pending.pop_front() {
                return Ok(Some(w));
            }
            let timeout = match deadline {
                None => -1,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    // Rounded up: a wait never ends before the deadline.
                    let ms = left.as_micros().div_ceil(1000);
                    i32::try_from(ms).unwrap_or(i32::MAX)
                }
            };
            let mut pfd = libc::pollfd {
                fd: self.inotify.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid `pollfd`, the count says one.
            let n = unsafe { libc::poll(&mut pfd, 1, timeout) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                return Ok(None);
            }
            self.read()?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn paths(w: &mut DirWatch) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let end = Instant::now() + Duration::from_millis(200);
        while let Ok(Some(Wake::Paths(p))) = w.next(Some(end)) {
            out.extend(p);
        }
        out
    }

    #[test]
    fn names_paths_under_the_root_and_watches_new_directories() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("store");
        fs::create_dir_all(root.join("a/events")).unwrap();
        let mut w = DirWatch::new().unwrap();
        w.add_root(&root).unwrap();
        assert_eq!(w.dirs.len(), 3);
        fs::write(root.join("a/events/e1"), b"x").unwrap();
        assert!(paths(&mut w).contains(&root.join("a/events/e1")));
        // A new tree: watched, its files' events named.
        fs::create_dir_all(root.join("b/events")).unwrap();
        let got = paths(&mut w);
        assert!(got.contains(&root.join("b")), "{got:?}");
        fs::write(root.join("b/events/e1"), b"x").unwrap();
        assert!(paths(&mut w).contains(&root.join("b/events/e1")));
        // Renamed: named under the new name; removed: forgotten.
        fs::rename(root.join("b"), root.join("c")).unwrap();
        let _ = paths(&mut w);
        fs::write(root.join("c/events/e2"), b"x").unwrap();
        assert!(paths(&mut w).contains(&root.join("c/events/e2")));
        fs::remove_dir_all(root.join("c")).unwrap();
        let _ = paths(&mut w);
        assert_eq!(w.dirs.len(), 3);
        // Reads wake nothing.
        let _ = fs::read(root.join("a/events/e1")).unwrap();
        assert!(paths(&mut w).is_empty());
    }

    #[test]
    fn lost_events_are_a_rescan_and_new_directories_are_watched() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("store");
        fs::create_dir_all(root.join("a")).unwrap();
        let mut w = DirWatch::new().unwrap();
        w.add_root(&root).unwrap();
        // More events than the kernel queues (three a file: create,
        // modify, close), unread; then a directory made.
        let max: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(16384);
        for i in 0..max / 3 + 100 {
            fs::write(root.join("a").join(i.to_string()), b"x").unwrap();
        }
        // Its events are lost: only walking again finds it.
        fs::create_dir_all(root.join("b/c")).unwrap();
        let mut rescan = false;
        let end = Instant::now() + Duration::from_secs(10);
        while let Ok(Some(wake)) = w.next(Some(Instant::now() + Duration::from_millis(200))) {
            rescan |= matches!(wake, Wake::Rescan);
            if Instant::now() > end {
                break;
            }
        }
        assert!(rescan);
        fs::write(root.join("b/c/e"), b"x").unwrap();
        assert!(paths(&mut w).contains(&root.join("b/c/e")));
    }

    #[test]
    fn a_link_cycle_ends() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("store");
        fs::create_dir_all(root.join("a")).unwrap();
        std::os::unix::fs::symlink("..", root.join("a/up")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("a/abs")).unwrap();
        let mut w = DirWatch::new().unwrap();
        w.add_root(&root).unwrap();
        // The root and `a` (the links lead to the root: already watched).
        assert_eq!(w.dirs.len(), 2);
        fs::write(root.join("a/f"), b"x").unwrap();
        assert!(paths(&mut w).contains(&root.join("a/f")));
    }
}
