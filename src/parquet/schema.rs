//! The tables of a dataset and their Arrow schemas: the column names, types
//! and order are a contract (see the [module docs](super)); columns are
//! only ever added, at the end, with a new [`SCHEMA_VERSION`].

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

/// The version of the tables' schemas, in every file's key-value metadata
/// (and its Arrow schema's metadata) under [`SCHEMA_VERSION_KEY`].
pub const SCHEMA_VERSION: &str = "2";

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
                ("source_format", NotNullStr),
                ("parent_id", Str),
                ("conversation_path", Str),
                ("subagent_depth", I64),
                ("forked_from_id", Str),
                ("forked_from_event_id", Str),
                ("title", Str),
                ("agent_kind", Str),
                ("agent_model", Str),
                ("usage_models", Str),
                ("working_dir", Str),
                ("execution_status", Str),
                ("created_at", Time),
                ("updated_at", Time),
                ("times_naive", Bool),
                ("event_count", I64),
                ("event_file_count", I64),
                ("malformed_count", I64),
                ("problem_file_count", I64),
                ("subagent_count", I64),
                ("llm_call_count", I64),
                ("prompt_tokens", I64),
                ("completion_tokens", I64),
                ("cache_read_tokens", I64),
                ("cache_write_tokens", I64),
                ("reasoning_tokens", I64),
                ("cost_usd", F64),
                ("change_kind", NotNullStr),
                ("snapshot_at", Utc),
            ],
            Table::Events => &[
                ("conversation_id", NotNullStr),
                ("event_index", I64),
                ("event_file", NotNullStr),
                ("event_id", Str),
                ("event_kind", Str),
                ("event_source", Str),
                ("event_parent_id", Str),
                ("event_time", Time),
                ("event_time_text", Str),
                ("event_time_naive", Bool),
                ("tool_name", Str),
                ("tool_call_id", Str),
                ("llm_response_id", Str),
                ("action_kind", Str),
                ("is_error", Bool),
                ("exit_code", I64),
                ("text_length", I64),
                ("in_context", Bool),
                ("file_status", NotNullStr),
                ("file_error", Str),
                ("file_bytes", I64),
                ("event_json", Str),
                ("snapshot_at", Utc),
            ],
            Table::Messages => &[
                ("conversation_id", NotNullStr),
                ("source_format", NotNullStr),
                ("message_index", I64),
                ("message_role", Str),
                ("message_text", Str),
                ("text_length", I64),
                ("tool_call_id", Str),
                ("tool_name", Str),
                ("tool_calls_json", Str),
                ("message_json", Str),
                ("snapshot_at", Utc),
            ],
            Table::ToolCalls => &[
                ("conversation_id", NotNullStr),
                ("source_format", NotNullStr),
                ("call_index", I64),
                ("action_event_index", I64),
                ("action_event_id", Str),
                ("tool_name", Str),
                ("tool_call_id", Str),
                ("llm_response_id", Str),
                ("action_kind", Str),
                ("call_arguments", Str),
                ("started_at", Time),
                ("call_outcome", Str),
                ("result_event_index", I64),
                ("result_event_id", Str),
                ("is_error", Bool),
                ("exit_code", I64),
                ("result_text", Str),
                ("error_text", Str),
                ("rejection_reason", Str),
                ("finished_at", Time),
                ("duration_s", F64),
                ("snapshot_at", Utc),
            ],
            Table::LlmCalls => &[
                ("conversation_id", NotNullStr),
                ("source_format", NotNullStr),
                ("usage_id", Str),
                ("record_kind", NotNullStr),
                ("call_index", I64),
                ("usage_model", Str),
                ("call_model", Str),
                ("response_id", Str),
                ("prompt_tokens", I64),
                ("completion_tokens", I64),
                ("cache_read_tokens", I64),
                ("cache_write_tokens", I64),
                ("reasoning_tokens", I64),
                ("total_tokens", I64),
                ("context_window", I64),
                ("cost_usd", F64),
                ("latency_s", F64),
                ("snapshot_at", Utc),
            ],
        }
    }

    /// The columns whose values are long texts: no statistics (min/max of a
    /// JSON text helps no query), and a dictionary bounded in bytes (texts
    /// that repeat are written once per row group; past the bound, plain).
    pub(crate) fn long_text_columns(self) -> &'static [&'static str] {
        match self {
            Table::Conversations => &["title"],
            Table::Events => &["event_json", "file_error"],
            Table::Messages => &["message_text", "tool_calls_json", "message_json"],
            Table::ToolCalls => &[
                "call_arguments",
                "result_text",
                "error_text",
                "rejection_reason",
            ],
            Table::LlmCalls => &[],
        }
    }

    /// The columns written without a dictionary: values (nearly) unique
    /// per row (IDs, file names, times, durations, costs), for which a
    /// dictionary as large as the column costs its hashing and saves
    /// nothing, and the conversation's ID, which repeats in runs (a
    /// conversation's rows are written together) that zstd takes in fewer
    /// bytes than a dictionary's indexes.
    pub(crate) fn plain_columns(self) -> &'static [&'static str] {
        match self {
            Table::Conversations => &["conversation_id", "conversation_path"],
            Table::Events => &[
                "conversation_id",
                "event_file",
                "event_id",
                "event_parent_id",
                "event_time",
                "event_time_text",
                "tool_call_id",
                "llm_response_id",
            ],
            Table::Messages => &["conversation_id", "tool_call_id"],
            Table::ToolCalls => &[
                "conversation_id",
                "action_event_id",
                "tool_call_id",
                "llm_response_id",
                "started_at",
                "result_event_id",
                "finished_at",
                "duration_s",
            ],
            Table::LlmCalls => &["conversation_id", "response_id", "cost_usd", "latency_s"],
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
    /// Signed 64-bit integer (`INT64`): every count and index (no
    /// unsigned type, which Spark reads as `decimal(20,0)`).
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
            ColumnType::I64 => DataType::Int64,
            ColumnType::F64 => DataType::Float64,
            ColumnType::Bool => DataType::Boolean,
            ColumnType::Time => DataType::Timestamp(TimeUnit::Microsecond, None),
            ColumnType::Utc => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        }
    }
}
