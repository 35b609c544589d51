//! One conversation of the scan: what changed in it since its mark, told
//! with as few reads as the stamps allow.

use super::*;

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
    pub(super) fn unchanged(&self, old: &ConversationMark, path: &Path, dir: &Stamp) -> bool {
        if old.unsettled || !self.same(Some(&old.dir), Some(dir)) {
            return false;
        }
        let mut p = path.join(DIR_EVENTS);
        if old.events_dir.is_some()
            && !self.same(old.events_dir.as_ref(), Self::stat_or_none(&p).as_ref())
        {
            return false;
        }
        for r in &old.retry {
            p.push(&r.name);
            let ok = self.same(Some(&r.stamp), Self::stat_or_none(&p).as_ref());
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

    /// The conversation's ID: the one read, else the checkpoint's (a state
    /// caught half-written names none), else the directory's name.
    pub(super) fn id_of(&self, read: Option<String>, old: Option<&ConversationMark>) -> String {
        read.or_else(|| old.map(|o| o.id.clone()))
            .unwrap_or_else(|| self.conv.name().to_owned())
    }

    /// The digest of the names of the sequence's files below `to`.
    pub(super) fn names_digest(&self, to: u64) -> [u8; 32] {
        let mut s = Vec::new();
        for f in self.conv.event_files().sequence().take(to as usize) {
            s.extend_from_slice(f.name().as_bytes());
            s.push(b'\n');
        }
        sha256(&s)
    }

    pub(super) fn process(&mut self, task: Task) -> ScanStep {
        if task.depth > MAX_SUBAGENT_DEPTH {
            return ScanStep::Fail(StoreError::TooDeep { path: task.path });
        }
        let old = self.since.conversations.get(&task.rel);
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
        if kind == ChangeKind::Updated
            && let Some(o) = &old
            && self.unchanged(o, &task.path, &dir)
        {
            // Moved, not copied: a scan holds one mark of each conversation.
            self.since
                .conversations
                .move_to(&task.rel, &mut self.new.conversations);
            self.push_subs(&task, &o.subagents, &o.id);
            return ScanStep::Skip;
        }
        // Stamps before reading: a change while reading shows next time.
        let events_dir = Self::stat_or_none(&task.path.join(DIR_EVENTS));
        let subagents_dir = Self::stat_or_none(&task.path.join(DIR_SUBAGENTS));
        let state_st = Self::stat_or_none(&task.path.join(FILE_BASE_STATE));
        let meta_st = Self::stat_or_none(&task.path.join(FILE_META));
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
        let (mut id, read_id) = match self.read(&task, from) {
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
        // Does the history still match?
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
                ok = name_now.as_deref() == Some(last.name.as_str())
                    && self.names_digest(o.next) == o.names;
                let retried = o.retry.iter().any(|r| r.index == last.index);
                if ok && !retried {
                    let st = Self::stat_or_none(&task.path.join(DIR_EVENTS).join(&last.name));
                    ok = st
                        .as_ref()
                        .is_some_and(|s| s.same_object(&last.stamp) && s.size == last.stamp.size);
                }
            }
            if !ok {
                kind = ChangeKind::Rewrite;
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
        let events_path = task.path.join(DIR_EVENTS);
        // The new events, up to one held back by the settle rule.
        let len = self.conv.event_files().len() as u64;
        let mut to = len;
        let mut retry: Vec<FileMark> = Vec::new();
        let mut repaired = Vec::new();
        let now = SystemTime::now();
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
            let p = events_path.join(err_name);
            let st = Self::stat_or_none(&p);
            if i >= first_new
                && let Some(settle) = self.opts.settle
                && fs::metadata(&p)
                    .and_then(|m| m.modified())
                    .map_or(true, |m| now.duration_since(m).map_or(true, |d| d < settle))
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
                    stamp: Self::stat_or_none(&events_path.join(f.name())).unwrap_or_default(),
                })
        };
        let files = self.conv.event_files();
        let past = files.files().any(|f| {
            f.status() == FileStatus::Gap || f.index().is_some_and(|i| i >= to && i < len)
        });
        let gap = files.gap();
        // Directories under `subagents/` that are not (yet) conversations.
        let mut candidates = false;
        if subagents_dir.is_some()
            && let Ok(rd) = fs::read_dir(task.path.join(DIR_SUBAGENTS))
        {
            let n = rd
                .flatten()
                .filter(crate::openhands::discover::entry_is_dir)
                .count();
            candidates = n > self.conv.subagents().len() + self.conv.subagent_loops().len();
        }
        let digest = |raw: Option<&[u8]>| raw.map(sha256);
        let state_sha = digest(self.conv.state().map(|f| f.raw()));
        let meta_sha = digest(self.conv.meta().map(|f| f.raw()));
        let (state_changed, meta_changed) = match &old {
            Some(o) if kind == ChangeKind::Updated => (
                o.state.as_ref().map(|j| &j.sha256) != state_sha.as_ref(),
                o.meta.as_ref().map(|j| &j.sha256) != meta_sha.as_ref(),
            ),
            _ => (state_sha.is_some(), meta_sha.is_some()),
        };
        let gap_filled =
            kind == ChangeKind::Updated && old.as_ref().and_then(|o| o.gap).is_some_and(|g| to > g);
        let subagents: Vec<String> = self.conv.subagents().to_vec();
        let mark = ConversationMark {
            id: id.clone(),
            depth: task.depth,
            dir,
            events_dir,
            subagents_dir,
            subagents: subagents.clone(),
            next: to,
            last,
            names: self.names_digest(to),
            retry,
            unsettled: past || candidates,
            state: state_st
                .zip(state_sha)
                .map(|(stamp, sha256)| JsonMark { stamp, sha256 }),
            meta: meta_st
                .zip(meta_sha)
                .map(|(stamp, sha256)| JsonMark { stamp, sha256 }),
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
        let any = kind != ChangeKind::Updated
            || to > first_new
            || !repaired.is_empty()
            || state_changed
            || meta_changed;
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
        };
        ScanStep::Yield
    }
}
