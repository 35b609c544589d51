//! One conversation: the scripted run that produces its events, and the
//! files that record it.

mod messages;
mod observe;
mod tools;
mod turn;

use super::jw::{Jw, Spelling, push_padded};
use super::prompt::Prompt;
use super::rng::{Rng, derive};
use super::text::{self, CommandOutput};
use super::{GenConfig, GenError, Sdk, Sink};
use crate::openhands::{
    KIND_ACTION, KIND_AGENT_ERROR, KIND_CONDENSATION, KIND_INTERRUPT, KIND_MESSAGE,
    KIND_OBSERVATION, KIND_PAUSE, KIND_SYSTEM_PROMPT, KIND_USER_REJECT,
};
use std::fmt::Write as _;

/// An LLM the conversation talks to.
pub(crate) struct LlmModel {
    pub name: &'static str,
    pub input_cost: f64,
    pub output_cost: f64,
    /// Provider-style tool call ids: `toolu_01…` (Anthropic) or `call_…`.
    pub anthropic: bool,
    pub context_window: i64,
}

pub(crate) const MODELS: &[LlmModel] = &[
    LlmModel {
        name: "anthropic/claude-sonnet-4-5-20250929",
        input_cost: 3e-6,
        output_cost: 1.5e-5,
        anthropic: true,
        context_window: 200_000,
    },
    LlmModel {
        name: "litellm_proxy/claude-opus-4-1-20250805",
        input_cost: 1.5e-5,
        output_cost: 7.5e-5,
        anthropic: true,
        context_window: 200_000,
    },
    LlmModel {
        name: "openai/gpt-5-2025-08-07",
        input_cost: 1.25e-6,
        output_cost: 1e-5,
        anthropic: false,
        context_window: 272_000,
    },
    LlmModel {
        name: "openai/gpt-4o",
        input_cost: 2.5e-6,
        output_cost: 1e-5,
        anthropic: false,
        context_window: 128_000,
    },
    LlmModel {
        name: "deepseek/deepseek-chat",
        input_cost: 2.7e-7,
        output_cost: 1.1e-6,
        anthropic: false,
        context_window: 128_000,
    },
];
const MODEL_WEIGHTS: &[u32] = &[45, 10, 20, 15, 10];

const USERS: &[&str] = &["dev", "alice", "runner", "ubuntu", "openhands", "sam"];
const PROJECTS: &[&str] = &[
    "api-server",
    "textstats",
    "billing",
    "webapp",
    "etl-jobs",
    "cli-tool",
    "docs-site",
    "ml-pipeline",
    "payments",
    "inventory",
    "auth-service",
    "scheduler",
];

/// One LLM call, for `stats.usage_to_metrics`.
#[derive(Clone, Debug)]
pub(crate) struct LlmCall {
    pub response_id: String,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cache_read_tokens: i64,
    pub reasoning_tokens: i64,
    pub latency: f64,
    pub cost: f64,
    pub timestamp: f64,
    pub model: &'static str,
}

/// A sub-agent's combined metrics, as the parent records them.
pub(crate) struct TaskMetrics {
    pub key: String,
    pub calls: Vec<LlmCall>,
}

/// What the condenser of a conversation keeps.
#[derive(Clone, Copy)]
pub(crate) struct Condenser {
    pub max_size: usize,
    pub keep_first: usize,
}

/// An entry of the simulated agent view (for condensation).
#[derive(Clone, Copy)]
enum ViewItem {
    Event(usize),
    Summary(usize),
}

/// The tool a call goes to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tool {
    Terminal,
    FileEditor,
    TaskTracker,
    Think,
    Finish,
    Task,
}

/// A tool call whose observation is still to be written.
#[derive(Default)]
struct Call {
    tool: Option<Tool>,
    action_index: usize,
    tool_call_id: String,
    command: String,
    path: String,
    /// file_text / new_str / thought / message / prompt.
    a: String,
    /// old_str / description.
    b: String,
    /// Terminal output kind and exit code.
    output: Option<CommandOutput>,
    exit_code: i64,
    timeout: bool,
    insert_line: usize,
    /// File editor: index of the workspace file.
    file: Option<usize>,
    /// File contents before the edit.
    before: String,
    rejected: bool,
    is_error: bool,
}

#[derive(Clone)]
pub(crate) struct TaskItem {
    pub title: String,
    pub notes: String,
    pub status: &'static str,
}

/// Where the files of the conversation go, and what was written.
pub(crate) struct Counters {
    pub files: u64,
    pub bytes: u64,
    pub events: u64,
    pub subagents: u64,
}

/// The decisions made once per conversation.
pub(crate) struct Plan {
    pub sdk: Sdk,
    pub events: usize,
    pub model: &'static LlmModel,
    pub condenser: Option<Condenser>,
    pub confirm: bool,
    pub subagents: usize,
    pub branch: bool,
    pub meta: bool,
    pub is_subagent: bool,
    pub task_prompt: String,
}

/// The state of one conversation being generated.
pub(crate) struct Conv<'a> {
    pub cfg: &'a GenConfig,
    prompts: &'a [Prompt],
    /// Structure: what happens, ids, counts, lengths.
    pub rng: Rng,
    /// Text: the characters of free text. Separate so that text lengths
    /// (`content_scale`) do not change the structure a seed gives.
    trng: Rng,
    pub plan: Plan,
    pub sp: Spelling,
    pub dir: String,
    pub hex: String,
    pub uuid: String,
    pub user: &'static str,
    pub workspace: String,
    pub persistence_dir: String,
    ids: String,
    head: Option<usize>,
    pub now_us: i64,
    start_us: i64,
    buf: Vec<u8>,
    args: Vec<u8>,
    name: String,
    s1: String,
    s2: String,
    s3: String,
    calls: Vec<Call>,
    view: Vec<ViewItem>,
    pub agent_calls: Vec<LlmCall>,
    pub condenser_calls: Vec<LlmCall>,
    pub task_metrics: Vec<TaskMetrics>,
    context_tokens: i64,
    files: Vec<(String, String)>,
    pub tasks: Vec<TaskItem>,
    pub last_user_message: Option<usize>,
    user_messages: Vec<usize>,
    pub execution_status: &'static str,
    responses: u64,
    tasks_spawned: usize,
    subagents_due: usize,
    pub counters: Counters,
    pub sink: &'a mut dyn Sink,
    pub final_answer: String,
}

/// Microseconds since the Unix epoch to `YYYY-MM-DDTHH:MM:SS[.ffffff]`,
/// as Python's `datetime.isoformat()` writes a naive local time (the
/// fraction is left out when it is zero).
pub(crate) fn push_iso(out: &mut String, us: i64, zulu: bool) {
    let secs = us.div_euclid(1_000_000);
    let frac = us.rem_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let _ = write!(
        out,
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    );
    if frac != 0 {
        let _ = write!(out, ".{frac:06}");
    }
    if zulu {
        out.push('Z');
    }
}

/// A random UUID version 4, dashed or as 32 hex digits.
pub(crate) fn push_uuid(rng: &mut Rng, out: &mut String, dashed: bool) {
    let hi = (rng.next_u64() & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000;
    let lo = (rng.next_u64() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    let _ = if dashed {
        write!(
            out,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            hi >> 32,
            (hi >> 16) & 0xFFFF,
            hi & 0xFFFF,
            lo >> 48,
            lo & 0xFFFF_FFFF_FFFF
        )
    } else {
        write!(out, "{hi:016x}{lo:016x}")
    };
}

/// Dashed form of a 32-hex id.
pub(crate) fn dashed(hex: &str) -> String {
    let g = |r: std::ops::Range<usize>| hex.get(r).unwrap_or("");
    format!(
        "{}-{}-{}-{}-{}",
        g(0..8),
        g(8..12),
        g(12..16),
        g(16..20),
        g(20..32)
    )
}

impl<'a> Conv<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        cfg: &'a GenConfig,
        prompts: &'a [Prompt],
        mut rng: Rng,
        plan: Plan,
        parent_dir: Option<&str>,
        start_us: i64,
        user: &'static str,
        workspace: String,
        persist_root: &str,
        sink: &'a mut dyn Sink,
    ) -> Self {
        let mut hex = String::with_capacity(32);
        push_uuid(&mut rng, &mut hex, false);
        let uuid = dashed(&hex);
        let dir = match parent_dir {
            Some(p) => format!("{p}/subagents/{hex}"),
            None => hex.clone(),
        };
        let persistence_dir = format!("{persist_root}/{hex}");
        let sp = match plan.sdk {
            Sdk::V158 => Spelling::PYDANTIC,
            Sdk::V10 => Spelling::LEGACY,
        };
        let subagents_due = plan.subagents;
        let trng = Rng::new(rng.next_u64());
        Conv {
            cfg,
            prompts,
            rng,
            trng,
            sp,
            dir,
            hex,
            uuid,
            user,
            workspace,
            persistence_dir,
            ids: String::with_capacity(plan.events * 36),
            head: None,
            now_us: start_us,
            start_us,
            buf: Vec::with_capacity(64 * 1024),
            args: Vec::with_capacity(4096),
            name: String::with_capacity(256),
            s1: String::new(),
            s2: String::new(),
            s3: String::new(),
            calls: Vec::new(),
            view: Vec::new(),
            agent_calls: Vec::new(),
            condenser_calls: Vec::new(),
            task_metrics: Vec::new(),
            context_tokens: 0,
            files: Vec::new(),
            tasks: Vec::new(),
            last_user_message: None,
            user_messages: Vec::new(),
            execution_status: "idle",
            responses: 0,
            tasks_spawned: 0,
            subagents_due,
            counters: Counters {
                files: 0,
                bytes: 0,
                events: 0,
                subagents: 0,
            },
            sink,
            plan,
            final_answer: String::new(),
        }
    }

    pub(crate) fn start_us(&self) -> i64 {
        self.start_us
    }

    /// A conversation title (agent-server `meta.json`).
    pub(crate) fn title(&mut self, out: &mut String) {
        let n = self.rng.range(3, 7);
        text::title(&mut self.trng, out, n);
    }

    fn scale(&self) -> f64 {
        self.cfg.content_scale.max(0.0)
    }

    /// Event count so far.
    pub(crate) fn len(&self) -> usize {
        self.ids.len() / 36
    }

    fn room(&self) -> bool {
        self.len() < self.plan.events
    }

    pub(crate) fn id(&self, i: usize) -> &str {
        self.ids.get(i * 36..i * 36 + 36).unwrap_or("")
    }

    pub(crate) fn leaf(&self) -> Option<&str> {
        self.head.map(|h| self.id(h))
    }

    fn legacy(&self) -> bool {
        self.plan.sdk == Sdk::V10
    }

    /// Advances the clock by `ms` milliseconds, with microsecond jitter.
    fn tick(&mut self, ms: usize) {
        let us = ms as i64 * 1000 + self.rng.below(1000) as i64;
        self.now_us = self.now_us.saturating_add(us.max(1));
    }

    fn epoch_secs(&self) -> f64 {
        self.now_us as f64 / 1e6
    }

    /// Writes a file of the conversation (path relative to its directory).
    pub(crate) fn write_file(
        &mut self,
        rel: &str,
        bytes: &[u8],
        private: bool,
    ) -> Result<(), GenError> {
        self.name.clear();
        self.name.push_str(&self.dir);
        self.name.push('/');
        self.name.push_str(rel);
        self.sink.write_file(&self.name, bytes, private)?;
        self.counters.files += 1;
        self.counters.bytes += bytes.len() as u64;
        Ok(())
    }

    pub(crate) fn mkdir(&mut self, rel: &str) -> Result<(), GenError> {
        self.name.clear();
        self.name.push_str(&self.dir);
        if !rel.is_empty() {
            self.name.push('/');
            self.name.push_str(rel);
        }
        self.sink.create_dir(&self.name)
    }

    // ---------------------------------------------------------------- events

    /// Starts an event: a fresh id, the envelope members. `None` when the
    /// conversation has all its events.
    fn start(&mut self, kind: &'static str, source: &str) -> Option<Jw> {
        if !self.room() {
            return None;
        }
        let parent = self.head;
        let mut id = String::with_capacity(36);
        push_uuid(&mut self.rng, &mut id, true);
        self.ids.push_str(&id);
        let mut w = Jw::new(std::mem::take(&mut self.buf), self.sp);
        w.begin(Some(kind));
        w.kv_str("id", &id);
        self.s3.clear();
        push_iso(&mut self.s3, self.now_us, false);
        w.kv_str("timestamp", &self.s3);
        w.kv_str("source", source);
        if !self.legacy()
            && let Some(p) = parent
        {
            w.kv_str("parent_id", self.id(p));
        }
        Some(w)
    }

    /// Ends the event started last, writes its file and makes it HEAD.
    fn commit(&mut self, mut w: Jw, in_view: bool) -> Result<usize, GenError> {
        w.end();
        let idx = self.len() - 1;
        let buf = w.into_inner();
        let mut fname = String::with_capacity(64);
        fname.push_str("events/event-");
        let mut digits = Vec::with_capacity(8);
        push_padded(&mut digits, idx as u64, 5);
        fname.push_str(std::str::from_utf8(&digits).unwrap_or("00000"));
        fname.push('-');
        fname.push_str(self.id(idx));
        fname.push_str(".json");
        let private = !self.legacy();
        let res = self.write_file(&fname, &buf, private);
        self.context_tokens += buf.len() as i64 / 4;
        self.buf = buf;
        res?;
        self.counters.events += 1;
        self.head = Some(idx);
        if in_view {
            self.view.push(ViewItem::Event(idx));
        }
        Ok(idx)
    }
}

/// Picks the per-conversation plan and environment, then generates it.
pub(crate) fn generate(
    cfg: &GenConfig,
    prompts: &super::Prompts,
    index: usize,
    sink: &mut dyn Sink,
) -> Result<Counters, GenError> {
    let mut rng = Rng::new(derive(cfg.seed, index as u64));
    let sdk = match cfg.style {
        super::SdkStyle::V1_58 => Sdk::V158,
        super::SdkStyle::V1_0 => Sdk::V10,
        super::SdkStyle::Mixed => {
            if rng.below(2) == 0 {
                Sdk::V158
            } else {
                Sdk::V10
            }
        }
    };
    let spread = cfg.length_spread.clamp(0.0, 1.0);
    let base = cfg.events_per_conversation as f64;
    let events = if spread > 0.0 {
        let f = 1.0 + spread * (2.0 * rng.unit() - 1.0);
        ((base * f).round() as usize).max(1)
    } else {
        cfg.events_per_conversation.max(1)
    };
    let model = &MODELS[rng.weighted(MODEL_WEIGHTS).min(MODELS.len() - 1)];
    let condenser = if rng.chance(cfg.condenser_ratio) {
        let sizes = [10usize, 20, 40, 80, 120];
        Some(Condenser {
            max_size: sizes[rng.weighted(&[15, 20, 25, 20, 20]).min(4)],
            keep_first: rng.range(1, 4),
        })
    } else {
        None
    };
    let confirm = rng.chance(cfg.confirm_ratio);
    let subagents = if rng.chance(cfg.subagent_ratio) {
        rng.range(1, 2)
    } else {
        0
    };
    let branch = sdk == Sdk::V158 && condenser.is_none() && rng.chance(cfg.branch_ratio);
    let meta = rng.chance(cfg.meta_ratio);
    let user = rng.pick(USERS);
    let project = rng.pick(PROJECTS);
    let workspace = if meta {
        format!("/workspace/{project}")
    } else {
        format!("/home/{user}/projects/{project}")
    };
    let persist_root = if meta {
        "workspace/conversations".to_string()
    } else {
        format!("/home/{user}/.openhands/conversations")
    };
    // Conversations start over ~60 days from 2026-01-05, in index order
    // with jitter, during working hours more often than not.
    let day = 1_767_571_200_000_000i64 + (index as i64 % 60) * 86_400_000_000;
    let start =
        day + (8 * 3600 + rng.below(12 * 3600) as i64) * 1_000_000 + rng.below(1_000_000) as i64;
    let plan = Plan {
        sdk,
        events,
        model,
        condenser,
        confirm,
        subagents,
        branch,
        meta,
        is_subagent: false,
        task_prompt: String::new(),
    };
    let ps = match sdk {
        Sdk::V158 => &prompts.v158[..],
        Sdk::V10 => &prompts.v10[..],
    };
    let mut conv = Conv::new(
        cfg,
        ps,
        rng,
        plan,
        None,
        start,
        user,
        workspace,
        &persist_root,
        sink,
    );
    conv.run()?;
    Ok(conv.counters)
}
