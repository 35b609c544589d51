//! How the long text columns are encoded: a text that repeats within a row
//! group is written once (the column's dictionary), and the values read
//! back are the texts written, repeated or not. IDs, times and the
//! conversation's ID are written without a dictionary.

use std::fs;
use std::path::{Path, PathBuf};

use agentlog::json::Parser;
use agentlog::openhands::{Conversation, Reader};
use agentlog::parquet::{
    Dataset, DatasetDir, DatasetOptions, EventSelection, OpenHandsInput, RunId, RunMode, Table,
    add_openhands,
};
use arrow_array::{Array, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Encoding;
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::details::corpus_conversations;

/// Exports the corpus conversations, each `copies` times under other IDs,
/// into `out`; the path of the `events` part file.
fn export(out: &Path, copies: usize) -> PathBuf {
    let dir = DatasetDir::open(out, None).unwrap();
    let run = RunId::new(11);
    let mut ds = Dataset::create(out, &run, DatasetOptions::default()).unwrap();
    let mut reader = Reader::new();
    let mut parser = Parser::new();
    let mut conv = Conversation::default();
    for copy in 0..copies {
        for dir in corpus_conversations() {
            reader.read_into(&dir, &mut conv).unwrap();
            let id = format!("{}-{copy}", conv.name());
            let input = OpenHandsInput {
                conversation: &conv,
                id: &id,
                parent: None,
                depth: 0,
                change: "full",
                events: EventSelection::All,
            };
            add_openhands(&mut ds, &input, &mut parser).unwrap();
        }
    }
    let written = ds.finish(true).unwrap();
    let pending = dir.stage(&run, written, RunMode::Full, None, &[]).unwrap();
    let events: Vec<PathBuf> = pending
        .parts()
        .filter(|p| p.starts_with(out.join(Table::Events.name())))
        .map(Path::to_path_buf)
        .collect();
    pending.publish().unwrap();
    assert_eq!(events.len(), 1, "one events part");
    events.into_iter().next().unwrap()
}

/// The `event_json` column of a part file: its compressed bytes over every
/// row group, and whether every row group's chunk holds a dictionary.
fn event_json_chunks(part: &Path) -> (i64, bool) {
    let r = SerializedFileReader::new(fs::File::open(part).unwrap()).unwrap();
    let meta = r.metadata();
    let (mut bytes, mut dict) = (0, true);
    for rg in meta.row_groups() {
        let c = rg
            .columns()
            .iter()
            .find(|c| c.column_path().string() == "event_json")
            .expect("an event_json column");
        bytes += c.compressed_size();
        dict &= c.dictionary_page_offset().is_some()
            && c.encodings().any(|e| e == Encoding::RLE_DICTIONARY);
        assert!(c.statistics().is_none(), "no statistics for a long text");
    }
    (bytes, dict)
}

/// The `event_json` values of a part file, in order.
fn event_json(part: &Path) -> Vec<Option<String>> {
    let r = ParquetRecordBatchReaderBuilder::try_new(fs::File::open(part).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for b in r {
        let b = b.unwrap();
        let col = b.column_by_name("event_json").unwrap();
        let s = col.as_any().downcast_ref::<StringArray>().unwrap();
        out.extend((0..s.len()).map(|i| s.is_valid(i).then(|| s.value(i).to_owned())));
    }
    out
}

#[test]
fn repeated_texts_are_written_once_and_read_back_whole() {
    let t = tempfile::tempdir().unwrap();
    let once = export(&t.path().join("once"), 1);
    let thrice = export(&t.path().join("thrice"), 3);
    let (once_bytes, once_dict) = event_json_chunks(&once);
    let (thrice_bytes, thrice_dict) = event_json_chunks(&thrice);
    assert!(once_dict && thrice_dict, "event_json has a dictionary");
    // Three copies of the texts cost little more than one: the texts are
    // in the dictionary once, each row an index.
    assert!(
        thrice_bytes < once_bytes + once_bytes / 2,
        "three copies {thrice_bytes} B, one {once_bytes} B"
    );
    let one = event_json(&once);
    let three = event_json(&thrice);
    assert!(one.iter().flatten().count() > 100, "the corpus has events");
    assert_eq!(three.len(), 3 * one.len());
    for chunk in three.chunks(one.len()) {
        assert_eq!(chunk, one.as_slice(), "each copy reads back as written");
    }
}

/// The columns written without a dictionary, by table: IDs, times,
/// durations and costs (nearly unique per row), and the conversation's ID
/// (runs that zstd takes).
const PLAIN: [(Table, &[&str]); 5] = [
    (
        Table::Conversations,
        &["conversation_id", "conversation_path"],
    ),
    (
        Table::Events,
        &[
            "conversation_id",
            "event_file",
            "event_id",
            "event_parent_id",
            "event_time",
            "event_time_text",
            "tool_call_id",
            "llm_response_id",
        ],
    ),
    (Table::Messages, &["conversation_id", "tool_call_id"]),
    (
        Table::ToolCalls,
        &[
            "conversation_id",
            "action_event_id",
            "tool_call_id",
            "llm_response_id",
            "started_at",
            "result_event_id",
            "finished_at",
            "duration_s",
        ],
    ),
    (
        Table::LlmCalls,
        &["conversation_id", "response_id", "cost_usd", "latency_s"],
    ),
];

#[test]
fn ids_times_and_the_conversation_id_have_no_dictionary() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    export(&out, 2);
    for (table, plain) in PLAIN {
        let mut parts = 0;
        for e in fs::read_dir(out.join(table.name())).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_none_or(|x| x != "parquet") {
                continue;
            }
            parts += 1;
            let r = SerializedFileReader::new(fs::File::open(&p).unwrap()).unwrap();
            let mut seen = 0;
            for rg in r.metadata().row_groups() {
                for c in rg.columns() {
                    let name = c.column_path().string();
                    let dict = c.dictionary_page_offset().is_some();
                    if plain.contains(&name.as_str()) {
                        seen += 1;
                        assert!(!dict, "{}.{name}: no dictionary", table.name());
                    } else if name == "event_json" {
                        assert!(dict, "{}.{name}: a dictionary", table.name());
                    }
                }
            }
            assert!(seen >= plain.len(), "{}: every plain column", table.name());
        }
        assert!(parts > 0, "{}: a part", table.name());
    }
}
