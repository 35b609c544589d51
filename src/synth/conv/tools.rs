//! Tool calls: their arguments, per tool, and the action events that carry
//! them.

use super::*;

impl Conv<'_> {
    /// Fills a call's arguments for its tool.
    pub(super) fn prepare(&mut self, tool: Tool) -> Call {
        let mut c = Call {
            tool: Some(tool),
            ..Call::default()
        };
        self.tool_call_id(&mut c.tool_call_id);
        let scale = self.scale();
        match tool {
            Tool::Terminal => {
                let kinds = [
                    CommandOutput::Listing,
                    CommandOutput::Tests,
                    CommandOutput::Grep,
                    CommandOutput::Git,
                    CommandOutput::Install,
                    CommandOutput::Traceback,
                    CommandOutput::Plain,
                ];
                let k = kinds[self.rng.weighted(&[20, 20, 15, 10, 5, 5, 25]).min(6)];
                text::command(&mut self.trng, &mut c.command, k);
                c.output = Some(k);
                c.exit_code = match k {
                    CommandOutput::Tests if self.rng.below(3) == 0 => 1,
                    CommandOutput::Traceback => 1,
                    CommandOutput::Grep if self.rng.below(5) == 0 => 1,
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

    pub(super) fn tool_name(tool: Tool, legacy: bool) -> &'static str {
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

    pub(super) fn summary(c: &Call, out: &mut String) {
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
    pub(super) fn action_and_args(&mut self, w: &mut Jw, c: &Call, summary: &str) {
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

    pub(super) fn task_list(w: &mut Jw, tasks: &[TaskItem]) {
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
    pub(super) fn action_event(
        &mut self,
        c: &mut Call,
        rid: &str,
        first: bool,
    ) -> Result<bool, GenError> {
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
}
