//! Conversation IDs settled at the end of a scan, so that what a scan hands
//! out, applied by the rule of the [module docs](super#applying-the-changes),
//! gives what a full read gives — whatever directories were renamed,
//! copied, removed, or changed their ID.
//!
//! What a consumer holds is keyed by conversation ID, not by directory: a
//! directory renamed is the same ID under a new path, a copy is a second
//! directory holding an ID. So:
//!
//! - A new directory whose ID the checkpoint already held (a rename, a
//!   copy, a directory put back) is a [`ChangeKind::Rewrite`]: drop what is
//!   held of the ID, all its events follow — never its events after what a
//!   consumer already holds of it, which would be held twice.
//! - A removed directory (or one whose ID changed) is told at the end of
//!   the scan, once the IDs still held are known: [`ChangeKind::Removed`]
//!   only when no directory holds its ID any more — never after the events
//!   of another directory of the same ID.
//! - An ID that lost a directory but is still held by others, or that was
//!   rewritten while other directories hold it too, is handed out again in
//!   full at the end: a `Rewrite` of its first directory (in path order),
//!   then every other one as an [`ChangeKind::Updated`] change from index 0.
//!   A rename alone hands its events out once (the new directory's
//!   rewrite), since its directory is then the only one of the ID.

use super::*;

/// What the scan tracks of conversation IDs (see the [module docs](self)).
#[derive(Debug, Default)]
pub(super) struct IdChanges {
    /// The checkpoint scanned from held no conversation (nothing can be
    /// held by a consumer: no ID needs settling).
    pub(super) since_empty: bool,
    /// The IDs the checkpoint held, once needed (a new directory met).
    before: Option<HashSet<String>>,
    /// Until `before` is built: the IDs of the checkpoint's marks replaced
    /// or dropped so far, and their paths.
    replaced: HashSet<String>,
    processed: HashSet<PathBuf>,
    /// IDs that lost a directory: the removed directories (and the old ID
    /// of a directory whose ID changed), in the order met.
    pub(super) lost: Vec<Gone>,
    /// IDs a `Rewrite` was handed out for, with the directories handed out
    /// in full after that rewrite, in order.
    rewritten: BTreeMap<String, Vec<PathBuf>>,
    /// Whether the end of the scan was planned.
    pub(super) planned: bool,
    /// What the end of the scan hands out.
    todo: VecDeque<Settle>,
}

/// One item of the end of a scan.
#[derive(Debug)]
enum Settle {
    /// The ID is held by no directory any more.
    Removed(Gone),
    /// The directory at this path, handed out in full under `id`: a
    /// `Rewrite` when `first`, else an `Updated` change from index 0.
    Again {
        rel: PathBuf,
        id: String,
        first: bool,
    },
}

impl Changes {
    /// Records that the mark at `rel`, the checkpoint's of ID `id`, is being
    /// replaced by this scan (while the IDs held before are not gathered
    /// yet)
    /// (`None`: a new directory, whose mark is not one of the
    /// checkpoint's).
    pub(super) fn note_replaced(&mut self, rel: &Path, id: Option<&str>) {
        if self.ids.before.is_none() && !self.ids.since_empty {
            if let Some(id) = id {
                self.ids.replaced.insert(id.to_owned());
            }
            self.ids.processed.insert(rel.to_path_buf());
        }
    }

    /// Whether the checkpoint held a conversation of ID `id` (at any path):
    /// what a consumer of the scans before holds of it.
    pub(super) fn held_before(&mut self, id: &str) -> bool {
        if self.ids.since_empty {
            return false;
        }
        if self.ids.before.is_none() {
            // Every mark of the checkpoint is still in `since`, moved
            // unchanged into `new`, or was replaced (its ID noted).
            let mut set = std::mem::take(&mut self.ids.replaced);
            for (_, m) in self.since.conversations.iter() {
                set.insert(m.id);
            }
            for (k, m) in self.new.conversations.iter() {
                if !self.ids.processed.contains(k) {
                    set.insert(m.id);
                }
            }
            self.ids.processed = HashSet::new();
            self.ids.before = Some(set);
        }
        self.ids.before.as_ref().is_some_and(|s| s.contains(id))
    }

    /// Records what a change about to be handed out does to its ID.
    pub(super) fn note_handed_out(&mut self, kind: ChangeKind, rel: &Path, id: &str) {
        match kind {
            ChangeKind::Rewrite => {
                self.ids
                    .rewritten
                    .insert(id.to_owned(), vec![rel.to_path_buf()]);
            }
            ChangeKind::New => {
                if let Some(v) = self.ids.rewritten.get_mut(id) {
                    v.push(rel.to_path_buf());
                }
            }
            ChangeKind::Updated | ChangeKind::Removed => {}
        }
    }

    /// Plans the end of the scan (see the [module docs](self)): what each
    /// ID that lost a directory or was rewritten needs.
    pub(super) fn plan_reconcile(&mut self) {
        let mut lost: BTreeMap<String, Gone> = BTreeMap::new();
        for g in std::mem::take(&mut self.ids.lost) {
            lost.entry(g.id.clone()).or_insert(g);
        }
        let rewritten = std::mem::take(&mut self.ids.rewritten);
        if lost.is_empty() && rewritten.is_empty() {
            return;
        }
        let mut holders: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
        for (k, m) in self.new.conversations.iter() {
            if lost.contains_key(&m.id) || rewritten.contains_key(&m.id) {
                holders.entry(m.id).or_default().push(k.to_path_buf());
            }
        }
        let ids: BTreeSet<&String> = lost.keys().chain(rewritten.keys()).collect();
        for id in ids {
            let held = holders.get(id).map_or(&[][..], Vec::as_slice);
            if rewritten.get(id).is_some_and(|e| e.as_slice() == held) {
                continue;
            }
            if held.is_empty() {
                if let Some(g) = lost.get(id) {
                    self.ids.todo.push_back(Settle::Removed(g.clone()));
                }
                continue;
            }
            for (i, rel) in held.iter().enumerate() {
                self.ids.todo.push_back(Settle::Again {
                    rel: rel.clone(),
                    id: id.clone(),
                    first: i == 0,
                });
            }
        }
    }

    /// For a checkpoint `cp` taken before the scan's end: the IDs whose
    /// settling (see the [module docs](self)) is not all handed out yet,
    /// and the directories that lost one of them (path, the ID lost). Before
    /// the end is planned, every ID that lost a directory or was rewritten
    /// so far, unless its rewrite already covers every directory `cp`
    /// holds it at (a rename); after, the IDs of the items not handed out.
    pub(super) fn unsettled(&self, cp: &Checkpoint) -> (HashSet<String>, Vec<(PathBuf, String)>) {
        let mut ids = HashSet::new();
        let mut lost = Vec::new();
        if self.ids.planned {
            for item in &self.ids.todo {
                match item {
                    Settle::Removed(g) => {
                        ids.insert(g.id.clone());
                        lost.push((g.rel.clone(), g.id.clone()));
                    }
                    Settle::Again { id, .. } => {
                        ids.insert(id.clone());
                    }
                }
            }
            return (ids, lost);
        }
        let candidates: BTreeSet<&String> = self
            .ids
            .lost
            .iter()
            .map(|g| &g.id)
            .chain(self.ids.rewritten.keys())
            .collect();
        if candidates.is_empty() {
            return (ids, lost);
        }
        let mut holders: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
        for (k, m) in cp.conversations.iter() {
            if candidates.contains(&m.id) {
                holders.entry(m.id).or_default().push(k.to_path_buf());
            }
        }
        for id in candidates {
            let held = holders.get(id).map_or(&[][..], Vec::as_slice);
            if self
                .ids
                .rewritten
                .get(id)
                .is_some_and(|e| e.as_slice() == held)
            {
                continue;
            }
            ids.insert(id.clone());
        }
        for g in &self.ids.lost {
            if ids.contains(&g.id) {
                lost.push((g.rel.clone(), g.id.clone()));
            }
        }
        (ids, lost)
    }

    /// The next item of the end of the scan, made current; `None` when
    /// there is none.
    pub(super) fn reconcile_step(&mut self) -> Option<ScanStep> {
        let item = self.ids.todo.pop_front()?;
        Some(match item {
            Settle::Removed(g) => {
                self.cur = Current {
                    kind: Some(ChangeKind::Removed),
                    path: g.path,
                    rel: g.rel,
                    id: g.id,
                    parent: g.parent,
                    depth: g.depth,
                    ..Current::default()
                };
                ScanStep::Yield
            }
            Settle::Again { rel, id, first } => self.again(rel, id, first),
        })
    }

    /// Hands out the directory at `rel` in full again, under `id`, up to
    /// the index its mark records.
    fn again(&mut self, rel: PathBuf, id: String, first: bool) -> ScanStep {
        let Some(mark) = self.new.conversations.get(&rel) else {
            return ScanStep::Skip;
        };
        let path = if rel.as_os_str().is_empty() {
            self.base.clone()
        } else {
            self.base.join(&rel)
        };
        let parent = (mark.depth > 0)
            .then(|| rel.parent().and_then(Path::parent))
            .flatten()
            .and_then(|p| self.new.conversations.get(p))
            .map(|m| m.id);
        let task = Task {
            path,
            rel: rel.clone(),
            depth: mark.depth,
            parent: parent.clone(),
        };
        if let Err(e) = self.read(&task, 0) {
            // What a consumer holds of the ID may now miss this directory:
            // a mark whose names cannot match makes the next scan rewrite
            // it.
            let mut m = mark;
            m.names = [0; 32];
            self.new.conversations.insert(rel, &m);
            return ScanStep::Fail(e.into());
        }
        let to = mark.next.min(self.conv.event_files().len() as u64);
        self.cur = Current {
            kind: Some(if first {
                ChangeKind::Rewrite
            } else {
                ChangeKind::Updated
            }),
            path: task.path,
            rel,
            id,
            parent,
            depth: mark.depth,
            from: 0,
            to,
            has_conv: true,
            again: true,
            ..Current::default()
        };
        ScanStep::Yield
    }
}
