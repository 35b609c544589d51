//! The observations that answer tool calls, and the calls that fail.

use super::*;

impl Conv<'_> {
    pub(super) fn observation_event(&mut self, c: &Call) -> Result<(), GenError> {
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
                    c.output.unwrap_or(CommandOutput::Plain),
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
    pub(super) fn failed_call(&mut self, rid: &str) -> Result<(), GenError> {
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
}
