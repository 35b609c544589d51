//! The walk: the store's directories listed (or, unchanged, taken from the
//! checkpoint), conversations queued, the ones gone recorded.

use super::*;

impl Changes {
    /// Finds the top-level conversations, listing only changed directories.
    pub(super) fn walk(&mut self, root: &Path, is_dir: bool) -> Result<(), ReadError> {
        if !is_dir {
            self.base = conversation_dir(root)?;
            self.tops.push(PathBuf::new());
            return Ok(());
        }
        let root_rel = PathBuf::new();
        let known_conv = self.since.conversations.contains_key(&root_rel);
        if known_conv
            || (!self.since.dirs.contains_key(&root_rel)
                && is_conversation_dir_with(root, &mut self.parser2, &mut self.buf))
        {
            self.tops.push(root_rel);
            return Ok(());
        }
        fs::read_dir(root).map_err(|e| ReadError::io(root, e))?;
        let mut seen = HashSet::new();
        let mut stack = vec![(root.to_path_buf(), PathBuf::new())];
        while let Some((path, rel)) = stack.pop() {
            let meta = match fs::metadata(&path) {
                Ok(m) if m.is_dir() => m,
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    self.unreadable.push(ReadError::io(&path, e));
                    continue;
                }
            };
            let stamp = Stamp::of(&meta);
            if !seen.insert((stamp.dev, stamp.ino)) {
                continue;
            }
            let old = self.since.dirs.get(&rel);
            let trusted = old.is_some_and(|d| d.stamp == Some(stamp) && !self.since.racy(&stamp));
            if trusted {
                // Moved, not copied (a directory is walked once).
                let children = self
                    .since
                    .dirs
                    .get_mut(&rel)
                    .map(|d| std::mem::take(&mut d.children))
                    .unwrap_or_default();
                for name in &children {
                    let crel = join_rel(&rel, name);
                    let cpath = path.join(name);
                    let conv = self.since.conversations.contains_key(&crel)
                        || (!self.since.dirs.contains_key(&crel)
                            && is_conversation_dir_with(&cpath, &mut self.parser2, &mut self.buf));
                    if conv {
                        // Known, or met before but not read then (it
                        // could not be): a conversation.
                        self.tops.push(crel);
                    } else {
                        stack.push((cpath, crel));
                    }
                }
                self.new.dirs.insert(
                    rel,
                    DirMark {
                        stamp: Some(stamp),
                        children,
                    },
                );
                continue;
            }
            // A directory walked before that changed may have become a
            // conversation.
            if !rel.as_os_str().is_empty()
                && old.is_some()
                && is_conversation_dir_with(&path, &mut self.parser2, &mut self.buf)
            {
                self.tops.push(rel);
                continue;
            }
            let rd = match fs::read_dir(&path) {
                Ok(rd) => rd,
                Err(e) => {
                    self.unreadable.push(ReadError::io(&path, e));
                    continue;
                }
            };
            let mut all_utf8 = true;
            let mut children = Vec::new();
            for entry in rd.flatten() {
                let name = entry.file_name();
                if SKIPPED_DIRS.iter().any(|s| name == *s)
                    || !crate::openhands::discover::entry_is_dir(&entry)
                {
                    continue;
                }
                let Some(name) = name.to_str().map(str::to_owned) else {
                    // Walked, but the directory is listed again next time.
                    all_utf8 = false;
                    let cpath = entry.path();
                    let crel = rel.join(entry.file_name());
                    self.classify(cpath, crel, &entry, &mut stack, &mut seen);
                    continue;
                };
                let cpath = entry.path();
                let crel = join_rel(&rel, &name);
                if self.classify(cpath, crel, &entry, &mut stack, &mut seen) {
                    children.push(name);
                }
            }
            children.sort();
            self.new.dirs.insert(
                rel,
                DirMark {
                    stamp: all_utf8.then_some(stamp),
                    children,
                },
            );
        }
        self.tops.sort();
        Ok(())
    }

    /// Sorts a directory found by listing: a conversation (a task), a
    /// directory to walk, or neither (a link to a directory that is not a
    /// conversation). Whether the walk takes it.
    pub(super) fn classify(
        &mut self,
        cpath: PathBuf,
        crel: PathBuf,
        entry: &fs::DirEntry,
        stack: &mut Vec<(PathBuf, PathBuf)>,
        seen: &mut HashSet<(u64, u64)>,
    ) -> bool {
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        let known = self.since.conversations.contains_key(&crel);
        if known || is_conversation_dir_with(&cpath, &mut self.parser2, &mut self.buf) {
            // Each directory once, whatever links lead to it.
            #[cfg(unix)]
            if let Some(k) = dir_key(&cpath)
                && !seen.insert(k)
            {
                return false;
            }
            self.tops.push(crel);
            return true;
        }
        if is_link {
            return false;
        }
        let _ = seen;
        stack.push((cpath, crel));
        true
    }

    /// The checkpoint's marks of the conversation at `rel` and of every
    /// conversation recorded under it, in path order.
    fn marks_under(&self, rel: &Path) -> Vec<(PathBuf, ConversationMark)> {
        self.since
            .conversations
            .under(rel)
            .map(|(k, m)| (k.to_path_buf(), m))
            .collect()
    }

    /// Queues the removal of the conversation at `rel` and of every
    /// conversation recorded under it.
    pub(super) fn queue_gone(&mut self, rel: &Path, path: &Path, parent: Option<String>) {
        let marks = self.marks_under(rel);
        let mut ids: BTreeMap<PathBuf, String> = BTreeMap::new();
        for (k, m) in marks {
            let p = if k == rel {
                parent.clone()
            } else {
                k.parent()
                    .and_then(Path::parent)
                    .and_then(|pp| ids.get(pp).cloned())
            };
            let suffix = k.strip_prefix(rel).unwrap_or(Path::new(""));
            let full = if suffix.as_os_str().is_empty() {
                path.to_path_buf()
            } else {
                path.join(suffix)
            };
            ids.insert(k.clone(), m.id.clone());
            self.gone.push_back(Gone {
                rel: k,
                path: full,
                id: m.id,
                parent: p,
                depth: m.depth,
            });
        }
    }

    /// Keeps the checkpoint's marks of `rel` and everything under it.
    pub(super) fn keep_old(&mut self, rel: &Path) {
        let marks = self.marks_under(rel);
        for (k, m) in marks {
            self.new.conversations.insert(k, &m);
        }
    }
}
