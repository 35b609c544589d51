//! The non-event files of a conversation: `base_state.json` (agent, LLM,
//! stats with per-call metrics), `meta.json` (agent-server conversations),
//! `TASKS.json` and the zero-byte sidecars in `events/`.

use super::conv::{Conv, LlmCall, LlmModel, TaskItem, push_iso};
use super::jw::{Jw, Spelling};
use super::{GenError, Sdk};

fn llm(w: &mut Jw, sdk: Sdk, m: &LlmModel, usage_id: &str) {
    let proxy = m.name.starts_with("litellm_proxy/");
    w.begin(None);
    w.kv_str("model", m.name);
    w.kv_str("api_key", "**********");
    if sdk == Sdk::V158 {
        w.kv_str("auth_type", "api_key");
    }
    if proxy {
        w.kv_str("base_url", "https://llm-proxy.example.com");
    }
    w.kv_str("openrouter_site_url", "https://docs.all-hands.dev/");
    w.kv_str("openrouter_app_name", "OpenHands");
    w.kv_int("num_retries", 5);
    w.kv_float("retry_multiplier", 8.0);
    w.kv_int("retry_min_wait", 8);
    w.kv_int("retry_max_wait", 64);
    match sdk {
        Sdk::V158 => {
            w.kv_int("timeout", 300);
            w.kv_float("stream_idle_timeout", 300.0);
            w.kv_int("max_message_chars", 30_000);
            w.kv_str("api_mode", "auto");
            w.kv_empty_obj("capability_overrides");
        }
        Sdk::V10 => {
            w.kv_int("max_message_chars", 30_000);
            w.kv_float("temperature", 0.0);
            w.kv_float("top_p", 1.0);
        }
    }
    if proxy {
        w.kv_float("input_cost_per_token", m.input_cost);
        w.kv_float("output_cost_per_token", m.output_cost);
    }
    if sdk == Sdk::V158 {
        w.kv_bool("stream", false);
    }
    w.kv_bool("drop_params", true);
    if sdk == Sdk::V10 {
        w.kv_bool("modify_params", true);
    }
    w.kv_bool("disable_stop_word", false);
    w.kv_bool("caching_prompt", true);
    w.kv_bool("log_completions", false);
    w.kv_str("log_completions_folder", "logs/completions");
    w.kv_bool("native_tool_calling", true);
    w.kv_str("reasoning_effort", "high");
    w.kv_bool("enable_encrypted_reasoning", sdk == Sdk::V158);
    if sdk == Sdk::V158 {
        w.kv_str("prompt_cache_retention", "24h");
    }
    w.kv_int("extended_thinking_budget", 200_000);
    w.kv_str("usage_id", usage_id);
    w.kv_empty_obj("litellm_extra_body");
    match sdk {
        Sdk::V158 => w.kv_bool("is_subscription", false),
        Sdk::V10 => w.kv_str_arr(
            "OVERRIDE_ON_SERIALIZE",
            &["api_key", "aws_access_key_id", "aws_secret_access_key"],
        ),
    }
    w.end();
}

fn agent(w: &mut Jw, c: &Conv<'_>) {
    let sdk = c.plan.sdk;
    let m = c.plan.model;
    w.begin(Some("Agent"));
    w.key("llm");
    llm(w, sdk, m, "agent");
    w.key("tools");
    w.begin_arr();
    let tools: &[&str] = if c.plan.is_subagent {
        &["terminal", "file_editor"]
    } else if c.plan.subagents > 0 && sdk == Sdk::V158 {
        &["terminal", "file_editor", "task_tracker", "task_tool_set"]
    } else if c.plan.subagents > 0 {
        &["terminal", "file_editor", "task_tracker", "delegate"]
    } else {
        &["terminal", "file_editor", "task_tracker"]
    };
    for t in tools {
        w.elem();
        w.begin(None);
        w.kv_str("name", t);
        w.kv_empty_obj("params");
        w.end();
    }
    w.end_arr();
    w.kv_empty_obj("mcp_config");
    if sdk == Sdk::V158 {
        w.kv_str_arr("include_default_tools", &["FinishTool", "ThinkTool"]);
        if c.plan.is_subagent {
            w.key("agent_context");
            w.begin(None);
            w.key("skills");
            w.begin_arr();
            w.elem();
            w.begin(None);
            w.kv_str("name", "reviewer");
            w.kv_str(
                "content",
                "You review changes and report problems as a list.",
            );
            w.kv_empty_arr("inputs");
            w.kv_bool("is_agentskills_format", false);
            w.kv_str("version", "1.0.0");
            w.kv_bool("disable_model_invocation", false);
            w.end();
            w.end_arr();
            w.kv_str("system_message_suffix", "Be concise.");
            w.kv_bool("load_user_skills", false);
            w.kv_bool("load_public_skills", false);
            w.end();
        }
    }
    w.kv_str("system_prompt_filename", "system_prompt.j2");
    if sdk == Sdk::V158 {
        w.kv_str("security_policy_filename", "security_policy.j2");
        w.key("system_prompt_kwargs");
        w.begin(None);
        w.kv_bool("llm_security_analyzer", true);
        w.end();
    } else {
        w.kv_empty_obj("system_prompt_kwargs");
    }
    if let Some(cond) = c.plan.condenser {
        w.key("condenser");
        w.begin(Some("LLMSummarizingCondenser"));
        w.key("llm");
        llm(w, sdk, m, "condenser");
        w.kv_int("max_size", cond.max_size as i64);
        w.kv_int("keep_first", cond.keep_first as i64);
        if sdk == Sdk::V158 {
            w.kv_float("minimum_progress", 0.1);
            w.kv_int("hard_context_reset_max_retries", 5);
            w.kv_float("hard_context_reset_context_scaling", 0.8);
        }
        w.end();
    }
    if sdk == Sdk::V158 {
        w.kv_int("tool_concurrency_limit", 1);
    }
    w.end();
}

fn token_usage(w: &mut Jw, model: &str, c: &LlmCall, per_turn: i64, window: i64, rid: &str) {
    w.begin(None);
    w.kv_str("model", model);
    w.kv_int("prompt_tokens", c.prompt_tokens);
    w.kv_int("completion_tokens", c.completion_tokens);
    w.kv_int("cache_read_tokens", c.cache_read_tokens);
    w.kv_int("cache_write_tokens", 0);
    w.kv_int("reasoning_tokens", c.reasoning_tokens);
    w.kv_int("context_window", window);
    w.kv_int("per_turn_token", per_turn);
    w.kv_str("response_id", rid);
    w.end();
}

/// `Metrics` as the SDK dumps it; `combined` is a sub-agent's merged
/// metrics (`model_name` "default").
fn metrics(w: &mut Jw, model: &str, window: i64, calls: &[LlmCall], combined: bool) {
    let name = if combined { "default" } else { model };
    let mut total = LlmCall {
        response_id: String::new(),
        prompt_tokens: 0,
        completion_tokens: 0,
        cache_read_tokens: 0,
        reasoning_tokens: 0,
        latency: 0.0,
        cost: 0.0,
        timestamp: 0.0,
        model: "",
    };
    for c in calls {
        total.prompt_tokens += c.prompt_tokens;
        total.completion_tokens += c.completion_tokens;
        total.cache_read_tokens += c.cache_read_tokens;
        total.reasoning_tokens += c.reasoning_tokens;
        total.cost += c.cost;
    }
    let last_turn = calls
        .last()
        .map(|c| c.prompt_tokens + c.completion_tokens)
        .unwrap_or(0);
    w.begin(None);
    w.kv_str("model_name", name);
    w.kv_float("accumulated_cost", total.cost);
    w.key("accumulated_token_usage");
    token_usage(w, name, &total, last_turn, window, "");
    w.key("costs");
    w.begin_arr();
    for c in calls.iter().filter(|c| c.cost != 0.0) {
        w.elem();
        w.begin(None);
        w.kv_str("model", c.model);
        w.kv_float("cost", c.cost);
        w.kv_float("timestamp", c.timestamp);
        w.end();
    }
    w.end_arr();
    w.key("response_latencies");
    w.begin_arr();
    for c in calls {
        w.elem();
        w.begin(None);
        w.kv_str("model", c.model);
        w.kv_float("latency", c.latency);
        w.kv_str("response_id", &c.response_id);
        w.end();
    }
    w.end_arr();
    w.key("token_usages");
    w.begin_arr();
    for c in calls {
        w.elem();
        token_usage(
            w,
            c.model,
            c,
            c.prompt_tokens + c.completion_tokens,
            window,
            &c.response_id,
        );
    }
    w.end_arr();
    w.end();
}

fn base_state(c: &Conv<'_>, buf: Vec<u8>) -> Vec<u8> {
    let sdk = c.plan.sdk;
    let sp = match sdk {
        Sdk::V158 => Spelling::PYDANTIC,
        Sdk::V10 => Spelling::LEGACY,
    };
    let m = c.plan.model;
    let mut w = Jw::new(buf, sp);
    w.begin(None);
    w.kv_str("id", &c.uuid);
    w.key("agent");
    agent(&mut w, c);
    w.key("workspace");
    w.begin(Some("LocalWorkspace"));
    w.kv_str("working_dir", &c.workspace);
    w.end();
    w.kv_str("persistence_dir", &c.persistence_dir);
    w.kv_int("max_iterations", 500);
    w.kv_bool("stuck_detection", true);
    w.kv_str("execution_status", c.execution_status);
    w.key("confirmation_policy");
    w.begin(Some(if c.plan.confirm {
        "AlwaysConfirm"
    } else {
        "NeverConfirm"
    }));
    w.end();
    w.kv_empty_arr("activated_knowledge_skills");
    if sdk == Sdk::V158 {
        w.kv_empty_arr("activated_path_rules");
        w.kv_empty_arr("invoked_skills");
        w.kv_empty_obj("blocked_actions");
        w.kv_empty_obj("blocked_messages");
        if let Some(u) = c.last_user_message {
            w.kv_str("last_user_message_id", c.id(u));
        }
        if let Some(leaf) = c.leaf() {
            w.kv_str("leaf_event_id", leaf);
        }
        w.kv_bool("head_is_empty", false);
    }
    w.key("stats");
    w.begin(None);
    w.key("usage_to_metrics");
    w.begin(None);
    w.key("agent");
    metrics(&mut w, m.name, m.context_window, &c.agent_calls, false);
    if c.plan.condenser.is_some() {
        w.key("condenser");
        if sdk == Sdk::V10 {
            // 1.0–1.7: the condenser shares the agent's metrics object.
            metrics(&mut w, m.name, m.context_window, &c.agent_calls, false);
        } else {
            metrics(&mut w, m.name, m.context_window, &c.condenser_calls, false);
        }
    }
    for t in &c.task_metrics {
        w.key(&t.key);
        metrics(&mut w, m.name, m.context_window, &t.calls, true);
    }
    w.end();
    w.end();
    w.key("secret_registry");
    w.begin(None);
    w.kv_empty_obj("secret_sources");
    w.end();
    if sdk == Sdk::V158 {
        w.kv_empty_obj("tags");
        w.kv_empty_obj("agent_state");
    }
    w.end();
    w.into_inner()
}

fn meta(c: &Conv<'_>, buf: Vec<u8>, title: &str) -> Vec<u8> {
    // meta.json is a plain pydantic dump in every version: compact, raw
    // UTF-8, `null`s kept.
    let sp = Spelling {
        spaced: false,
        ascii: false,
        kind_first: c.plan.sdk == Sdk::V10,
    };
    let mut w = Jw::new(buf, sp);
    w.begin(None);
    if c.plan.sdk == Sdk::V10 {
        w.key("agent");
        agent(&mut w, c);
    }
    w.key("workspace");
    w.begin(Some("LocalWorkspace"));
    w.kv_str("working_dir", &c.workspace);
    w.end();
    w.key("confirmation_policy");
    w.begin(Some(if c.plan.confirm {
        "AlwaysConfirm"
    } else {
        "NeverConfirm"
    }));
    w.end();
    if c.plan.sdk == Sdk::V158 {
        w.kv_null("security_analyzer");
    }
    w.kv_null("initial_message");
    w.kv_int("max_iterations", 500);
    w.kv_bool("stuck_detection", true);
    w.kv_empty_obj("secrets");
    if c.plan.sdk == Sdk::V158 {
        w.kv_bool("secrets_encrypted", false);
        w.kv_empty_arr("tool_module_qualnames");
        w.kv_null("hook_config");
        w.kv_null("plugins");
        w.kv_bool("autotitle", true);
        w.kv_empty_arr("agent_definitions");
        w.kv_empty_obj("tags");
        w.kv_empty_arr("client_tools");
        w.kv_null("parent_conversation_id");
        w.kv_null("user_id");
        w.kv_null("worktree");
    } else {
        w.kv_str("conversation_id", &c.hex);
    }
    w.kv_str("id", &c.hex);
    w.kv_str("title", title);
    w.kv_null("metrics");
    let mut s = String::new();
    push_iso(&mut s, c.start_us(), true);
    w.kv_str("created_at", &s);
    s.clear();
    push_iso(&mut s, c.now_us, true);
    w.kv_str("updated_at", &s);
    if c.plan.sdk == Sdk::V158 {
        w.kv_null("forked_from_conversation_id");
        w.kv_null("forked_from_event_id");
        w.kv_null("launched_agent_profile");
        w.kv_empty_arr("required_runtime_credential_bindings");
    }
    w.end();
    w.into_inner()
}

/// `TASKS.json`: Python's `json.dump(..., indent=2)`.
fn tasks_json(tasks: &[TaskItem], mut out: Vec<u8>) -> Vec<u8> {
    use crate::json::write::write_str;
    out.clear();
    out.extend_from_slice(b"[\n");
    for (i, t) in tasks.iter().enumerate() {
        out.extend_from_slice(b"  {\n    \"title\": ");
        write_str(&mut out, &t.title, true);
        out.extend_from_slice(b",\n    \"notes\": ");
        write_str(&mut out, &t.notes, true);
        out.extend_from_slice(b",\n    \"status\": ");
        write_str(&mut out, t.status, true);
        out.extend_from_slice(b"\n  }");
        if i + 1 < tasks.len() {
            out.push(b',');
        }
        out.push(b'\n');
    }
    out.push(b']');
    out
}

/// Writes everything but the events, once the events are written.
pub(crate) fn write_sidecars(c: &mut Conv<'_>) -> Result<(), GenError> {
    let private = c.plan.sdk == Sdk::V158;
    let bytes = base_state(c, Vec::with_capacity(32 * 1024));
    c.write_file("base_state.json", &bytes, private)?;
    if c.plan.meta && !c.plan.is_subagent {
        let mut title = String::new();
        c.title(&mut title);
        let bytes = meta(c, bytes, &title);
        c.write_file("meta.json", &bytes, private)?;
    }
    if !c.tasks.is_empty() {
        let bytes = tasks_json(&c.tasks, Vec::new());
        c.write_file("TASKS.json", &bytes, false)?;
    }
    if c.plan.sdk == Sdk::V158 {
        c.write_file("events/.eventlog.lock", b"", false)?;
        let name = format!("events/.eventlog-len-{}.marker", c.len());
        c.write_file(&name, b"", false)?;
    }
    Ok(())
}
