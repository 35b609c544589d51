//! One OpenHands conversation: its metadata (what `agentlog ls --json`
//! prints), its events, its event tree, its view, its usage.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentlog::json::{Map, OwnedValue, Parser};
use agentlog::openhands::view::{Head, PathFault, SdkVersion, View, ViewOptions};
use agentlog::openhands::{self, Conversation as RsConversation, ReadError, Reader};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{Class, error, read_error};
use crate::event::{Event, Events, with_root};
use crate::ids::by_prefix;
use crate::values::{owned_to_py, tape_to_py};

thread_local! {
    /// The reader of this thread, buffers reused from one conversation to the next.
    static READER: RefCell<Reader> = RefCell::new(Reader::new());
}

/// How deep sub-agents are followed (the library's bound).
pub const MAX_SUBAGENT_DEPTH: usize = openhands::store::MAX_SUBAGENT_DEPTH;

/// The directory a read error is about.
pub fn path_of(e: &ReadError) -> &Path {
    match e {
        ReadError::Io { path, .. }
        | ReadError::NoConversation { path }
        | ReadError::NotAConversationFile { path } => path,
        _ => Path::new(""),
    }
}

/// What `ls --json` prints of a conversation, read with it.
#[derive(Default, Clone)]
pub struct Header {
    pub id: String,
    pub title: Option<String>,
    pub model: Option<String>,
    pub created: Option<String>,
    pub updated: Option<String>,
    pub status: Option<String>,
    pub leaf_event_id: Option<String>,
}

fn str_member(v: agentlog::json::Value<'_>, key: &str) -> Option<String> {
    v.get(key).and_then(|v| v.as_str()).map(str::to_owned)
}

fn header(conv: &RsConversation, parser: &mut Parser) -> Header {
    let mut h = Header::default();
    let (mut state_id, mut meta_id) = (None, None);
    if let Some(Ok(doc)) = conv.state().map(|f| f.open(parser)) {
        let root = doc.root();
        state_id = str_member(root, "id");
        h.model = root
            .get("agent")
            .and_then(|a| a.get("llm"))
            .and_then(|l| l.get("model"))
            .and_then(|m| m.as_str())
            .map(str::to_owned);
        h.status = str_member(root, "execution_status");
        h.leaf_event_id = str_member(root, "leaf_event_id");
    }
    if let Some(Ok(doc)) = conv.meta().map(|f| f.open(parser)) {
        let root = doc.root();
        meta_id = str_member(root, "id");
        h.title = str_member(root, "title");
        h.created = str_member(root, "created_at");
        h.updated = str_member(root, "updated_at");
    }
    if h.created.is_none() {
        h.created = conv.events().find_map(|e| e.timestamp().map(str::to_owned));
    }
    if h.updated.is_none() {
        h.updated = conv
            .events()
            .rev()
            .find_map(|e| e.timestamp().map(str::to_owned));
    }
    h.id = state_id
        .or(meta_id)
        .map(|s| openhands::hex_id(&s))
        .unwrap_or_else(|| conv.name().to_owned());
    h
}

/// Reads the conversation at `dir` (the GIL released meanwhile).
pub fn read(
    py: Python<'_>,
    dir: &Path,
    parent: Option<String>,
    depth: usize,
) -> PyResult<Conversation> {
    let got = py.detach(|| {
        READER.with(|r| {
            let mut r = r.borrow_mut();
            let conv = r.read(dir)?;
            let h = header(&conv, r.parser());
            Ok::<_, ReadError>((conv, h))
        })
    });
    match got {
        Ok((conv, header)) => Ok(Conversation {
            conv: Arc::new(conv),
            header,
            parent,
            depth,
        }),
        Err(e) => Err(read_error(path_of(&e), &e)),
    }
}

/// Reads every directory of `dirs` on rayon's pool (a reader per job,
/// reused), the results in `dirs`' order; no GIL needed.
pub fn read_parallel(dirs: &[PathBuf]) -> Vec<PyResult<Conversation>> {
    let mut out = Vec::with_capacity(dirs.len());
    agentlog::parallel::for_each_ordered::<_, _, _, std::convert::Infallible>(
        dirs,
        0,
        Reader::new,
        |r, dir| {
            r.read(dir).map(|conv| {
                let h = header(&conv, r.parser());
                (conv, h)
            })
        },
        |got| {
            out.push(match got {
                Ok((conv, header)) => Ok(Conversation {
                    conv: Arc::new(conv),
                    header,
                    parent: None,
                    depth: 0,
                }),
                Err(e) => Err(read_error(path_of(&e), &e)),
            });
            Ok(())
        },
    )
    .unwrap_or(());
    out
}

/// One OpenHands conversation directory, read.
///
/// Its metadata are attributes (`id`, `title`, `model`, `created`,
/// `updated`: what `agentlog ls --json` prints), `events` its events in
/// read order (a lazy sequence of `agentlog.Event`), `view()` the messages
/// the model is sent next, `usage()` the tokens and cost by model.
///
/// >>> import agentlog
/// >>> store = agentlog.open("examples/store")
/// >>> conv = next(iter(store))
/// >>> len(conv) == len(conv.events)
/// True
/// >>> conv.view()[0]["role"]
/// 'system'
#[pyclass(module = "agentlog", frozen)]
pub struct Conversation {
    pub conv: Arc<RsConversation>,
    pub header: Header,
    pub parent: Option<String>,
    pub depth: usize,
}

impl Conversation {
    fn view_options(
        &self,
        branch: Option<&str>,
        sdk_version: Option<&str>,
    ) -> PyResult<ViewOptions> {
        let version = match sdk_version {
            None => None,
            Some(s) => match SdkVersion::parse(s) {
                Some(v) if v.is_known() => Some(v),
                _ => {
                    let all: Vec<SdkVersion> = SdkVersion::known_releases().collect();
                    let range = match (all.first(), all.last()) {
                        (Some(a), Some(b)) => format!("{a} to {b}"),
                        _ => "none".to_owned(),
                    };
                    return Err(error(
                        Class::Format,
                        None,
                        format!(
                            "SDK {s} is not a release this version of agentlog knows (known: {range})"
                        ),
                    ));
                }
            },
        };
        let head = match branch {
            None => None,
            Some(given) => {
                let ids = self.conv.events().map(|e| e.file_id());
                Some(by_prefix(given, ids, "event", self.conv.dir())?.to_owned())
            }
        };
        Ok(ViewOptions { version, head })
    }

    fn file_value<'py>(
        py: Python<'py>,
        f: Option<&openhands::JsonFile>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some(f) = f else {
            return Ok(py.None().into_bound(py));
        };
        if let Some(e) = f.error() {
            return Err(error(Class::Read, None, e.to_string()));
        }
        match with_root(f.raw(), |root| tape_to_py(py, root)) {
            Ok(r) => r,
            Err(reason) => Err(error(Class::Read, None, reason)),
        }
    }
}

#[pymethods]
impl Conversation {
    /// The conversation ID: 32 hex digits (`base_state.json`'s `id`, else
    /// `meta.json`'s), else the directory's name.
    #[getter]
    fn id(&self) -> &str {
        &self.header.id
    }

    /// The conversation directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.conv.dir().to_path_buf()
    }

    /// `meta.json`'s `title`, else `None`.
    #[getter]
    fn title(&self) -> Option<&str> {
        self.header.title.as_deref()
    }

    /// `base_state.json`'s `agent.llm.model`, else `None`.
    #[getter]
    fn model(&self) -> Option<&str> {
        self.header.model.as_deref()
    }

    /// `meta.json`'s `created_at`, else the first event's `timestamp`, as written.
    #[getter]
    fn created(&self) -> Option<&str> {
        self.header.created.as_deref()
    }

    /// `meta.json`'s `updated_at`, else the last event's `timestamp`, as written.
    #[getter]
    fn updated(&self) -> Option<&str> {
        self.header.updated.as_deref()
    }

    /// `base_state.json`'s `execution_status` (`"finished"`, `"idle"`…).
    #[getter]
    fn execution_status(&self) -> Option<&str> {
        self.header.status.as_deref()
    }

    /// The ID of the conversation this one is a sub-agent of.
    #[getter]
    fn parent_id(&self) -> Option<&str> {
        self.parent.as_deref()
    }

    /// 0 for a top-level conversation, 1 for its sub-agents, 2 for theirs…
    #[getter]
    fn depth(&self) -> usize {
        self.depth
    }

    /// `base_state.json` as a dict (`None` when there is none).
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::file_value(py, self.conv.state())
    }

    /// The agent server's `meta.json` as a dict (`None` when there is none).
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::file_value(py, self.conv.meta())
    }

    /// The events OpenHands reads, in index order (a malformed file is an
    /// event whose `error` says why).
    #[getter]
    fn events(&self) -> Events {
        Events {
            conv: self.conv.clone(),
        }
    }

    fn __len__(&self) -> usize {
        self.conv.len()
    }

    fn __iter__(&self) -> crate::event::EventIter {
        self.events().__iter__()
    }

    /// The event whose file ID is `id`, or starts with it (case ignored);
    /// `agentlog.NotFoundError` / `agentlog.AmbiguousError` otherwise.
    fn event(&self, id: &str) -> PyResult<Event> {
        let ids = self.conv.events().map(|e| e.file_id());
        let found = by_prefix(id, ids, "event", self.conv.dir())?;
        let pos = self
            .conv
            .events()
            .position(|e| e.file_id() == found)
            .unwrap_or(0);
        Ok(Event::at(self.conv.clone(), pos))
    }

    /// The sub-agents' conversations directly under `subagents/`, read now,
    /// in name order (theirs are their `subagents`).
    #[getter]
    fn subagents(&self, py: Python<'_>) -> PyResult<Vec<Conversation>> {
        if self.depth + 1 > MAX_SUBAGENT_DEPTH {
            return Ok(Vec::new());
        }
        self.conv
            .subagent_dirs()
            .map(|d| read(py, &d, Some(self.header.id.clone()), self.depth + 1))
            .collect()
    }

    /// The messages the model is sent next, as the SDK's chat-completions
    /// wire dicts (`LLM.format_messages_for_llm`: `role`, `content`,
    /// `tool_calls`…) — what `agentlog view --json` prints. `branch` views
    /// the branch whose head is that event (ID or unique prefix);
    /// `sdk_version` reproduces that release instead of the inferred one.
    /// With `sdk_messages`, the SDK's `Message.model_dump(mode="json")`
    /// objects instead.
    #[pyo3(signature = (branch=None, sdk_version=None, sdk_messages=false))]
    fn view<'py>(
        &self,
        py: Python<'py>,
        branch: Option<&str>,
        sdk_version: Option<&str>,
        sdk_messages: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let options = self.view_options(branch, sdk_version)?;
        let conv = &self.conv;
        let (dangling, msgs) = py.detach(|| {
            let view = View::from_conversation(conv, &options);
            let dangling =
                matches!(view.tree().head(), Head::Dangling(_)) && options.head.is_some();
            let msgs = if sdk_messages {
                view.sdk_messages()
            } else {
                view.wire_messages()
            };
            (dangling, msgs)
        });
        if dangling {
            return Err(error(
                Class::NotFound,
                Some(conv.dir()),
                "no such event to view the branch of",
            ));
        }
        let list = PyList::empty(py);
        for m in &msgs {
            list.append(owned_to_py(py, m)?)?;
        }
        Ok(list)
    }

    /// The IDs of the view's events, in order (a condensation's summary as
    /// `<condensation id>-summary`), as `agentlog view --event-ids --json`.
    #[pyo3(signature = (branch=None, sdk_version=None))]
    fn view_event_ids(
        &self,
        py: Python<'_>,
        branch: Option<&str>,
        sdk_version: Option<&str>,
    ) -> PyResult<Vec<String>> {
        let options = self.view_options(branch, sdk_version)?;
        let conv = &self.conv;
        Ok(py.detach(|| {
            let view = View::from_conversation(conv, &options);
            view.event_ids()
                .into_iter()
                .map(|s| s.into_owned())
                .collect()
        }))
    }

    /// The SDK release whose view rules apply, as inferred from the files
    /// (`"1.31.2"`).
    #[getter]
    fn sdk_version(&self, py: Python<'_>) -> String {
        let conv = &self.conv;
        py.detach(|| {
            View::from_conversation(conv, &ViewOptions::default())
                .version()
                .version
                .to_string()
        })
    }

    /// The event tree, as `agentlog tree --json` prints it (without `path`
    /// and `subagents`): `events`, `leaf_event_id`, `head`, `branches` (each
    /// also with `event_ids`, root first), `forks`.
    fn tree<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = py.detach(|| tree_value(&self.conv, self.header.leaf_event_id.as_deref()));
        owned_to_py(py, &v)
    }

    /// Tokens and cost by model, each call counted once (a parent's copies
    /// of its sub-agents' metrics are left out when their directories are
    /// there): `{model: {"calls", "prompt_tokens", "completion_tokens",
    /// "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
    /// "cost"}}`.
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let got = py.detach(|| {
            let mut p = Parser::new();
            self.conv.usage(&mut p).map_err(|e| e.to_string())
        });
        let by_model = got.map_err(|e| error(Class::Read, Some(self.conv.dir()), e))?;
        let d = PyDict::new(py);
        for (model, u) in &by_model {
            d.set_item(model, usage_dict(py, u)?)?;
        }
        Ok(d)
    }

    /// The sum of `usage()` over the models (the same keys).
    fn total_usage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut p = Parser::new();
        let by_model = self
            .conv
            .usage(&mut p)
            .map_err(|e| error(Class::Read, Some(self.conv.dir()), e.to_string()))?;
        let mut t = openhands::Usage::default();
        by_model.values().for_each(|u| t.add(u));
        usage_dict(py, &t)
    }

    /// The conversation as an ASF session file (`agentlog.Converted`), as
    /// `agentlog asf convert` writes it: a sub-agent's names its parent's
    /// session, a parent links its sub-agents'.
    fn to_asf(&self, py: Python<'_>) -> PyResult<crate::asf::Converted> {
        crate::asf::convert_openhands(py, &self.conv, self.parent.as_deref())
    }

    /// The `agentlog ls --json` row: `format`, `path`, `id`, `title`,
    /// `model`, `events`, `created`, `updated`, `subagents`.
    fn ls_row<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("format", "openhands")?;
        d.set_item("path", self.conv.dir().to_string_lossy())?;
        d.set_item("id", self.id())?;
        d.set_item("title", self.title())?;
        d.set_item("model", self.model())?;
        d.set_item("events", self.conv.len())?;
        d.set_item("created", self.created())?;
        d.set_item("updated", self.updated())?;
        d.set_item("subagents", count_subagents(py, self)?)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "<agentlog.Conversation {} ({} events) at {}>",
            self.header.id,
            self.conv.len(),
            self.conv.dir().display()
        )
    }
}

fn count_subagents(py: Python<'_>, c: &Conversation) -> PyResult<u64> {
    let mut n = 0;
    for s in c.subagents(py)? {
        n += 1 + count_subagents(py, &s)?;
    }
    Ok(n)
}

/// A usage total as a dict.
pub fn usage_dict<'py>(py: Python<'py>, u: &openhands::Usage) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("calls", u.calls)?;
    d.set_item("prompt_tokens", u.prompt_tokens)?;
    d.set_item("completion_tokens", u.completion_tokens)?;
    d.set_item("cache_read_tokens", u.cache_read_tokens)?;
    d.set_item("cache_write_tokens", u.cache_write_tokens)?;
    d.set_item("reasoning_tokens", u.reasoning_tokens)?;
    d.set_item("cost", u.cost)?;
    Ok(d)
}

fn obj(members: Vec<(&str, OwnedValue)>) -> OwnedValue {
    let mut m = Map::new();
    for (k, v) in members {
        m.insert(k, v);
    }
    OwnedValue::Object(m)
}

fn opt_str(s: Option<&str>) -> OwnedValue {
    s.map_or(OwnedValue::Null, OwnedValue::from)
}

fn opt_uint(n: Option<u64>) -> OwnedValue {
    n.map_or(OwnedValue::Null, |n| OwnedValue::int(n as i64))
}

/// The tree as `agentlog tree --json` builds it (its branches' fork
/// points, the active one, the forks).
fn tree_value(conv: &RsConversation, leaf: Option<&str>) -> OwnedValue {
    let view = View::from_conversation(conv, &ViewOptions::default());
    let tree = view.tree();
    let events = view.events();
    let file_id = |pos: usize| events.get(pos).map_or("", |e| e.file_id);
    let index = |pos: usize| events.get(pos).map_or(0, |e| e.index as u64);
    let mut on_active = vec![false; events.len()];
    for &p in &tree.active_branch().events {
        if let Some(x) = on_active.get_mut(p) {
            *x = true;
        }
    }
    let mut seen = vec![false; events.len()];
    let mut branches = Vec::new();
    for branch in tree.branches() {
        let fork = branch
            .events
            .iter()
            .take_while(|&&p| seen.get(p).copied().unwrap_or(false))
            .last()
            .copied();
        for &p in &branch.events {
            if let Some(s) = seen.get_mut(p) {
                *s = true;
            }
        }
        let active = branch.tip().is_some_and(|t| on_active[t]);
        let tip = branch.tip();
        let fault = match &branch.fault {
            None => OwnedValue::Null,
            Some(PathFault::Cycle(_)) => "cycle".into(),
            Some(PathFault::Dangling(..)) => "dangling".into(),
        };
        branches.push(obj(vec![
            ("tip_index", opt_uint(tip.map(index))),
            ("tip_id", opt_str(tip.map(file_id))),
            ("events", OwnedValue::int(branch.events.len() as i64)),
            ("active", OwnedValue::Bool(active)),
            ("fork_index", opt_uint(fork.map(index))),
            ("fault", fault),
            (
                "event_ids",
                OwnedValue::Array(branch.events.iter().map(|&p| file_id(p).into()).collect()),
            ),
        ]));
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); events.len()];
    for (pos, p) in tree.parents().iter().enumerate() {
        if let Some(q) = p.position()
            && q != pos
            && let Some(c) = children.get_mut(q)
        {
            c.push(pos);
        }
    }
    let forks = children
        .iter()
        .enumerate()
        .filter(|(_, c)| c.len() > 1)
        .map(|(p, c)| {
            obj(vec![
                ("index", OwnedValue::int(index(p) as i64)),
                ("id", file_id(p).into()),
                (
                    "children",
                    OwnedValue::Array(
                        c.iter()
                            .map(|&x| OwnedValue::int(index(x) as i64))
                            .collect(),
                    ),
                ),
            ])
        })
        .collect();
    let (state, head_pos) = match tree.head() {
        Head::Event(p) => ("event", Some(*p)),
        Head::Empty => ("empty", None),
        Head::Dangling(_) => ("dangling", None),
    };
    obj(vec![
        ("events", OwnedValue::int(events.len() as i64)),
        ("leaf_event_id", opt_str(leaf)),
        (
            "head",
            obj(vec![
                ("state", state.into()),
                ("index", opt_uint(head_pos.map(index))),
                ("id", opt_str(head_pos.map(file_id))),
            ]),
        ),
        ("branches", OwnedValue::Array(branches)),
        ("forks", OwnedValue::Array(forks)),
    ])
}
