//! One conversation: the scripted run that produces its events, and the
//! files that record it.

use super::jw::{Jw, Spelling, push_padded};
use super::prompt::Prompt;
use super::rng::{Rng, derive};
use super::text::{self, Output};
use super::{GenConfig, GenError, Sdk, Sink};
use crate::openhands::{
    KIND_ACTION, KIND_AGENT_ERROR, KIND_CONDENSATION, KIND_INTERRUPT, KIND_MESSAGE,
    KIND_OBSERVATION, KIND_PAUSE, KIND_SYSTEM_PROMPT, KIND_USER_REJECT,
};
use std::fmt::Write as _;

/// An LLM the conversation talks to.
pub(crate) struct Model {
    pub name: &'static str,
    pub input_cost: f64,
    pub output_cost: f64,
    /// Provider-style tool call ids: `toolu_01…` (Anthropic) or `call_…`.
    pub anthropic: bool,
    pub context_window: i64,
}

pub(crate) const MODELS: &[Model] = &[
    Model {
        name: "anthropic/claude-sonnet-4-5-20250929",
        input_cost: 3e-6,
        output_cost: 1.5e-5,
        anthropic: true,
        context_window: 200_000,
    },
    Model {
        name: "litellm_proxy/claude-opus-4-1-20250805",
        input_cost: 1.5e-5,
        output_cost: 7.5e-5,
        anthropic: true,
        context_window: 200_000,
    },
    Model {
        name: "openai/gpt-5-2025-08-07",
        input_cost: 1.25e-6,
        output_cost: 1e-5,
        anthropic: false,
        context_window: 272_000,
    },
    Model {
        name: "openai/gpt-4o",
        input_cost: 2.5e-6,
        output_cost: 1e-5,
        anthropic: false,
        context_window: 128_000,
    },
    Model {
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
    output: Option<Output>,
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
    pub model: &'static Model,
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

    fn thinking_blocks(&mut self, w: &mut Jw, with: bool) {
        w.key("thinking_blocks");
        w.begin_arr();
        if with {
            let n = self.rng.range(1, 2);
            for _ in 0..n {
                w.elem();
                self.s1.clear();
                if self.rng.below(5) == 0 {
                    let n = self.rng.range(24, 400);
                    text::base64ish(&mut self.trng, &mut self.s1, n);
                    w.begin(None);
                    w.kv_str("type", "redacted_thinking");
                    w.kv_str("data", &self.s1);
                    w.end();
                } else {
                    let len = self.rng.length(120.0 * self.scale(), 1.2, 10, 8_000);
                    text::prose(&mut self.trng, &mut self.s1, len);
                    self.s2.clear();
                    let n = self.rng.range(28, 360);
                    text::base64ish(&mut self.trng, &mut self.s2, n);
                    w.begin(None);
                    w.kv_str("type", "thinking");
                    w.kv_str("thinking", &self.s1);
                    w.kv_str("signature", &self.s2);
                    w.end();
                }
            }
        }
        w.end_arr();
    }

    fn system_prompt(&mut self) -> Result<(), GenError> {
        let Some(mut w) = self.start(KIND_SYSTEM_PROMPT, "agent") else {
            return Ok(());
        };
        let v = self.rng.below(self.prompts.len());
        if let Some(p) = self.prompts.get(v) {
            w.kv_raw("system_prompt", &p.system_prompt);
            w.key("tools");
            w.raw(&p.tools_head);
            if !p.tools_tail.is_empty() {
                let mut esc = Vec::with_capacity(self.workspace.len() + 2);
                crate::json::write::write_str(&mut esc, &self.workspace, self.sp.ascii);
                w.raw(esc.get(1..esc.len().saturating_sub(1)).unwrap_or(b""));
                w.raw(&p.tools_tail);
            }
        }
        self.commit(w, true)?;
        Ok(())
    }

    fn user_message(&mut self) -> Result<(), GenError> {
        let ms = self.rng.range(5_000, 600_000);
        self.tick(ms);
        let Some(mut w) = self.start(KIND_MESSAGE, "user") else {
            return Ok(());
        };
        self.s1.clear();
        if self.plan.is_subagent && self.user_messages.is_empty() {
            self.s1.push_str(&self.plan.task_prompt);
        } else {
            let len = self.rng.length(45.0 * self.scale(), 1.3, 8, 20_000);
            text::prose(&mut self.trng, &mut self.s1, len);
            if self.rng.below(4) == 0 {
                self.s1.push_str(" The file is ");
                text::rel_path(&mut self.trng, &mut self.s1);
                self.s1.push('.');
            }
        }
        let image = self.rng.below(40) == 0;
        w.key("llm_message");
        w.begin(None);
        w.kv_str("role", "user");
        w.key("content");
        w.begin_arr();
        w.elem();
        w.text_content(&self.s1);
        if image {
            self.s2.clear();
            self.s2
                .push_str("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA");
            let n = self.rng.range(200, 1200);
            text::base64ish(&mut self.trng, &mut self.s2, n);
            w.elem();
            w.begin(None);
            w.kv_bool("cache_prompt", false);
            w.kv_str("type", "image");
            w.kv_str_arr("image_urls", &[&self.s2]);
            w.end();
        }
        w.end_arr();
        if self.legacy() {
            w.kv_bool("cache_enabled", false);
            w.kv_bool("vision_enabled", false);
            w.kv_bool("function_calling_enabled", false);
            w.kv_bool("force_string_serializer", false);
        }
        w.kv_empty_arr("thinking_blocks");
        w.end();
        w.kv_empty_arr("activated_skills");
        w.kv_empty_arr("extended_content");
        let idx = self.commit(w, true)?;
        self.last_user_message = Some(idx);
        self.user_messages.push(idx);
        self.execution_status = "running";
        Ok(())
    }

    /// Records one LLM call and returns its response id.
    fn llm_call(&mut self, completion_median: f64, condenser: bool) -> String {
        self.responses += 1;
        let latency_ms = self.rng.length(2500.0, 1.2, 150, 120_000);
        self.tick(latency_ms);
        let mut rid = String::with_capacity(48);
        rid.push_str("chatcmpl-");
        if self.plan.model.anthropic {
            push_uuid(&mut self.rng, &mut rid, true);
        } else {
            text::alnum(&mut self.trng, &mut rid, 29);
        }
        let prompt_tokens = 6_000 + self.context_tokens.max(0);
        let completion_tokens = self.rng.length(completion_median, 1.0, 8, 16_000) as i64;
        let cache_read = if self.responses <= 1 {
            0
        } else {
            prompt_tokens * (70 + self.rng.below(28) as i64) / 100
        };
        let reasoning_tokens = if self.rng.below(3) == 0 {
            completion_tokens / 3
        } else {
            0
        };
        let m = self.plan.model;
        let cost = prompt_tokens as f64 * m.input_cost + completion_tokens as f64 * m.output_cost;
        let call = LlmCall {
            response_id: rid.clone(),
            prompt_tokens,
            completion_tokens,
            cache_read_tokens: cache_read,
            reasoning_tokens,
            latency: latency_ms as f64 / 1000.0 + self.rng.unit() * 0.001,
            cost,
            timestamp: self.epoch_secs(),
            model: m.name,
        };
        if condenser {
            self.condenser_calls.push(call);
        } else {
            self.agent_calls.push(call);
        }
        rid
    }

    fn agent_message(&mut self, rid: &str) -> Result<(), GenError> {
        let Some(mut w) = self.start(KIND_MESSAGE, "agent") else {
            return Ok(());
        };
        self.s1.clear();
        let len = self.rng.length(40.0 * self.scale(), 1.2, 4, 20_000);
        text::prose(&mut self.trng, &mut self.s1, len);
        self.final_answer.clear();
        self.final_answer.push_str(&self.s1);
        let reasoning = self.rng.below(10) == 0;
        let thinking = self.rng.below(20) == 0;
        w.key("llm_message");
        w.begin(None);
        w.kv_str("role", "assistant");
        w.kv_text_list("content", &self.s1);
        if self.legacy() {
            w.kv_bool("cache_enabled", false);
            w.kv_bool("vision_enabled", false);
            w.kv_bool("function_calling_enabled", false);
            w.kv_bool("force_string_serializer", false);
        }
        if reasoning {
            self.s2.clear();
            let len = self.rng.length(90.0 * self.scale(), 1.0, 8, 8_000);
            text::prose(&mut self.trng, &mut self.s2, len);
            w.kv_str("reasoning_content", &self.s2);
        }
        self.thinking_blocks(&mut w, thinking);
        w.end();
        w.kv_str("llm_response_id", rid);
        w.kv_empty_arr("activated_skills");
        w.kv_empty_arr("extended_content");
        self.commit(w, true)?;
        self.execution_status = "finished";
        Ok(())
    }

    fn tool_call_id(&mut self, out: &mut String) {
        if self.plan.model.anthropic {
            out.push_str("toolu_01");
            text::alnum(&mut self.trng, out, 22);
        } else {
            out.push_str("call_");
            text::alnum(&mut self.trng, out, 24);
        }
    }

    fn abs_path(&mut self, out: &mut String) {
        out.push_str(&self.workspace);
        out.push('/');
        text::rel_path(&mut self.trng, out);
    }

    /// Fills a call's arguments for its tool.
    fn prepare(&mut self, tool: Tool) -> Call {
        let mut c = Call {
            tool: Some(tool),
            ..Call::default()
        };
        self.tool_call_id(&mut c.tool_call_id);
        let scale = self.scale();
        match tool {
            Tool::Terminal => {
                let kinds = [
                    Output::Listing,
                    Output::Tests,
                    Output::Grep,
                    Output::Git,
                    Output::Install,
                    Output::Traceback,
                    Output::Plain,
                ];
                let k = kinds[self.rng.weighted(&[20, 20, 15, 10, 5, 5, 25]).min(6)];
                text::command(&mut self.trng, &mut c.command, k);
                c.output = Some(k);
                c.exit_code = match k {
                    Output::Tests if self.rng.below(3) == 0 => 1,
                    Output::Traceback => 1,
                    Output::Grep if self.rng.below(5) == 0 => 1,
                    _ => 0,
                };
                if self.rng.below(100) == 0 {
                    c.timeout = true;
                    c.exit_code = -1;
                }
                if self.rng.below(50) == 0 {
                    c.exit_code = 127;
                }
            }
            Tool::FileEditor => {
                let cmd = if self.files.is_empty() {
                    0
                } else {
                    self.rng.weighted(&[25, 40, 28, 7])
                };
                match cmd {
                    0 => {
                        // create
                        c.command.push_str("create");
                        self.abs_path(&mut c.path);
                        let lines = self.rng.length(3.5 * scale, 1.0, 1, 2_000);
                        text::code(&mut self.trng, &mut c.a, lines);
                    }
                    1 => {
                        c.command.push_str("view");
                        let f = self.rng.below(self.files.len());
                        c.file = Some(f);
                        if let Some((p, _)) = self.files.get(f) {
                            c.path.push_str(p);
                        }
                        if self.rng.below(20) == 0 {
                            // A path that does not exist: an error observation.
                            c.path.clear();
                            self.abs_path(&mut c.path);
                            c.file = None;
                            c.is_error = true;
                        }
                    }
                    _ => {
                        let insert = cmd == 3;
                        c.command
                            .push_str(if insert { "insert" } else { "str_replace" });
                        let f = self.rng.below(self.files.len());
                        c.file = Some(f);
                        if let Some((p, body)) = self.files.get(f) {
                            c.path.push_str(p);
                            c.before.push_str(body);
                        }
                        let nlines = c.before.lines().count().max(1);
                        if insert {
                            c.insert_line = self.rng.below(nlines + 1);
                        } else {
                            // old_str: a run of lines of the file.
                            let from = self.rng.below(nlines);
                            let n = self.rng.range(1, 3);
                            let snippet: Vec<&str> = c.before.lines().skip(from).take(n).collect();
                            c.b.push_str(&snippet.join("\n"));
                        }
                        let lines = self.rng.length(1.2 * scale, 0.8, 1, 400);
                        text::code(&mut self.trng, &mut c.a, lines);
                        while c.a.ends_with('\n') {
                            c.a.pop();
                        }
                    }
                }
            }
            Tool::TaskTracker => {
                if self.tasks.is_empty() || self.rng.below(3) == 0 {
                    c.command.push_str("plan");
                    let n = self.rng.range(2, 6);
                    let keep = self.tasks.len();
                    if keep == 0 {
                        for _ in 0..n {
                            let mut t = String::new();
                            let n = self.rng.range(2, 5);
                            text::title(&mut self.trng, &mut t, n);
                            let mut notes = String::new();
                            if self.rng.below(2) == 0 {
                                let n = self.rng.range(2, 6);
                                text::phrase(&mut self.trng, &mut notes, n);
                            }
                            self.tasks.push(TaskItem {
                                title: t,
                                notes,
                                status: "todo",
                            });
                        }
                    }
                    // Advance: the first not-done task is in progress or done.
                    if let Some(t) = self.tasks.iter_mut().find(|t| t.status != "done") {
                        t.status = if t.status == "in_progress" {
                            "done"
                        } else {
                            "in_progress"
                        };
                    }
                } else {
                    c.command.push_str("view");
                }
            }
            Tool::Think => {
                let len = self.rng.length(20.0 * scale, 1.0, 8, 8_000);
                text::prose(&mut self.trng, &mut c.a, len);
            }
            Tool::Finish => {
                let len = self.rng.length(50.0 * scale, 1.0, 8, 8_000);
                text::prose(&mut self.trng, &mut c.a, len);
            }
            Tool::Task => {
                let n = self.rng.range(2, 5);
                text::phrase(&mut self.trng, &mut c.b, n);
                let len = self.rng.length(120.0 * scale, 1.0, 20, 4_000);
                text::prose(&mut self.trng, &mut c.a, len);
                c.command.push_str(if self.rng.below(2) == 0 {
                    "code_reviewer"
                } else {
                    "researcher"
                });
            }
        }
        c
    }

    fn tool_name(tool: Tool, legacy: bool) -> &'static str {
        match tool {
            Tool::Terminal => "terminal",
            Tool::FileEditor => "file_editor",
            Tool::TaskTracker => "task_tracker",
            Tool::Think => "think",
            Tool::Finish => "finish",
            Tool::Task => {
                if legacy {
                    "delegate"
                } else {
                    "task"
                }
            }
        }
    }

    fn summary(c: &Call, out: &mut String) {
        let word = c.command.split_whitespace().next().unwrap_or("");
        match c.tool {
            Some(Tool::Terminal) => {
                out.push_str("run ");
                out.push_str(word);
            }
            Some(Tool::FileEditor) => {
                out.push_str(&c.command);
                out.push(' ');
                out.push_str(c.path.rsplit('/').next().unwrap_or(""));
            }
            Some(Tool::TaskTracker) => out.push_str(if c.command == "plan" {
                "plan tasks"
            } else {
                "view tasks"
            }),
            Some(Tool::Think) => out.push_str("note"),
            Some(Tool::Finish) => out.push_str("finish the task"),
            Some(Tool::Task) => out.push_str("delegate work"),
            None => {}
        }
    }

    /// Writes the `action` object and the `arguments` string of a call.
    fn action_and_args(&mut self, w: &mut Jw, c: &Call, summary: &str) {
        let legacy = self.legacy();
        let mut a = Jw::new(std::mem::take(&mut self.args), Spelling::PY_DUMPS);
        a.begin(None);
        w.key("action");
        match c.tool {
            Some(Tool::Terminal) => {
                w.begin(Some(if legacy {
                    "ExecuteBashAction"
                } else {
                    "TerminalAction"
                }));
                w.kv_str("command", &c.command);
                w.kv_bool("is_input", false);
                a.kv_str("command", &c.command);
                if c.timeout {
                    w.kv_float("timeout", 30.0);
                    a.kv_float("timeout", 30.0);
                }
                w.kv_bool("reset", false);
                w.end();
            }
            Some(Tool::FileEditor) => {
                w.begin(Some("FileEditorAction"));
                w.kv_str("command", &c.command);
                w.kv_str("path", &c.path);
                a.kv_str("command", &c.command);
                a.kv_str("path", &c.path);
                match c.command.as_str() {
                    "create" => {
                        w.kv_str("file_text", &c.a);
                        a.kv_str("file_text", &c.a);
                    }
                    "str_replace" => {
                        w.kv_str("old_str", &c.b);
                        w.kv_str("new_str", &c.a);
                        a.kv_str("old_str", &c.b);
                        a.kv_str("new_str", &c.a);
                    }
                    "insert" => {
                        w.kv_str("new_str", &c.a);
                        w.kv_int("insert_line", c.insert_line as i64);
                        a.kv_int("insert_line", c.insert_line as i64);
                        a.kv_str("new_str", &c.a);
                    }
                    _ => {}
                }
                w.end();
            }
            Some(Tool::TaskTracker) => {
                w.begin(Some("TaskTrackerAction"));
                w.kv_str("command", &c.command);
                a.kv_str("command", &c.command);
                if c.command == "plan" {
                    w.key("task_list");
                    a.key("task_list");
                    Self::task_list(w, &self.tasks);
                    Self::task_list(&mut a, &self.tasks);
                }
                w.end();
            }
            Some(Tool::Think) => {
                w.begin(Some("ThinkAction"));
                w.kv_str("thought", &c.a);
                a.kv_str("thought", &c.a);
                w.end();
            }
            Some(Tool::Finish) => {
                w.begin(Some("FinishAction"));
                w.kv_str("message", &c.a);
                a.kv_str("message", &c.a);
                w.end();
            }
            Some(Tool::Task) => {
                if legacy {
                    w.begin(Some("DelegateAction"));
                    w.kv_str("command", "delegate");
                    w.key("tasks");
                    w.begin(None);
                    w.kv_str(&c.command, &c.a);
                    w.end();
                    w.end();
                    a.kv_str("command", "delegate");
                    a.key("tasks");
                    a.begin(None);
                    a.kv_str(&c.command, &c.a);
                    a.end();
                } else {
                    w.begin(Some("TaskAction"));
                    w.kv_str("description", &c.b);
                    w.kv_str("prompt", &c.a);
                    w.kv_str("subagent_type", &c.command);
                    w.end();
                    a.kv_str("prompt", &c.a);
                    a.kv_str("subagent_type", &c.command);
                    a.kv_str("description", &c.b);
                }
            }
            None => {}
        }
        a.kv_str("security_risk", "LOW");
        if !legacy {
            a.kv_str("summary", summary);
        }
        a.end();
        let args = a.into_inner();
        let tool = c.tool.map(|t| Self::tool_name(t, legacy)).unwrap_or("");
        w.kv_str("tool_name", tool);
        w.kv_str("tool_call_id", &c.tool_call_id);
        w.key("tool_call");
        w.begin(None);
        w.kv_str("id", &c.tool_call_id);
        w.kv_str("name", tool);
        w.key("arguments");
        // The arguments are JSON text inside a JSON string.
        w.str(std::str::from_utf8(&args).unwrap_or(""));
        w.kv_str("origin", "completion");
        w.end();
        self.args = args;
    }

    fn task_list(w: &mut Jw, tasks: &[TaskItem]) {
        w.begin_arr();
        for t in tasks {
            w.elem();
            w.begin(None);
            w.kv_str("title", &t.title);
            w.kv_str("notes", &t.notes);
            w.kv_str("status", t.status);
            w.end();
        }
        w.end_arr();
    }

    /// The first action of a response carries its thought, reasoning and
    /// thinking blocks; the others carry empty lists.
    fn action_event(&mut self, c: &mut Call, rid: &str, first: bool) -> Result<bool, GenError> {
        let ms = self.rng.range(1, 4);
        self.tick(ms);
        let Some(mut w) = self.start(KIND_ACTION, "agent") else {
            return Ok(false);
        };
        let with_thought = first && self.rng.below(10) < 6;
        let reasoning = first && self.rng.below(10) == 0;
        let thinking = first && self.rng.below(20) == 0;
        w.key("thought");
        w.begin_arr();
        if with_thought {
            self.s1.clear();
            let len = self.rng.length(40.0 * self.scale(), 1.0, 6, 4_000);
            text::prose(&mut self.trng, &mut self.s1, len);
            w.elem();
            w.text_content(&self.s1);
        }
        w.end_arr();
        if reasoning {
            self.s1.clear();
            let len = self.rng.length(90.0 * self.scale(), 1.0, 8, 8_000);
            text::prose(&mut self.trng, &mut self.s1, len);
            w.kv_str("reasoning_content", &self.s1);
        }
        self.thinking_blocks(&mut w, thinking);
        let mut summary = String::new();
        Self::summary(c, &mut summary);
        self.action_and_args(&mut w, c, &summary);
        w.kv_str("llm_response_id", rid);
        w.kv_str("security_risk", "UNKNOWN");
        if !self.legacy() {
            w.kv_str("summary", &summary);
        }
        c.action_index = self.commit(w, true)?;
        Ok(true)
    }

    fn observation_event(&mut self, c: &Call) -> Result<(), GenError> {
        let legacy = self.legacy();
        let tool = c.tool.unwrap_or(Tool::Terminal);
        let ms = match tool {
            Tool::Terminal => self.rng.length(400.0, 2.0, 5, 120_000),
            _ => self.rng.range(1, 30),
        };
        self.tick(ms);
        if c.rejected {
            let Some(mut w) = self.start(KIND_USER_REJECT, "environment") else {
                return Ok(());
            };
            w.kv_str("tool_name", Self::tool_name(tool, legacy));
            w.kv_str("tool_call_id", &c.tool_call_id);
            self.s1.clear();
            self.s1.push_str("User rejected: ");
            let n = self.rng.range(2, 8);
            text::phrase(&mut self.trng, &mut self.s1, n);
            w.kv_str("rejection_reason", &self.s1);
            if !legacy {
                w.kv_str("rejection_source", "user");
            }
            w.kv_str("action_id", self.id(c.action_index));
            self.commit(w, true)?;
            return Ok(());
        }
        let Some(mut w) = self.start(KIND_OBSERVATION, "environment") else {
            return Ok(());
        };
        w.kv_str("tool_name", Self::tool_name(tool, legacy));
        w.kv_str("tool_call_id", &c.tool_call_id);
        w.key("observation");
        let scale = self.scale();
        match tool {
            Tool::Terminal => {
                w.begin(Some(if legacy {
                    "ExecuteBashObservation"
                } else {
                    "TerminalObservation"
                }));
                self.s1.clear();
                let empty = self.rng.below(10) < 3;
                let target = if empty {
                    0
                } else {
                    self.rng.length(70.0 * scale, 1.6, 4, 30_000)
                };
                text::terminal_output(
                    &mut self.trng,
                    &mut self.s1,
                    c.output.unwrap_or(Output::Plain),
                    target,
                );
                if c.exit_code == 127 {
                    self.s1.clear();
                    self.s1.push_str("bash: ");
                    self.s1
                        .push_str(c.command.split_whitespace().next().unwrap_or(""));
                    self.s1.push_str(": command not found");
                }
                w.kv_text_list("content", &self.s1);
                w.kv_bool("is_error", false);
                w.kv_str("command", &c.command);
                if !legacy {
                    w.kv_int("exit_code", c.exit_code);
                }
                w.kv_bool("timeout", false);
                w.key("metadata");
                w.begin(None);
                w.kv_int("exit_code", c.exit_code);
                w.kv_int("pid", -1);
                if !c.timeout {
                    w.kv_str("username", self.user);
                    w.kv_str("hostname", "devbox");
                    w.kv_str("working_dir", &self.workspace);
                    w.kv_str("py_interpreter_path", "/usr/bin/python3");
                }
                w.kv_str("prefix", "");
                self.s2.clear();
                if c.timeout {
                    self.s2.push_str("\n[The command timed out after 30.0 seconds. Send empty command '' to see more output, send keys to interrupt it, or use the timeout parameter.]");
                } else {
                    let _ = write!(
                        self.s2,
                        "\n[The command completed with exit code {}.]",
                        c.exit_code
                    );
                }
                w.kv_str("suffix", &self.s2);
                w.end();
                if !legacy && !self.s1.is_empty() {
                    self.s2.clear();
                    self.s2.push_str(&self.persistence_dir);
                    self.s2.push_str("/observations");
                    w.kv_str("full_output_save_dir", &self.s2);
                }
                w.end();
            }
            Tool::FileEditor => {
                w.begin(Some("FileEditorObservation"));
                self.s1.clear();
                let mut after: Option<String> = None;
                if c.is_error {
                    let _ = write!(
                        self.s1,
                        "Invalid `path` parameter: {p}. The path {p} does not exist. Please provide a valid path.",
                        p = c.path
                    );
                } else {
                    match c.command.as_str() {
                        "create" => {
                            let _ = write!(self.s1, "File created successfully at: {}", c.path);
                            after = Some(c.a.clone());
                        }
                        "view" => {
                            let body = c
                                .file
                                .and_then(|f| self.files.get(f))
                                .map(|(_, b)| b.as_str())
                                .unwrap_or("");
                            let _ = writeln!(
                                self.s1,
                                "Here's the result of running `cat -n` on {}:",
                                c.path
                            );
                            text::numbered(&mut self.s1, body, 1);
                        }
                        _ => {
                            let new = if c.command == "insert" {
                                let mut lines: Vec<&str> = c.before.lines().collect();
                                let at = c.insert_line.min(lines.len());
                                lines.insert(at, &c.a);
                                let mut s = lines.join("\n");
                                s.push('\n');
                                s
                            } else if c.b.is_empty() {
                                c.before.clone()
                            } else {
                                c.before.replacen(&c.b, &c.a, 1)
                            };
                            let _ = writeln!(
                                self.s1,
                                "The file {p} has been edited. Here's the result of running `cat -n` on a snippet of {p}:",
                                p = c.path
                            );
                            let snippet: String =
                                new.lines().take(6).collect::<Vec<_>>().join("\n");
                            text::numbered(&mut self.s1, &snippet, 1);
                            self.s1.push_str("Review the changes and make sure they are as expected. Edit the file again if necessary.");
                            after = Some(new);
                        }
                    }
                }
                w.kv_text_list("content", &self.s1);
                w.kv_bool("is_error", c.is_error);
                w.kv_str("command", &c.command);
                if !c.is_error {
                    w.kv_str("path", &c.path);
                }
                w.kv_bool("prev_exist", c.command != "create");
                if matches!(c.command.as_str(), "str_replace" | "insert") && !c.is_error {
                    w.kv_str("old_content", &c.before);
                }
                if let Some(new) = &after {
                    w.kv_str("new_content", new);
                }
                w.end();
                if let Some(new) = after {
                    match c.file.and_then(|f| self.files.get_mut(f)) {
                        Some(slot) => slot.1 = new,
                        None => {
                            if self.files.len() < 24 {
                                self.files.push((c.path.clone(), new));
                            }
                        }
                    }
                }
            }
            Tool::TaskTracker => {
                w.begin(Some("TaskTrackerObservation"));
                self.s1.clear();
                if c.command == "plan" {
                    let _ = write!(
                        self.s1,
                        "Task list has been updated with {} item(s).",
                        self.tasks.len()
                    );
                } else {
                    for (i, t) in self.tasks.iter().enumerate() {
                        let _ = writeln!(self.s1, "{}. [{}] {}", i + 1, t.status, t.title);
                    }
                }
                w.kv_text_list("content", &self.s1);
                w.kv_bool("is_error", false);
                w.kv_str("command", &c.command);
                w.key("task_list");
                Self::task_list(&mut w, &self.tasks);
                w.end();
            }
            Tool::Think => {
                w.begin(Some("ThinkObservation"));
                w.kv_text_list("content", "Your thought has been logged.");
                w.kv_bool("is_error", false);
                w.end();
            }
            Tool::Finish => {
                w.begin(Some("FinishObservation"));
                w.kv_text_list("content", &c.a);
                w.kv_bool("is_error", false);
                w.end();
            }
            Tool::Task => {
                if legacy {
                    w.begin(Some("DelegateObservation"));
                    self.s1.clear();
                    let _ = write!(self.s1, "Agent {} finished: ", c.command);
                    let len = self.rng.length(120.0 * scale, 1.0, 10, 4_000);
                    text::prose(&mut self.trng, &mut self.s1, len);
                    w.kv_text_list("content", &self.s1);
                    w.kv_bool("is_error", false);
                    w.kv_str("command", "delegate");
                    w.end();
                } else {
                    w.begin(Some("TaskObservation"));
                    w.kv_text_list("content", &c.b);
                    w.kv_bool("is_error", false);
                    w.kv_str("task_id", &c.path);
                    w.kv_str("subagent", &c.command);
                    w.kv_str("status", "completed");
                    w.end();
                }
            }
        }
        w.kv_str("action_id", self.id(c.action_index));
        if !legacy {
            w.kv_empty_arr("extended_content");
        }
        self.commit(w, true)?;
        Ok(())
    }

    /// A tool call the agent could not make: an `ActionEvent` without
    /// `action`, then an `AgentErrorEvent`.
    fn failed_call(&mut self, rid: &str) -> Result<(), GenError> {
        let legacy = self.legacy();
        let ms = self.rng.range(1, 4);
        self.tick(ms);
        let Some(mut w) = self.start(KIND_ACTION, "agent") else {
            return Ok(());
        };
        let mut call_id = String::new();
        self.tool_call_id(&mut call_id);
        let kind = self.rng.below(3);
        let (tool, args, error) = match kind {
            0 => (
                "run_shell".to_string(),
                "{\"cmd\": \"ls -la\"}".to_string(),
                "Tool 'run_shell' not found. Available: ['terminal', 'file_editor', 'task_tracker', 'finish', 'think']".to_string(),
            ),
            1 => {
                let e = "Error validating tool 'terminal': Expecting value: line 1 column 34 (char 33). Arguments: unparseable JSON".to_string();
                let a = if legacy {
                    "{\"command\": \"ls -la\", \"timeout\": }".to_string()
                } else {
                    // 1.58 replaces unparseable arguments by a marker object.
                    let mut s = String::from("{\"_openhands_malformed_tool_call\": true, \"error\": ");
                    let mut v = Vec::new();
                    crate::json::write::write_str(&mut v, &e, true);
                    s.push_str(std::str::from_utf8(&v).unwrap_or("\"\""));
                    s.push('}');
                    s
                };
                ("terminal".to_string(), a, e)
            }
            _ => (
                "file_editor".to_string(),
                "{\"command\": \"view\"}".to_string(),
                "Error validating tool 'file_editor': 1 validation error for FileEditorAction\npath\n  Field required [type=missing, input_value={'command': 'view'}, input_type=dict]. Parameters provided: ['command']".to_string(),
            ),
        };
        w.key("thought");
        w.begin_arr();
        if self.rng.below(2) == 0 {
            self.s1.clear();
            text::prose(&mut self.trng, &mut self.s1, 20);
            w.elem();
            w.text_content(&self.s1);
        }
        w.end_arr();
        w.kv_empty_arr("thinking_blocks");
        w.kv_str("tool_name", &tool);
        w.kv_str("tool_call_id", &call_id);
        w.key("tool_call");
        w.begin(None);
        w.kv_str("id", &call_id);
        w.kv_str("name", &tool);
        w.kv_str("arguments", &args);
        w.kv_str("origin", "completion");
        w.end();
        w.kv_str("llm_response_id", rid);
        w.kv_str("security_risk", "UNKNOWN");
        self.commit(w, true)?;
        let Some(mut w) = self.start(KIND_AGENT_ERROR, "agent") else {
            return Ok(());
        };
        w.kv_str("tool_name", &tool);
        w.kv_str("tool_call_id", &call_id);
        w.kv_str("error", &error);
        if !legacy {
            w.key("classification");
            w.begin(None);
            w.kv_str("kind", "agent_action");
            w.kv_bool("retryable", true);
            w.kv_str("user_action", "retry");
            w.end();
        }
        self.commit(w, true)?;
        Ok(())
    }

    fn simple_event(&mut self, kind: &'static str) -> Result<(), GenError> {
        let ms = self.rng.range(50, 2_000);
        self.tick(ms);
        let Some(w) = self.start(kind, "user") else {
            return Ok(());
        };
        self.commit(w, false)?;
        Ok(())
    }

    fn condense_if_needed(&mut self) -> Result<(), GenError> {
        let Some(cond) = self.plan.condenser else {
            return Ok(());
        };
        if self.view.len() <= cond.max_size || !self.room() {
            return Ok(());
        }
        let keep = cond.keep_first.min(self.view.len());
        let forget_n = (self.view.len() - keep) / 2;
        if forget_n == 0 {
            return Ok(());
        }
        let forgotten: Vec<ViewItem> = self.view.drain(keep..keep + forget_n).collect();
        let rid = self.llm_call(300.0, true);
        let Some(mut w) = self.start(KIND_CONDENSATION, "environment") else {
            return Ok(());
        };
        // Python writes the forgotten ids from a set: no useful order.
        let mut order: Vec<usize> = (0..forgotten.len()).collect();
        for i in (1..order.len()).rev() {
            let j = self.rng.below(i + 1);
            order.swap(i, j);
        }
        w.key("forgotten_event_ids");
        w.begin_arr();
        for &o in &order {
            w.elem();
            match forgotten.get(o) {
                Some(ViewItem::Event(e)) => w.str(self.id(*e)),
                Some(ViewItem::Summary(e)) => {
                    let mut sid = String::with_capacity(44);
                    sid.push_str(self.id(*e));
                    sid.push_str("-summary");
                    w.str(&sid);
                }
                None => w.str(""),
            }
        }
        w.end_arr();
        self.s1.clear();
        self.s1.push_str("USER_CONTEXT: ");
        let len = self.rng.length(180.0 * self.scale(), 0.8, 40, 16_000);
        text::prose(&mut self.trng, &mut self.s1, len);
        self.s1.push_str("\nPENDING: ");
        text::phrase(&mut self.trng, &mut self.s1, 6);
        w.kv_str("summary", &self.s1);
        w.kv_int("summary_offset", keep as i64);
        w.kv_str("llm_response_id", &rid);
        let idx = self.commit(w, false)?;
        self.view.insert(keep, ViewItem::Summary(idx));
        self.context_tokens =
            self.context_tokens * (self.view.len() as i64) / (self.view.len() + forget_n) as i64;
        Ok(())
    }

    /// One LLM response with tool calls, and their observations.
    fn tool_response(&mut self) -> Result<bool, GenError> {
        let rid = self.llm_call(150.0, false);
        if self.rng.below(60) == 0 {
            self.failed_call(&rid)?;
            return Ok(true);
        }
        let n = if self.plan.is_subagent {
            1
        } else {
            1 + self.rng.weighted(&[80, 10, 6, 4])
        };
        let mut calls = std::mem::take(&mut self.calls);
        calls.clear();
        for _ in 0..n {
            let tool = if self.subagents_due > 0 && self.rng.below(6) == 0 {
                self.subagents_due -= 1;
                Tool::Task
            } else {
                let tools = if self.plan.is_subagent {
                    &[60u32, 30, 0, 10][..]
                } else {
                    &[52u32, 34, 6, 8][..]
                };
                [
                    Tool::Terminal,
                    Tool::FileEditor,
                    Tool::TaskTracker,
                    Tool::Think,
                ][self.rng.weighted(tools).min(3)]
            };
            let c = self.prepare(tool);
            calls.push(c);
        }
        let mut written = 0;
        for (i, c) in calls.iter_mut().enumerate() {
            if !self.action_event(c, &rid, i == 0)? {
                break;
            }
            written += 1;
        }
        let mut rejected = false;
        if self.plan.confirm && self.rng.below(8) == 0 {
            self.execution_status = "waiting_for_confirmation";
            for c in calls.iter_mut() {
                c.rejected = true;
            }
            rejected = true;
        }
        for c in calls.iter_mut().take(written) {
            if c.tool == Some(Tool::Task) {
                self.run_task(c)?;
            }
            if c.tool == Some(Tool::TaskTracker) && c.command == "plan" {
                // The observation shows the list as planned.
            }
            self.observation_event(c)?;
        }
        self.calls = calls;
        Ok(!rejected)
    }

    /// A sub-agent run (1.58: its own conversation under `subagents/`).
    fn run_task(&mut self, c: &mut Call) -> Result<(), GenError> {
        self.tasks_spawned += 1;
        let task_id = format!("task_{:08}", self.tasks_spawned);
        c.path = task_id.clone();
        if self.legacy() {
            return Ok(());
        }
        let sub_seed = derive(self.rng.next_u64(), 0x5AB);
        let rng = Rng::new(sub_seed);
        let plan = Plan {
            sdk: self.plan.sdk,
            events: self.rng.range(7, 16),
            model: self.plan.model,
            condenser: None,
            confirm: false,
            subagents: 0,
            branch: false,
            meta: false,
            is_subagent: true,
            task_prompt: c.a.clone(),
        };
        let parent_dir = self.dir.clone();
        let sub_root = format!("{}/subagents", self.persistence_dir);
        let workspace = self.workspace.clone();
        let (calls, answer, counters) = {
            let mut sub = Conv::new(
                self.cfg,
                self.prompts,
                rng,
                plan,
                Some(&parent_dir),
                self.now_us + 100_000,
                self.user,
                workspace,
                &sub_root,
                &mut *self.sink,
            );
            sub.run()?;
            let mut all = sub.agent_calls.clone();
            all.extend(sub.condenser_calls.iter().cloned());
            let end = sub.now_us;
            (all, (sub.final_answer.clone(), end), sub.counters)
        };
        self.counters.files += counters.files;
        self.counters.bytes += counters.bytes;
        self.counters.subagents += 1 + counters.subagents;
        self.now_us = self.now_us.max(answer.1);
        c.b = if answer.0.is_empty() {
            "The sub-agent finished without a final message.".to_string()
        } else {
            answer.0
        };
        self.task_metrics.push(TaskMetrics {
            key: format!("task:{task_id}"),
            calls,
        });
        Ok(())
    }

    fn finish_response(&mut self) -> Result<(), GenError> {
        let rid = self.llm_call(120.0, false);
        let mut c = self.prepare(Tool::Finish);
        if self.action_event(&mut c, &rid, true)? {
            self.final_answer.clear();
            self.final_answer.push_str(&c.a);
            self.observation_event(&c)?;
            self.execution_status = "finished";
        }
        Ok(())
    }

    /// One user turn: the message, then agent steps until it answers (or
    /// is paused/interrupted/rejected).
    fn turn(&mut self, first: bool) -> Result<(), GenError> {
        if !first && self.plan.branch && self.user_messages.len() >= 2 && self.rng.below(4) == 0 {
            // navigate_to: the new message continues from an older point,
            // leaving the events after it as an abandoned branch.
            self.plan.branch = false;
            let k = self.rng.below(self.user_messages.len());
            if let Some(&u) = self.user_messages.get(k) {
                self.head = if u == 0 { None } else { Some(u - 1) };
            }
        }
        self.user_message()?;
        let steps = self.rng.length(7.0, 1.0, 1, 60);
        for s in 0..steps {
            if !self.room() {
                return Ok(());
            }
            self.condense_if_needed()?;
            if self.rng.below(150) == 0 {
                self.simple_event(KIND_PAUSE)?;
                self.execution_status = "paused";
                return Ok(());
            }
            if !self.legacy() && self.rng.below(250) == 0 {
                self.simple_event(KIND_INTERRUPT)?;
                self.execution_status = "paused";
                return Ok(());
            }
            if s + 1 == steps {
                break;
            }
            if !self.tool_response()? {
                // Rejected: the agent answers and waits for the user.
                let rid = self.llm_call(60.0, false);
                return self.agent_message(&rid);
            }
        }
        if self.rng.below(10) < 3 {
            self.finish_response()
        } else {
            let rid = self.llm_call(120.0, false);
            self.agent_message(&rid)
        }
    }

    /// A sub-agent's run: the task prompt, single tool calls while three
    /// events are left, and a final answer (which the parent's
    /// `TaskObservation` reports), so `planned - 1` or `planned` events.
    fn sub_turn(&mut self) -> Result<(), GenError> {
        self.user_message()?;
        while self.plan.events.saturating_sub(self.len()) >= 3 {
            self.tool_response()?;
        }
        let rid = self.llm_call(120.0, false);
        self.agent_message(&rid)
    }

    /// Writes the whole conversation.
    pub(crate) fn run(&mut self) -> Result<(), GenError> {
        self.mkdir("")?;
        self.mkdir("events")?;
        self.system_prompt()?;
        if self.plan.is_subagent {
            self.sub_turn()?;
        }
        let mut first = true;
        while self.room() && !self.plan.is_subagent {
            self.turn(first)?;
            first = false;
        }
        super::state::write_sidecars(self)?;
        Ok(())
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
        super::Style::V1_58 => Sdk::V158,
        super::Style::V1_0 => Sdk::V10,
        super::Style::Mixed => {
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
