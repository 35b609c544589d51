//! Synthetic OpenHands conversation stores, for benchmarks, tests and the
//! bundled sample (feature `gen`).
//!
//! [`write_store`] writes `conversations` conversation directories into an
//! empty directory, laid out as the OpenHands SDK lays them out (the SDK's
//! `openhands/sdk/conversation/` persistence code, and the real corpus in
//! `tests/data/corpus/openhands`):
//!
//! ```text
//! <32 hex>/base_state.json             agent + LLM config, stats.usage_to_metrics
//! <32 hex>/meta.json                   sometimes (agent-server conversations)
//! <32 hex>/TASKS.json                  when the task tracker planned tasks
//! <32 hex>/events/event-00000-<uuid>.json ...
//! <32 hex>/events/.eventlog.lock, .eventlog-len-N.marker   (1.58 style)
//! <32 hex>/subagents/<32 hex>/...      task-tool sub-agents (1.58 style)
//! ```
//!
//! Each conversation is a scripted run: a `SystemPromptEvent` (about
//! 20–28 KB, shared by all conversations of a store up to the workspace
//! path), then user turns of agent steps — LLM responses with one to four
//! parallel tool calls (sharing `llm_response_id`; only the first carries
//! `thought`, `reasoning_content`, `thinking_blocks`) and their
//! observations (terminal, file editor, task tracker, think, finish, task),
//! closing with an agent `MessageEvent` or a `finish` call. Mixed in at
//! rates close to what real conversations show: failed tool calls
//! (`ActionEvent` without `action` + `AgentErrorEvent`), rejected actions
//! (`UserRejectObservation`, conversations in confirmation mode),
//! `PauseEvent`s, `InterruptEvent`s, `Condensation`s (conversations with a
//! condenser; `forgotten_event_ids` in set order, naming earlier
//! `<id>-summary` events), user images, and `navigate_to` branches
//! (`parent_id` pointing back; 1.58 style).
//!
//! Two spellings, as the SDK wrote them: [`SdkStyle::V1_58`] (pydantic's
//! compact JSON, `kind` last, `parent_id` chains, `summary` members,
//! sidecar files, files mode 0600) and [`SdkStyle::V1_0`] (`json.dumps` with
//! `", "` separators, `\uXXXX` escapes, `kind` first, `ExecuteBash*` kinds,
//! no `parent_id`, no sidecars, delegate sub-agents without directories).
//! [`SdkStyle::Mixed`] picks one per conversation.
//!
//! # Sizes
//!
//! With `content_scale = 1.0` per-kind file sizes follow the shared corpus
//! (per-kind medians mostly within 15 %, see the table in
//! `examples/README.md`): events are small (median about 800 bytes), the
//! system prompt is the one large event; 1,000 conversations × 200 events
//! take about 240 MB. Real-world conversations carry far more text (long
//! command outputs, whole files in file-editor observations, which hold the
//! file before and after each edit). `content_scale` multiplies every
//! free-text length (outputs, file contents, messages, thoughts, summaries;
//! terminal output stays capped at the SDK's 30,000 characters):
//! [`GenConfig::REAL_WORLD_SCALE`] (36) gives a mean event of about 4.8 KB,
//! i.e. 1,000 × 200 events ≈ 1 GB.
//!
//! # Determinism
//!
//! A seed gives the same bytes on every machine and with any number of
//! threads: each conversation draws from its own stream
//! (xoshiro256** seeded from `seed` and the conversation's index), and
//! the generator uses no platform math (`ln`, `exp`) and no clock.
//!
//! # Limitations
//!
//! - The text is synthetic (word lists, code-like lines), not language; it
//!   has the shapes and lengths of real content, not its meaning.
//! - Event kinds the corpus holds only a handful of times or not at all
//!   are not generated: forks (copied event ids across conversations),
//!   `ConversationStateUpdateEvent`, hook events, browser observations,
//!   ACP agents, `observations/` files.
//! - `meta.json` follows the spec's description of the agent server's
//!   `StoredConversation`; the shared corpus has no real one to compare.
//! - Files are written directly, not atomically (no fsync): the output is
//!   a generated cache. To never destroy data, [`write_store`] refuses a
//!   non-empty directory and creates every file with `O_EXCL`; after an
//!   error the directory holds what was written before it.

mod conv;
mod jw;
mod prompt;
mod rng;
mod state;
mod text;

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Which SDK version's spelling the generated files use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SdkStyle {
    /// SDK 1.58.2: compact JSON, `kind` last, `parent_id`, sidecars.
    #[default]
    V1_58,
    /// SDK 1.0.0: `json.dumps` spacing and escapes, `kind` first.
    V1_0,
    /// Either, chosen per conversation (about half each).
    Mixed,
}

impl SdkStyle {
    /// Parses `1.58`, `1.0` or `mixed`.
    pub fn parse(s: &str) -> Option<SdkStyle> {
        match s {
            "1.58" | "1.58.2" => Some(SdkStyle::V1_58),
            "1.0" | "1.0.0" => Some(SdkStyle::V1_0),
            "mixed" => Some(SdkStyle::Mixed),
            _ => None,
        }
    }
}

/// What to generate. `GenConfig { conversations: 10, ..Default::default() }`
/// gives ten 200-event conversations with the default mix.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Number of top-level conversations.
    pub conversations: usize,
    /// Event files per top-level conversation (exact unless
    /// `length_spread` is set). Sub-agent conversations come on top.
    pub events_per_conversation: usize,
    /// The random-number seed: the same value gives the same bytes.
    pub seed: u64,
    /// SDK spelling.
    pub style: SdkStyle,
    /// Fraction of conversations that run sub-agents (1.58: each gets a
    /// `subagents/<hex>/` conversation of 6–16 events).
    pub subagent_ratio: f64,
    /// Fraction of conversations with an LLM-summarising condenser
    /// (`Condensation` events).
    pub condenser_ratio: f64,
    /// Fraction of conversations in confirmation mode (some actions
    /// rejected).
    pub confirm_ratio: f64,
    /// Fraction of 1.58-style conversations with a `navigate_to` branch.
    pub branch_ratio: f64,
    /// Fraction of conversations with an agent-server `meta.json`.
    pub meta_ratio: f64,
    /// Multiplies all free-text lengths; 1.0 matches the shared corpus.
    pub content_scale: f64,
    /// Varies each conversation's event count uniformly by up to this
    /// fraction (0 = exactly `events_per_conversation`).
    pub length_spread: f64,
    /// Writer threads for [`write_store`]; 0 = available parallelism.
    /// Does not change the output.
    pub threads: usize,
}

impl GenConfig {
    /// A `content_scale` for real-world-sized stores: mean event about
    /// 4.8 KB (median 2.5 KB), 1,000 conversations × 200 events ≈ 1 GB.
    pub const REAL_WORLD_SCALE: f64 = 36.0;
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            conversations: 100,
            events_per_conversation: 200,
            seed: 0,
            style: SdkStyle::V1_58,
            subagent_ratio: 0.1,
            condenser_ratio: 0.3,
            confirm_ratio: 0.1,
            branch_ratio: 0.05,
            meta_ratio: 0.3,
            content_scale: 1.0,
            length_spread: 0.0,
            threads: 0,
        }
    }
}

/// What [`write_store`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GenSummary {
    /// Top-level conversations.
    pub conversations: u64,
    /// Sub-agent conversations (under `subagents/`).
    pub subagents: u64,
    /// Event files of top-level conversations.
    pub events: u64,
    /// All files, events, sidecars and sub-agents included.
    pub files: u64,
    /// Bytes in all files.
    pub bytes: u64,
}

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// The output directory already holds something.
    #[error("{}: output directory is not empty; refusing to write into it", path.display())]
    NotEmpty {
        /// The directory.
        path: PathBuf,
    },
    /// Creating a directory or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// A configuration value is out of range.
    #[error("invalid generator configuration: {0}")]
    Config(&'static str),
}

/// One generated file, in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Path relative to the store root, `/`-separated.
    pub path: String,
    /// Contents.
    pub bytes: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sdk {
    V158,
    V10,
}

/// Where generated files go.
pub(crate) trait Sink {
    fn create_dir(&mut self, rel: &str) -> Result<(), GenError>;
    /// `private`: mode 0600 (what SDK 1.55+ gives event files and
    /// `base_state.json`), else 0644.
    fn write_file(&mut self, rel: &str, bytes: &[u8], private: bool) -> Result<(), GenError>;
}

struct FsSink {
    root: PathBuf,
    path: PathBuf,
}

impl FsSink {
    fn full(&mut self, rel: &str) -> &Path {
        self.path.clear();
        self.path.push(&self.root);
        self.path.push(rel);
        &self.path
    }
}

impl Sink for FsSink {
    fn create_dir(&mut self, rel: &str) -> Result<(), GenError> {
        let p = self.full(rel);
        fs::create_dir_all(p).map_err(|source| GenError::Io {
            path: p.to_path_buf(),
            source,
        })
    }

    fn write_file(&mut self, rel: &str, bytes: &[u8], private: bool) -> Result<(), GenError> {
        let p = self.full(rel);
        let mut o = fs::OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(if private { 0o600 } else { 0o644 });
        }
        #[cfg(not(unix))]
        let _ = private;
        let res = o.open(p).and_then(|mut f| f.write_all(bytes));
        res.map_err(|source| GenError::Io {
            path: p.to_path_buf(),
            source,
        })
    }
}

struct MemSink {
    files: Vec<GeneratedFile>,
}

impl Sink for MemSink {
    fn create_dir(&mut self, _rel: &str) -> Result<(), GenError> {
        Ok(())
    }

    fn write_file(&mut self, rel: &str, bytes: &[u8], _private: bool) -> Result<(), GenError> {
        self.files.push(GeneratedFile {
            path: rel.to_string(),
            bytes: bytes.to_vec(),
        });
        Ok(())
    }
}

/// Prompt variants shared by a store's conversations.
pub(crate) struct Prompts {
    v158: Vec<prompt::Prompt>,
    v10: Vec<prompt::Prompt>,
}

/// A configured generator: holds what conversations share (system
/// prompts), so that single conversations can be generated on demand.
pub struct Generator {
    cfg: GenConfig,
    prompts: Prompts,
}

impl Generator {
    /// Checks the configuration and prepares the shared parts.
    pub fn new(cfg: GenConfig) -> Result<Generator, GenError> {
        let ratios = [
            cfg.subagent_ratio,
            cfg.condenser_ratio,
            cfg.confirm_ratio,
            cfg.branch_ratio,
            cfg.meta_ratio,
            cfg.length_spread,
        ];
        if ratios.iter().any(|r| !(0.0..=1.0).contains(r)) {
            return Err(GenError::Config("ratios must be between 0 and 1"));
        }
        if !(cfg.content_scale > 0.0 && cfg.content_scale <= 1000.0) {
            return Err(GenError::Config("content_scale must be in (0, 1000]"));
        }
        if cfg.events_per_conversation == 0 {
            return Err(GenError::Config(
                "events_per_conversation must be at least 1",
            ));
        }
        let prompts = Prompts {
            v158: prompt::build(cfg.seed, Sdk::V158, 3),
            v10: prompt::build(cfg.seed, Sdk::V10, 3),
        };
        Ok(Generator { cfg, prompts })
    }

    /// The configuration.
    pub fn config(&self) -> &GenConfig {
        &self.cfg
    }

    /// The files of conversation `index` (0-based; any index, also beyond
    /// `conversations`), in memory, in the order they are written.
    pub fn conversation_files(&self, index: usize) -> Result<Vec<GeneratedFile>, GenError> {
        let mut sink = MemSink { files: Vec::new() };
        conv::generate(&self.cfg, &self.prompts, index, &mut sink)?;
        Ok(sink.files)
    }

    /// Writes conversation `index` under `root` (which must exist).
    pub fn write_conversation(&self, root: &Path, index: usize) -> Result<GenSummary, GenError> {
        let mut sink = FsSink {
            root: root.to_path_buf(),
            path: PathBuf::new(),
        };
        let c = conv::generate(&self.cfg, &self.prompts, index, &mut sink)?;
        Ok(GenSummary {
            conversations: 1,
            subagents: c.subagents,
            events: c.events,
            files: c.files,
            bytes: c.bytes,
        })
    }
}

/// Writes a store of `cfg.conversations` conversations into `dir`, which
/// must be empty or absent. Conversations are spread over `cfg.threads`
/// threads; the bytes written do not depend on it.
pub fn write_store(dir: &Path, cfg: &GenConfig) -> Result<GenSummary, GenError> {
    let generator = Generator::new(cfg.clone())?;
    fs::create_dir_all(dir).map_err(|source| GenError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut entries = fs::read_dir(dir).map_err(|source| GenError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    if entries.next().is_some() {
        return Err(GenError::NotEmpty {
            path: dir.to_path_buf(),
        });
    }
    let threads = if cfg.threads == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    } else {
        cfg.threads
    }
    .clamp(1, cfg.conversations.max(1));

    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<(usize, GenError)>> = Mutex::new(None);
    let total = Mutex::new(GenSummary::default());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut local = GenSummary::default();
                loop {
                    if failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= cfg.conversations {
                        break;
                    }
                    match generator.write_conversation(dir, i) {
                        Ok(c) => {
                            local.conversations += 1;
                            local.subagents += c.subagents;
                            local.events += c.events;
                            local.files += c.files;
                            local.bytes += c.bytes;
                        }
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            if let Ok(mut slot) = first_error.lock() {
                                // Keep the error of the lowest index: a
                                // deterministic report.
                                if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                                    *slot = Some((i, e));
                                }
                            }
                            break;
                        }
                    }
                }
                if let Ok(mut t) = total.lock() {
                    t.conversations += local.conversations;
                    t.subagents += local.subagents;
                    t.events += local.events;
                    t.files += local.files;
                    t.bytes += local.bytes;
                }
            });
        }
    });
    if let Some((_, e)) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(total.into_inner().unwrap_or_default())
}
