//! One conversation of the scan: what changed in it since its mark, told
//! with as few reads as the stamps allow.

use super::*;
use crate::openhands::checkpoint::{add256, stamps_term, sub256};

/// The stamps of a conversation's entries, taken before it is read.
pub(super) struct NowStamps {
    /// `events/`.
    pub(super) events_dir: Option<Stamp>,
    /// `subagents/`.
    pub(super) subagents_dir: Option<Stamp>,
    /// `base_state.json`.
    pub(super) state: Option<Stamp>,
    /// `meta.json`.
    pub(super) meta: Option<Stamp>,
}

/// Whether the last event file read is still the file read: the same
/// file, of the same size, and — when the checkpoint recorded its change
/// time — with the same modification and change times (a file rewritten in
/// place, even to the same size with its modification time put back, has
/// another change time). A version 1 checkpoint recorded no change time:
/// identity and size are what it can tell.
fn last_kept(was: &Stamp, now: &Stamp) -> bool {
    now.same_object(was)
        && now.size == was.size
        && (was.ctime.is_none() || (now.mtime_ns() == was.mtime_ns() && now.ctime == was.ctime))
}

impl Changes {
    /// Whether a stamp still stands for what the checkpoint recorded.
    pub(super) fn same(&self, old: Option<&Stamp>, now: Option<&Stamp>) -> bool {
        match (old, now) {
            (None, None) => true,
            (Some(a), Some(b)) => a == b && !self.since.racy(a),
            _ => false,
        }
    }

    pub(super) fn stat_or_none(path: &Path) -> Option<Stamp> {
        Stamp::stat(path).ok().flatten()
    }

    /// Whether a recorded conversation is unchanged, from stamps alone.
    /// `events_now` is the stamp of `events/` when it was taken here (it
    /// is taken once, and kept for the reading that follows).
    pub(super) fn unchanged(
        &self,
        old: &ConversationMark,
        path: &Path,
        dir: &Stamp,
        events_now: &mut Option<Option<Stamp>>,
    ) -> bool {
        if old.unsettled || !self.same(Some(&old.dir), Some(dir)) {
            return false;
        }
        let mut p = path.join(DIR_EVENTS);
        if old.events_dir.is_some() {
            let now = Self::stat_or_none(&p);
            *events_now = Some(now);
            if !self.same(old.events_dir.as_ref(), now.as_ref()) {
                return false;
            }
        }
        for r in &old.retry {
            p.push(&r.name);
            let ok = self.same(Some(&r.stamp), Self::stat_or_none(&p).as_ref());
            p.pop();
            if !ok {
                return false;
            }
        }
        // The last file read, where a writer writes: rewritten in place
        // (its change time moves whatever was done to its size and
        // modification time), it is looked at again.
        if let Some(last) = &old.last
            && !old.retry.iter().any(|r| r.index == last.index)
        {
            p.push(&last.name);
            let ok = self.same(Some(&last.stamp), Self::stat_or_none(&p).as_ref());
            p.pop();
            if !ok {
                return false;
            }
        }
        for (mark, name) in [(&old.state, FILE_BASE_STATE), (&old.meta, FILE_META)] {
            if let Some(j) = mark
                && !self.same(
                    Some(&j.stamp),
                    Self::stat_or_none(&path.join(name)).as_ref(),
                )
            {
                return false;
            }
        }
        if old.subagents_dir.is_some()
            && !self.same(
                old.subagents_dir.as_ref(),
                Self::stat_or_none(&path.join(DIR_SUBAGENTS)).as_ref(),
            )
        {
            return false;
        }
        true
    }

    /// The stamps of a conversation's entries before it is read. Where
    /// the conversation directory keeps a stamp the checkpoint trusts, its
    /// names are the checkpoint's: an entry the mark has none of is not
    /// there now either (a name made, removed or renamed in a directory
    /// changes its modification time), and is not looked up — as
    /// [`unchanged`](Self::unchanged) does not look it up.
    fn now_stamps(
        &self,
        old: Option<&ConversationMark>,
        path: &Path,
        dir: &Stamp,
        events_now: Option<Option<Stamp>>,
    ) -> NowStamps {
        let names_kept = old.filter(|o| self.same(Some(&o.dir), Some(dir)));
        let mut p = path.to_path_buf();
        let mut stamp = |had: Option<bool>, name: &str| {
            if had == Some(false) {
                return None;
            }
            p.push(name);
            let st = Self::stat_or_none(&p);
            p.pop();
            st
        };
        NowStamps {
            events_dir: match events_now {
                Some(st) => st,
                None => stamp(names_kept.map(|o| o.events_dir.is_some()), DIR_EVENTS),
            },
            subagents_dir: stamp(names_kept.map(|o| o.subagents_dir.is_some()), DIR_SUBAGENTS),
            state: stamp(names_kept.map(|o| o.state.is_some()), FILE_BASE_STATE),
            meta: stamp(names_kept.map(|o| o.meta.is_some()), FILE_META),
        }
    }

    /// The stamp of the event file `name` of index `index` of the
    /// conversation at `path`: what its `fstat` told when this scan read it
    /// whole, else a `stat` relative to the open `events/` (or by path).
    fn event_stamp(&self, path: &Path, index: u64, name: &str) -> Option<Stamp> {
        if let Some(s) = self.reader.read_stat(index) {
            return Some(Stamp::of_entry(s));
        }
        self.stat_event(path, name)
    }

    /// The SHA-256 of the bytes of the event file `name` of the
    /// conversation at `path`, read now; `None` when it cannot be read.
    fn last_bytes_digest(&self, path: &Path, name: &str) -> Option<[u8; 32]> {
        let mut buf = Vec::new();
        crate::source::read_into(&path.join(DIR_EVENTS).join(name), &mut buf).ok()?;
        Some(sha256(&buf))
    }

    /// A `stat` of the event file `name` of the conversation at `path`,
    /// relative to the open `events/` when the scan holds it.
    fn stat_event(&self, path: &Path, name: &str) -> Option<Stamp> {
        match self.reader.events_dir() {
            Some(d) => d
                .stat_at(std::ffi::OsStr::new(name))
                .ok()
                .flatten()
                .map(Stamp::of_entry),
            None => Self::stat_or_none(&path.join(DIR_EVENTS).join(name)),
        }
    }

    pub(super) fn push_subs(&mut self, task: &Task, names: &[String], id: &str) {
        for name in names.iter().rev() {
            let mut path = task.path.join(DIR_SUBAGENTS);
            path.push(name);
            let mut rel = join_rel(&task.rel, DIR_SUBAGENTS);
            rel.push(name);
            self.pending.push(Task {
                path,
                rel,
                depth: task.depth + 1,
                parent: Some(id.to_owned()),
            });
        }
    }

    /// Reads the conversation of `task` from index `from` on, taking the
    /// ID its state or meta holds; `Err` as the reader fails.
    pub(super) fn read(&mut self, task: &Task, from: u64) -> Result<Option<String>, ReadError> {
        self.reader.skip_below = from;
        let (mut state_id, mut meta_id) = (None, None);
        let r = self
            .reader
            .read_into_with(&task.path, &mut self.conv, |p, doc: &Document<'_>| {
                let id = || doc.root().get("id").and_then(|v| v.as_str()).map(hex_id);
                match p {
                    Parsed::State => state_id = id(),
                    Parsed::Meta => meta_id = id(),
                    Parsed::Event { .. } => {}
                }
            });
        self.reader.skip_below = 0;
        r?;
        Ok(state_id.or(meta_id))
    }

    /// Reads only the event files of the conversation of `task` from index
    /// `from` on (`events/` listed, nothing else opened); `false` when
    /// `events/` could not be opened or listed (the full read then tells
    /// why).
    pub(super) fn read_events_only(&mut self, task: &Task, from: u64) -> bool {
        self.reader.skip_below = from;
        let r = self.reader.read_events_into(&task.path, &mut self.conv);
        self.reader.skip_below = 0;
        r.is_ok()
    }

    /// Whether only `events/` of a recorded conversation needs reading:
    /// its directory holds the same names (a trusted stamp), and
    /// `base_state.json`, `meta.json` and `subagents/` are as recorded
    /// (trusted stamps, or absent then and now); a conversation with
    /// directories under `subagents/` that were not yet conversations
    /// lists `subagents/` again, so it is read whole.
    pub(super) fn events_only(&self, old: &ConversationMark, dir: &Stamp, now: &NowStamps) -> bool {
        let json_same = |mark: &Option<JsonMark>, st: &Option<Stamp>| match mark {
            Some(j) => self.same(Some(&j.stamp), st.as_ref()),
            None => st.is_none(),
        };
        self.same(Some(&old.dir), Some(dir))
            && old.events_dir.is_some()
            && now.events_dir.is_some()
            && json_same(&old.state, &now.state)
            && json_same(&old.meta, &now.meta)
            && self.same(old.subagents_dir.as_ref(), now.subagents_dir.as_ref())
            && (!old.unsettled || old.subagents_dir.is_none())
    }

    /// The conversation's ID: the one read, else the checkpoint's (a state
    /// caught half-written names none), else the directory's name.
    pub(super) fn id_of(&self, read: Option<String>, old: Option<&ConversationMark>) -> String {
        read.or_else(|| old.map(|o| o.id.clone()))
            .unwrap_or_else(|| self.conv.name().to_owned())
    }

    /// Feeds the names of the sequence's files `from..to`, each followed
    /// by a line break, to `h` (the mark's `names` digest is that of
    /// `0..next`), gathered in one buffer first (one call of the digest).
    pub(super) fn hash_names(&mut self, h: &mut Sha256Stream, from: u64, to: u64) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let files = self.conv.event_files().sequence();
        for f in files
            .skip(from as usize)
            .take(to.saturating_sub(from) as usize)
        {
            buf.extend_from_slice(f.name().as_bytes());
            buf.push(b'\n');
        }
        h.update(&buf);
        self.buf = buf;
    }

    /// The digest of the stamps of the files `0..to` for the new mark
    /// ([`ConversationMark::stamps`]): for an updated conversation (`old`),
    /// `before` (the old mark's, or what verifying found) with the terms of
    /// the old last file and of the retried ones replaced by their stamps
    /// now, and the new files' added; else every file's. Each file's stamp
    /// is the one the new mark records (its `last`, `retry`), else what the
    /// `fstat` of its read told (a `stat` where it was not read whole).
    /// `None` for an updated conversation whose old mark had none.
    fn stamps_digest(
        &self,
        task: &Task,
        old: Option<&ConversationMark>,
        before: Option<[u8; 32]>,
        (first_new, to): (u64, u64),
        (last, retry, old_last_now): (Option<&FileMark>, &[FileMark], Option<(u64, Stamp)>),
    ) -> Option<[u8; 32]> {
        let stamp_now = |i: u64, name: &str| -> Stamp {
            if let Some(l) = last.filter(|l| l.index == i) {
                return l.stamp;
            }
            if let Some(r) = retry.iter().find(|r| r.index == i) {
                return r.stamp;
            }
            if let Some((j, st)) = old_last_now
                && j == i
            {
                return st;
            }
            self.event_stamp(&task.path, i, name).unwrap_or_default()
        };
        let files = self.conv.event_files();
        let mut d = match old {
            Some(o) => {
                let mut d = before?;
                let mut again: Vec<&FileMark> = o.retry.iter().collect();
                if let Some(l) = &o.last
                    && !o.retry.iter().any(|r| r.index == l.index)
                {
                    again.push(l);
                }
                for f in again {
                    sub256(&mut d, &stamps_term(&f.name, &f.stamp));
                    add256(&mut d, &stamps_term(&f.name, &stamp_now(f.index, &f.name)));
                }
                d
            }
            None => [0; 32],
        };
        let from = if old.is_some() { first_new } else { 0 };
        for (i, f) in files
            .sequence()
            .enumerate()
            .skip(from as usize)
            .take(to.saturating_sub(from) as usize)
        {
            add256(
                &mut d,
                &stamps_term(f.name(), &stamp_now(i as u64, f.name())),
            );
        }
        Some(d)
    }

    /// With [`ScanOptions::verify_files`]: the digest of the stamps of the
    /// recorded conversation's files `0..o.next` as they are now
    /// ([`ConversationMark::stamps`]; the last file and the retried ones
    /// counted with the stamps the mark records, which the scan looks at
    /// on its own), when it is the mark's (or the mark has none: it is
    /// recorded now); `None` when a file changed, cannot be looked at, or
    /// the names are not the mark's — the conversation is then rewritten.
    /// `list`: `events/` is listed first (nothing read yet).
    pub(super) fn verify_stamps(
        &mut self,
        task: &Task,
        o: &ConversationMark,
        list: bool,
    ) -> Option<[u8; 32]> {
        if list {
            if !self.read_events_only(task, u64::MAX) {
                return None;
            }
            let mut h = Sha256Stream::default();
            self.hash_names(&mut h, 0, o.next);
            if (self.conv.event_files().len() as u64) < o.next || h.finish() != o.names {
                return None;
            }
        }
        let files = self.conv.event_files();
        if (files.len() as u64) < o.next {
            return None;
        }
        let mut sum = [0u8; 32];
        for (i, f) in files.sequence().take(o.next as usize).enumerate() {
            let i = i as u64;
            let recorded = o.retry.iter().find(|r| r.index == i).map(|r| r.stamp).or(o
                .last
                .as_ref()
                .filter(|l| l.index == i)
                .map(|l| l.stamp));
            let st = match recorded {
                Some(s) => s,
                None => self.stat_event(&task.path, f.name())?,
            };
            add256(&mut sum, &stamps_term(f.name(), &st));
        }
        match o.stamps {
            Some(d) if d != sum => None,
            _ => Some(sum),
        }
    }

    pub(super) fn process(&mut self, task: Task) -> ScanStep {
        if task.depth > MAX_SUBAGENT_DEPTH {
            return ScanStep::Fail(StoreError::TooDeep { path: task.path });
        }
        let old = self.since.conversations.get(&task.rel);
        crate::source::opens::stat();
        let dir = match fs::metadata(&task.path) {
            Ok(m) if m.is_dir() => Stamp::of(&m),
            Ok(_) => {
                if old.is_some() {
                    self.queue_gone(&task.rel, &task.path, task.parent.clone());
                }
                return ScanStep::Skip;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if old.is_some() {
                    self.queue_gone(&task.rel, &task.path, task.parent.clone());
                }
                return ScanStep::Skip;
            }
            Err(e) => {
                self.keep_old(&task.rel);
                return ScanStep::Fail(ReadError::io(&task.path, e).into());
            }
        };
        let mut kind = match &old {
            None => ChangeKind::New,
            Some(o) if !o.dir.same_object(&dir) => ChangeKind::Rewrite,
            Some(_) => ChangeKind::Updated,
        };
        let mut events_now = None;
        if kind == ChangeKind::Updated
            && let Some(o) = &old
            && self.unchanged(o, &task.path, &dir, &mut events_now)
        {
            let verified = match self.opts.verify_files {
                true => self.verify_stamps(&task, o, true).map(Some),
                false => Some(None),
            };
            match verified {
                // The stamps' digest recorded now (an older checkpoint's
                // mark had none).
                Some(Some(d)) if o.stamps != Some(d) => {
                    let m = ConversationMark {
                        stamps: Some(d),
                        ..o.clone()
                    };
                    self.new.conversations.insert(task.rel.clone(), &m);
                    self.since.conversations.remove(&task.rel);
                    self.push_subs(&task, &o.subagents, &o.id);
                    return ScanStep::Skip;
                }
                Some(_) => {
                    // Moved, not copied: a scan holds one mark of each
                    // conversation.
                    self.since
                        .conversations
                        .move_to(&task.rel, &mut self.new.conversations);
                    self.push_subs(&task, &o.subagents, &o.id);
                    return ScanStep::Skip;
                }
                // A file handed out changed in place.
                None => {
                    kind = ChangeKind::Rewrite;
                    events_now = None;
                }
            }
        }
        // Stamps before reading: a change while reading shows next time.
        let now = match kind {
            ChangeKind::Updated => self.now_stamps(old.as_ref(), &task.path, &dir, events_now),
            _ => self.now_stamps(None, &task.path, &dir, None),
        };
        let from = match (&old, kind) {
            (Some(o), ChangeKind::Updated) => o
                .retry
                .iter()
                .map(|r| r.index)
                .chain([o.next])
                .min()
                .unwrap_or(o.next),
            _ => 0,
        };
        // Only new event files to read: the rest is as recorded.
        let events_only = kind == ChangeKind::Updated
            && old
                .as_ref()
                .is_some_and(|o| self.events_only(o, &dir, &now))
            && self.read_events_only(&task, from);
        let read = if events_only {
            Ok(None)
        } else {
            self.read(&task, from)
        };
        let mut events_only = events_only;
        let (mut id, read_id) = match read {
            Ok(r) => (self.id_of(r.clone(), old.as_ref()), r),
            Err(ReadError::NoConversation { .. }) => {
                if old.is_some() {
                    self.queue_gone(&task.rel, &task.path, task.parent.clone());
                }
                return ScanStep::Skip;
            }
            Err(e) => {
                self.keep_old(&task.rel);
                return ScanStep::Fail(e.into());
            }
        };
        // Does the history still match? (The names' digest goes on to the
        // mark's.)
        let mut names = Sha256Stream::default();
        let mut names_to = 0u64;
        // The last file read before, as it is now (when looked at).
        let mut old_last_now: Option<(u64, Stamp)> = None;
        // The digest of the stamps of the files handed out before.
        let mut stamps_before = old.as_ref().and_then(|o| o.stamps);
        if kind == ChangeKind::Updated
            && let Some(o) = &old
        {
            let files = self.conv.event_files();
            let len = files.len() as u64;
            let mut ok = len >= o.next && read_id.as_ref().is_none_or(|r| *r == o.id);
            if ok && let Some(last) = &o.last {
                let name_now = files
                    .sequence()
                    .nth(last.index as usize)
                    .map(|f| f.name().to_owned());
                ok = name_now.as_deref() == Some(last.name.as_str()) && {
                    self.hash_names(&mut names, 0, o.next);
                    names_to = o.next;
                    names.clone().finish() == o.names
                };
                let retried = o.retry.iter().any(|r| r.index == last.index);
                if ok && !retried {
                    let st = self.stat_event(&task.path, &last.name);
                    ok = st.as_ref().is_some_and(|s| {
                        last_kept(&last.stamp, s)
                            || (s.same_object(&last.stamp)
                                && s.size == last.stamp.size
                                && o.last_sha256.is_some()
                                && self.last_bytes_digest(&task.path, &last.name) == o.last_sha256)
                    });
                    old_last_now = st.map(|s| (last.index, s));
                }
            }
            if ok && self.opts.verify_files {
                stamps_before = self.verify_stamps(&task, o, false);
                ok = stamps_before.is_some();
            }
            if !ok {
                kind = ChangeKind::Rewrite;
                events_only = false;
                names = Sha256Stream::default();
                names_to = 0;
                old_last_now = None;
                id = match self.read(&task, 0) {
                    Ok(r) => self.id_of(r, None),
                    Err(e) => {
                        self.keep_old(&task.rel);
                        return ScanStep::Fail(e.into());
                    }
                };
            }
        }
        let first_new = match (&old, kind) {
            (Some(o), ChangeKind::Updated) => o.next,
            _ => 0,
        };
        // The new events, up to one held back by the settle rule.
        let len = self.conv.event_files().len() as u64;
        let mut to = len;
        let mut retry: Vec<FileMark> = Vec::new();
        let mut repaired = Vec::new();
        let wall = SystemTime::now();
        for e in self.conv.events() {
            let i = e.index();
            let Some(err_name) = (!e.is_ok()).then(|| e.file_name()) else {
                if i < first_new
                    && let Some(o) = &old
                    && o.retry.iter().any(|r| r.index == i)
                {
                    repaired.push(i);
                }
                continue;
            };
            let st = self.event_stamp(&task.path, i, err_name);
            // Malformed when handed out, and its file changed since (still
            // malformed): handed out again with its bytes as they are now.
            if i < first_new
                && let Some(o) = &old
                && o.retry
                    .iter()
                    .any(|r| r.index == i && st.as_ref() != Some(&r.stamp))
            {
                repaired.push(i);
            }
            if i >= first_new
                && let Some(settle) = self.opts.settle
                && st
                    .as_ref()
                    .and_then(|s| {
                        let since = Duration::new(s.mtime.max(0).unsigned_abs(), s.mtime_nsec);
                        UNIX_EPOCH.checked_add(since)
                    })
                    .is_none_or(|m| wall.duration_since(m).map_or(true, |d| d < settle))
            {
                to = i;
                self.held += 1;
                if self.held_in.last() != Some(&self.cur_top) {
                    self.held_in.push(self.cur_top.clone());
                }
                break;
            }
            retry.push(FileMark {
                index: i,
                name: err_name.to_owned(),
                stamp: st.unwrap_or_default(),
            });
        }
        retry.retain(|r| r.index < to);
        let last = if to == 0 {
            None
        } else {
            self.conv
                .event_files()
                .sequence()
                .nth((to - 1) as usize)
                .map(|f| FileMark {
                    index: to - 1,
                    name: f.name().to_owned(),
                    stamp: match old_last_now {
                        Some((i, st)) if i == to - 1 => Some(st),
                        _ => self.event_stamp(&task.path, to - 1, f.name()),
                    }
                    .unwrap_or_default(),
                })
        };
        // The last file's digest: of its bytes read now, else as recorded
        // (not read again: its stamp, or its bytes, were found kept).
        let last_sha256 = match to.checked_sub(1) {
            None => None,
            Some(i) => match self.conv.events().find(|e| e.index() == i) {
                Some(e) => e.is_ok().then(|| sha256(e.raw())),
                None => old
                    .as_ref()
                    .filter(|o| o.last.as_ref().is_some_and(|l| l.index == i))
                    .and_then(|o| o.last_sha256),
            },
        };
        let files = self.conv.event_files();
        let past = files.files().any(|f| {
            f.status() == FileStatus::Gap || f.index().is_some_and(|i| i >= to && i < len)
        });
        let gap = files.gap();
        // Directories under `subagents/` that are not (yet) conversations.
        let mut candidates = false;
        if !events_only
            && now.subagents_dir.is_some()
            && let Ok(rd) = fs::read_dir(task.path.join(DIR_SUBAGENTS))
        {
            let n = rd
                .flatten()
                .filter(crate::openhands::discover::entry_is_dir)
                .count();
            candidates = n > self.conv.subagents().len() + self.conv.subagent_loops().len();
        }
        let digest = |raw: Option<&[u8]>| raw.map(sha256);
        let (state_changed, meta_changed, state, meta) = match &old {
            // Not read: as recorded (their stamps say so).
            Some(o) if events_only => (false, false, o.state.clone(), o.meta.clone()),
            _ => {
                let state_sha = digest(self.conv.state().map(|f| f.raw()));
                let meta_sha = digest(self.conv.meta().map(|f| f.raw()));
                let changed = match &old {
                    Some(o) if kind == ChangeKind::Updated => (
                        o.state.as_ref().map(|j| &j.sha256) != state_sha.as_ref(),
                        o.meta.as_ref().map(|j| &j.sha256) != meta_sha.as_ref(),
                    ),
                    _ => (state_sha.is_some(), meta_sha.is_some()),
                };
                let mark = |st: Option<Stamp>, sha: Option<[u8; 32]>| {
                    st.zip(sha)
                        .map(|(stamp, sha256)| JsonMark { stamp, sha256 })
                };
                (
                    changed.0,
                    changed.1,
                    mark(now.state, state_sha),
                    mark(now.meta, meta_sha),
                )
            }
        };
        let gap_filled =
            kind == ChangeKind::Updated && old.as_ref().and_then(|o| o.gap).is_some_and(|g| to > g);
        let subagents: Vec<String> = match &old {
            Some(o) if events_only => o.subagents.clone(),
            _ => self.conv.subagents().to_vec(),
        };
        self.hash_names(&mut names, names_to, to);
        let stamps = self.stamps_digest(
            &task,
            old.as_ref().filter(|_| kind == ChangeKind::Updated),
            stamps_before,
            (first_new, to),
            (last.as_ref(), &retry, old_last_now),
        );
        let mark = ConversationMark {
            id: id.clone(),
            depth: task.depth,
            dir,
            events_dir: now.events_dir,
            subagents_dir: now.subagents_dir,
            subagents: subagents.clone(),
            next: to,
            last,
            last_sha256,
            names: names.finish(),
            stamps,
            retry,
            unsettled: past || candidates,
            state,
            meta,
            gap,
        };
        // Sub-agents gone since the checkpoint.
        if let Some(o) = &old {
            for s in &o.subagents {
                if !subagents.contains(s) {
                    let mut rel = join_rel(&task.rel, DIR_SUBAGENTS);
                    rel.push(s);
                    let path = task.path.join(DIR_SUBAGENTS).join(s);
                    self.queue_gone(&rel, &path, Some(id.clone()));
                }
            }
        }
        // Conversation identity (see `reconcile`): a new directory of an
        // ID held before is a rewrite of the ID; an ID a directory no
        // longer holds is settled at the end.
        if kind == ChangeKind::New && self.held_before(&id) {
            kind = ChangeKind::Rewrite;
        }
        match &old {
            Some(o) => {
                self.note_replaced(&task.rel, Some(&o.id));
                if o.id != id {
                    self.ids.lost.push(Gone {
                        rel: task.rel.clone(),
                        path: task.path.clone(),
                        id: o.id.clone(),
                        parent: task.parent.clone(),
                        depth: task.depth,
                    });
                }
            }
            None => self.note_replaced(&task.rel, None),
        }
        let any = kind != ChangeKind::Updated
            || to > first_new
            || !repaired.is_empty()
            || state_changed
            || meta_changed;
        if any {
            self.note_handed_out(kind, &task.rel, &id);
        }
        self.new.conversations.insert(task.rel.clone(), &mark);
        self.since.conversations.remove(&task.rel);
        self.push_subs(&task, &subagents, &id);
        if !any {
            return ScanStep::Skip;
        }
        self.cur = Current {
            kind: Some(kind),
            path: task.path,
            rel: task.rel,
            id,
            parent: task.parent,
            depth: task.depth,
            state_changed,
            meta_changed,
            gap_filled,
            repaired,
            from: first_new,
            to,
            has_conv: true,
            again: false,
        };
        ScanStep::Yield
    }
}
