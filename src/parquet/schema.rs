//! The tables of a dataset and their Arrow schemas: the column names, types
//! and order are a contract (see the [module docs](super)); columns are
//! only ever added, at the end, with a new [`SCHEMA_VERSION`].

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

/// The version of the tables' schemas, in every file's key-value metadata
/// (and its Arrow schema's metadata) under [`SCHEMA_VERSION_KEY`].
pub const SCHEMA_VERSION: &str = "1";

/// The key of [`SCHEMA_VERSION`] in the files' metadata.
pub const SCHEMA_VERSION_KEY: &str = "agentlog.schema_version";

/// The key of the table's name in the files' metadata.
pub const TABLE_KEY: &str = "agentlog.table";

/// One table of a dataset: a directory `OUT_DIR/<name>/` of part files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// One row per conversation (OpenHands, sub-agents included) or OC Chat
    /// session, per export that wrote it.
    Conversations,
    /// One row per event file.
    Events,
    /// The messages the model is sent (the view), and OC Chat's messages.
    Messages,
    /// One row per tool call, with what answered it.
    ToolCalls,
    /// One row per model call from the stored metrics.
    LlmCalls,
}

impl Table {
    /// Every table, in this order.
    pub const ALL: [Table; 5] = [
        Table::Conversations,
        Table::Events,
        Table::Messages,
        Table::ToolCalls,
        Table::LlmCalls,
    ];

    /// The table's directory name.
    pub fn name(self) -> &'static str {
        match self {
            Table::Conversations => "conversations",
            Table::Events => "events",
            Table::Messages => "messages",
            Table::ToolCalls => "tool_calls",
            Table::LlmCalls => "llm_calls",
        }
    }

    /// The table's Arrow schema (its metadata holds [`SCHEMA_VERSION`]).
    pub fn schema(self) -> SchemaRef {
        let fields: Vec<Field> = self
            .columns()
            .iter()
            .map(|&(name, ty)| Field::new(name, ty.data_type(), ty != ColumnType::NotNullStr))
            .collect();
        let meta = HashMap::from([
            (SCHEMA_VERSION_KEY.to_owned(), SCHEMA_VERSION.to_owned()),
            (TABLE_KEY.to_owned(), self.name().to_owned()),
        ]);
        Arc::new(Schema::new_with_metadata(fields, meta))
    }

    /// The columns, in order.
    pub fn columns(self) -> &'static [(&'static str, ColumnType)] {
        use ColumnType::*;
        match self {
            Table::Conversations => &[
                ("conversation_id", NotNullStr),
                ("format", NotNullStr),
                ("parent_id", Str),
                ("path", Str),
                ("depth", U64),
                ("forked_from_id", Str),
                ("forked_from_event_id", Str),
                ("title", Str),
                ("agent_kind", Str),
                ("model", Str),
                ("models", Str),
                ("working_dir", Str),
                ("execution_status", Str),
                ("created_at", Time),
                ("updated_at", Time),
                ("times_naive", Bool),
                ("events", U64),
                ("event_files", U64),
                ("malformed", U64),
                ("problem_files", U64),
                ("subagents", U64),
                ("llm_calls", U64),
                ("prompt_tokens", U64),
                ("completion_tokens", U64),
                ("cache_read_tokens", U64),
                ("cache_write_tokens", U64),
                ("reasoning_tokens", U64),
                ("cost", F64),
                ("change", NotNullStr),
                ("snapshot", Utc),
            ],
            Table::Events => &[
                ("conversation_id", NotNullStr),
                ("index", U64),
                ("file", NotNullStr),
                ("id", Str),
                ("kind", Str),
                ("source", Str),
                ("parent_id", Str),
                ("timestamp", Time),
                ("timestamp_text", Str),
                ("timestamp_naive", Bool),
                ("tool_name", Str),
                ("tool_call_id", Str),
                ("llm_response_id", Str),
                ("is_error", Bool),
                ("in_context", Bool),
                ("status", NotNullStr),
                ("error", Str),
                ("bytes", U64),
                ("json", Str),
                ("snapshot", Utc),
            ],
            Table::Messages => &[
                ("conversation_id", NotNullStr),
                ("format", NotNullStr),
                ("position", U64),
                ("role", Str),
                ("text", Str),
                ("tool_call_id", Str),
                ("name", Str),
                ("tool_calls", Str),
                ("message", Str),
                ("snapshot", Utc),
            ],
            Table::ToolCalls => &[
                ("conversation_id", NotNullStr),
                ("format", NotNullStr),
                ("position", U64),
                ("action_index", U64),
                ("action_id", Str),
                ("tool_name", Str),
                ("tool_call_id", Str),
                ("llm_response_id", Str),
                ("action_kind", Str),
                ("arguments", Str),
                ("started_at", Time),
                ("outcome", Str),
                ("result_index", U64),
                ("result_id", Str),
                ("is_error", Bool),
                ("exit_code", I64),
                ("result_text", Str),
                ("error", Str),
                ("rejection_reason", Str),
                ("finished_at", Time),
                ("duration_s", F64),
                ("snapshot", Utc),
            ],
            Table::LlmCalls => &[
                ("conversation_id", NotNullStr),
                ("format", NotNullStr),
                ("usage_id", Str),
                ("record", NotNullStr),
                ("call_index", U64),
                ("model", Str),
                ("call_model", Str),
                ("response_id", Str),
                ("prompt_tokens", I64),
                ("completion_tokens", I64),
                ("cache_read_tokens", I64),
                ("cache_write_tokens", I64),
                ("reasoning_tokens", I64),
                ("context_window", I64),
                ("cost", F64),
                ("latency_s", F64),
                ("snapshot", Utc),
            ],
        }
    }

    /// The columns whose values are long texts: no dictionary encoding, no
    /// statistics (min/max of a JSON text helps no query).
    pub(crate) fn long_text_columns(self) -> &'static [&'static str] {
        match self {
            Table::Conversations => &["title"],
            Table::Events => &["json", "error"],
            Table::Messages => &["text", "tool_calls", "message"],
            Table::ToolCalls => &["arguments", "result_text", "error", "rejection_reason"],
            Table::LlmCalls => &[],
        }
    }

    /// The columns whose values are (nearly) unique per row, IDs and
    /// file names: no dictionary encoding (a dictionary as large as the
    /// column costs its hashing and saves nothing).
    pub(crate) fn unique_columns(self) -> &'static [&'static str] {
        match self {
            Table::Conversations => &[],
            Table::Events => &[
                "file",
                "id",
                "parent_id",
                "timestamp_text",
                "tool_call_id",
                "llm_response_id",
            ],
            Table::Messages => &["tool_call_id"],
            Table::ToolCalls => &["action_id", "tool_call_id", "llm_response_id", "result_id"],
            Table::LlmCalls => &["response_id"],
        }
    }
}

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// UTF-8 text, never null.
    NotNullStr,
    /// UTF-8 text.
    Str,
    /// Unsigned 64-bit integer.
    U64,
    /// Signed 64-bit integer.
    I64,
    /// 64-bit float.
    F64,
    /// Boolean.
    Bool,
    /// Microseconds, no time zone: a wall-clock time (see the module docs
    /// for what naive times hold).
    Time,
    /// Microseconds since the Unix epoch, time zone UTC.
    Utc,
}

impl ColumnType {
    /// The Arrow type.
    pub fn data_type(self) -> DataType {
        match self {
            ColumnType::NotNullStr | ColumnType::Str => DataType::Utf8,
            ColumnType::U64 => DataType::UInt64,
            ColumnType::I64 => DataType::Int64,
            ColumnType::F64 => DataType::Float64,
            ColumnType::Bool => DataType::Boolean,
            ColumnType::Time => DataType::Timestamp(TimeUnit::Microsecond, None),
            ColumnType::Utc => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        }
    }
}
