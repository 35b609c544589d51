//! Bringing the index up to date with stores ([`SearchIndex::update`]).

use std::path::{Path, PathBuf};

use tantivy::{IndexWriter, TantivyDocument, Term};

use crate::follow::SessionsCheckpoint;
use crate::follow::occhat::{SessionChange, Sessions};
use crate::occhat::SessionStore;
use crate::openhands::view::{View, ViewEntry, ViewInput, ViewOptions};
use crate::openhands::{
    ChangeKind, ChangesError, Checkpoint, CheckpointError, Conversation, Doc, Reader, ScanOptions,
    Store,
};

use super::extract::{Pending, occhat_docs, openhands_docs, wall_seconds};
use super::state::StoreEntry;
use super::{Fields, SearchError, SearchIndex};

/// What kind of store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreKind {
    /// An OpenHands store (or one conversation directory).
    OpenHands,
    /// An OC Chat sessions directory.
    OcChat,
}

impl StoreKind {
    /// `openhands` or `occhat`.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::OpenHands => "openhands",
            StoreKind::OcChat => "occhat",
        }
    }

    /// The kind [`as_str`](Self::as_str) names.
    pub fn parse(s: &str) -> Option<StoreKind> {
        match s {
            "openhands" => Some(StoreKind::OpenHands),
            "occhat" => Some(StoreKind::OcChat),
            _ => None,
        }
    }
}

/// What an update did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateReport {
    /// Conversations (and sessions) indexed: new, changed or rewritten,
    /// each replacing its documents.
    pub indexed: u64,
    /// Conversations removed from the index (gone from their store).
    pub removed: u64,
    /// Documents added.
    pub documents: u64,
    /// Events that could not be read (torn, not JSON): not indexed; they
    /// are indexed once they read (the conversation changes then).
    pub unreadable_events: u64,
    /// Stores indexed again from nothing: their checkpoint file was
    /// missing or damaged, or the store's directory was replaced.
    pub rebuilt_stores: u64,
    /// How many conversations (top-level ones; OC Chat: sessions) each
    /// store given holds now, in the order given: 0 is a store under
    /// which nothing was found.
    pub found: Vec<u64>,
    /// What could not be read (a directory, a conversation): warnings,
    /// the rest indexed; a conversation that failed is tried again by the
    /// next update.
    pub problems: Vec<String>,
}

/// The writer's memory budget over all its threads.
const WRITER_HEAP: usize = 64 << 20;

/// A conversation's facts every document of it carries.
struct ConvFacts<'a> {
    key: &'a str,
    root_key: &'a str,
    store: StoreKind,
    conversation: &'a str,
    parent: Option<&'a str>,
    path: &'a str,
    model: Option<&'a str>,
}

fn utf8(path: &Path) -> Result<&str, SearchError> {
    path.to_str().ok_or_else(|| SearchError::Store {
        path: path.to_path_buf(),
        message: "the path is not UTF-8 (the index keeps paths as text)".into(),
    })
}

/// The key of a store's documents: its kind and canonical root.
fn root_key(kind: StoreKind, root: &str) -> String {
    format!("{}\u{1f}{root}", kind.as_str())
}

/// The key of a conversation's documents.
fn conv_key(root_key: &str, conv: &str) -> String {
    format!("{root_key}\u{1f}{conv}")
}

impl SearchIndex {
    /// Brings the index up to date with `stores` (each with its kind) and
    /// commits; stores indexed before and not given are kept as they are.
    /// See the [module docs](super) for what is read and what a killed run
    /// leaves.
    pub fn update(&mut self, stores: &[(StoreKind, PathBuf)]) -> Result<UpdateReport, SearchError> {
        let old = self.payload()?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
        let mut writer: IndexWriter<TantivyDocument> = self
            .index
            .writer_with_num_threads(threads, WRITER_HEAP)
            .map_err(|e| self.tv(e))?;
        let mut report = UpdateReport::default();
        let mut new = old.clone();
        for (kind, path) in stores {
            let canonical = std::fs::canonicalize(path).map_err(|e| SearchError::io(path, e))?;
            let root = utf8(&canonical)?.to_owned();
            let prev = old
                .stores
                .iter()
                .find(|s| s.kind == *kind && s.root == root);
            let bytes = prev.and_then(|p| self.read_checkpoint(&p.checkpoint));
            let rk = root_key(*kind, &root);
            let cp_bytes = match kind {
                StoreKind::OpenHands => {
                    self.update_openhands(&writer, path, &root, &rk, prev, bytes, &mut report)?
                }
                StoreKind::OcChat => {
                    self.update_occhat(&writer, path, &root, &rk, prev, bytes, &mut report)?
                }
            };
            let name = self.write_checkpoint(&cp_bytes)?;
            let entry = StoreEntry {
                kind: *kind,
                root,
                checkpoint: name,
            };
            match new
                .stores
                .iter_mut()
                .find(|s| s.kind == entry.kind && s.root == entry.root)
            {
                Some(s) => *s = entry,
                None => new.stores.push(entry),
            }
        }
        let mut commit = writer.prepare_commit().map_err(|e| self.tv(e))?;
        commit.set_payload(&new.to_json());
        commit.commit().map_err(|e| self.tv(e))?;
        self.remove_old_checkpoints(&new);
        writer.wait_merging_threads().map_err(|e| self.tv(e))?;
        Ok(report)
    }

    /// Drops every document of a store whose checkpoint cannot be used.
    fn drop_store(&self, writer: &IndexWriter<TantivyDocument>, rk: &str) {
        writer.delete_term(Term::from_field_text(self.fields.root, rk));
    }

    #[allow(clippy::too_many_arguments)]
    fn update_openhands(
        &self,
        writer: &IndexWriter<TantivyDocument>,
        path: &Path,
        root: &str,
        rk: &str,
        prev: Option<&StoreEntry>,
        bytes: Option<Vec<u8>>,
        report: &mut UpdateReport,
    ) -> Result<Vec<u8>, SearchError> {
        let store_err = |message: String| SearchError::Store {
            path: path.to_path_buf(),
            message,
        };
        let mut since: Option<Checkpoint> =
            bytes.and_then(|b| Checkpoint::from_bytes(&b, path).ok());
        if prev.is_some() && since.is_none() {
            self.drop_store(writer, rk);
            report.rebuilt_stores += 1;
        }
        let opts = ScanOptions::default();
        let mut changes = match Store::changes_since(path, since.as_ref(), opts) {
            Ok(c) => c,
            Err(ChangesError::Checkpoint(CheckpointError::OtherStore { .. })) => {
                // The store's directory was replaced: index it again.
                since = None;
                self.drop_store(writer, rk);
                report.rebuilt_stores += 1;
                Store::changes_since(path, since.as_ref(), opts)
                    .map_err(|e| store_err(e.to_string()))?
            }
            Err(e) => return Err(store_err(e.to_string())),
        };
        for e in changes.unreadable() {
            report.problems.push(e.to_string());
        }
        let mut reader = Reader::with_pattern(opts.pattern);
        let mut conv = Conversation::new();
        let mut pending = Vec::new();
        while let Some(item) = changes.next() {
            let c = match item {
                Ok(c) => c,
                Err(e) => {
                    report.problems.push(e.to_string());
                    continue;
                }
            };
            let rel = c.rel.to_string_lossy();
            let key = conv_key(rk, &rel);
            writer.delete_term(Term::from_field_text(self.fields.key, &key));
            if c.kind == ChangeKind::Removed {
                report.removed += 1;
                continue;
            }
            // New events may change earlier ones' flags: the conversation
            // is read whole (a new or rewritten one already is).
            let whole: &Conversation = match (c.kind, c.conversation) {
                (ChangeKind::New | ChangeKind::Rewrite, Some(cv)) => cv,
                _ => match reader.read_into(c.dir, &mut conv) {
                    Ok(()) => &conv,
                    Err(e) => {
                        report.problems.push(e.to_string());
                        continue;
                    }
                },
            };
            let dir = if c.rel.as_os_str().is_empty() {
                PathBuf::from(root)
            } else {
                Path::new(root).join(c.rel)
            };
            let dir = dir.to_string_lossy();
            report.unreadable_events += whole.events().filter(|e| !e.is_ok()).count() as u64;
            pending.clear();
            let input = ViewInput::from_conversation(whole);
            let view = View::build_visiting(&input, &ViewOptions::default(), &mut |p, ev, v| {
                if let Some(k) = &ev.kind {
                    openhands_docs(p, ev.index as u64, k, v, &mut pending);
                }
            });
            let n = view.events().len();
            let mut active = vec![false; n];
            for &p in view.conversation() {
                if let Some(a) = active.get_mut(p) {
                    *a = true;
                }
            }
            let mut in_context = vec![false; n];
            for e in view.context() {
                if let ViewEntry::Event(p) = e
                    && let Some(a) = in_context.get_mut(*p)
                {
                    *a = true;
                }
            }
            let mut parser = crate::json::Parser::new();
            let model = whole
                .state()
                .filter(|s| s.error().is_none())
                .and_then(|s| Doc::open(&mut parser, s.raw()).ok())
                .and_then(|d| d.state().agent_info().model.map(str::to_owned));
            let facts = ConvFacts {
                key: &key,
                root_key: rk,
                store: StoreKind::OpenHands,
                conversation: c.id,
                parent: c.parent,
                path: &dir,
                model: model.as_deref(),
            };
            for d in &pending {
                let a = active.get(d.pos).copied().unwrap_or(false);
                let i = in_context.get(d.pos).copied().unwrap_or(false);
                self.add(writer, &facts, d, a, i)?;
                report.documents += 1;
            }
            report.indexed += 1;
        }
        report.found.push(changes.top_level() as u64);
        Ok(changes.into_checkpoint().to_bytes())
    }

    #[allow(clippy::too_many_arguments)]
    fn update_occhat(
        &self,
        writer: &IndexWriter<TantivyDocument>,
        path: &Path,
        root: &str,
        rk: &str,
        prev: Option<&StoreEntry>,
        bytes: Option<Vec<u8>>,
        report: &mut UpdateReport,
    ) -> Result<Vec<u8>, SearchError> {
        let mut since: Option<SessionsCheckpoint> =
            bytes.and_then(|b| SessionsCheckpoint::from_bytes(&b, path).ok());
        if prev.is_some() && since.is_none() {
            self.drop_store(writer, rk);
            report.rebuilt_stores += 1;
        }
        if since
            .as_ref()
            .is_some_and(|cp| cp.check_root(path).is_err())
        {
            since = None;
            self.drop_store(writer, rk);
            report.rebuilt_stores += 1;
        }
        let mut sessions = Sessions::resume(path, since).map_err(|e| SearchError::Store {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let mut changed: Vec<(String, bool)> = Vec::new();
        let _ = sessions.scan(|c| -> Result<(), ()> {
            match c {
                SessionChange::Added { session, .. } | SessionChange::Rewrite { session, .. } => {
                    changed.push((session.to_owned(), false))
                }
                SessionChange::Removed { session } => changed.push((session.to_owned(), true)),
            }
            Ok(())
        });
        let store = SessionStore::new(path);
        let mut pending = Vec::new();
        for (name, removed) in &changed {
            let key = conv_key(rk, name);
            writer.delete_term(Term::from_field_text(self.fields.key, &key));
            if *removed {
                report.removed += 1;
                continue;
            }
            let log = match store.load_chat_log(name) {
                Ok(l) => l,
                Err(e) => {
                    report
                        .problems
                        .push(format!("{}: {name}: {e}", path.display()));
                    continue;
                }
            };
            let s = |k: &str| log.chat_log.get(k).and_then(|v| v.as_str());
            let timestamp = s("timestamp");
            pending.clear();
            for (i, m) in log.messages().iter().enumerate() {
                occhat_docs(i, m, timestamp, &mut pending);
            }
            let facts = ConvFacts {
                key: &key,
                root_key: rk,
                store: StoreKind::OcChat,
                conversation: name,
                parent: None,
                path: root,
                model: s("model"),
            };
            for d in &pending {
                self.add(writer, &facts, d, true, true)?;
                report.documents += 1;
            }
            report.indexed += 1;
        }
        report.found.push(sessions.checkpoint().len() as u64);
        Ok(sessions.checkpoint().to_bytes())
    }

    fn add(
        &self,
        writer: &IndexWriter<TantivyDocument>,
        c: &ConvFacts<'_>,
        d: &Pending,
        active: bool,
        in_context: bool,
    ) -> Result<(), SearchError> {
        let f: &Fields = &self.fields;
        let mut doc = TantivyDocument::new();
        doc.add_text(f.key, c.key);
        doc.add_text(f.root, c.root_key);
        doc.add_text(f.store, c.store.as_str());
        doc.add_text(f.conversation, c.conversation);
        if let Some(p) = c.parent {
            doc.add_text(f.parent, p);
        }
        doc.add_text(f.path, c.path);
        doc.add_u64(f.event, d.index);
        doc.add_text(f.kind, d.kind.as_str());
        doc.add_text(f.event_kind, &d.event_kind);
        if let Some(r) = &d.role {
            doc.add_text(f.role, r);
        }
        if let Some(t) = &d.tool {
            doc.add_text(f.tool, t);
        }
        if let Some(t) = &d.timestamp {
            doc.add_text(f.timestamp, t);
            if let Some(secs) = wall_seconds(t) {
                doc.add_i64(f.time, secs);
            }
        }
        if let Some(m) = c.model {
            doc.add_text(f.model, m);
        }
        doc.add_u64(f.active, u64::from(active));
        doc.add_u64(f.in_context, u64::from(in_context));
        doc.add_text(f.body, &d.body);
        writer.add_document(doc).map_err(|e| self.tv(e))?;
        Ok(())
    }
}
