//! `add_openhands_with`, fed the details the reader's visitor collected
//! (its events and its state), writes the rows `add_openhands` (which
//! parses every event and the state again) writes; details that are not the
//! conversation's are not used.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use agentlog::json::Parser;
use agentlog::openhands::{Conversation, Parsed, Reader};
use agentlog::parquet::{
    Dataset, DatasetDir, DatasetOptions, EventDetails, EventSelection, OpenHandsInput, RunId,
    RunMode, Table, add_openhands, add_openhands_with,
};
use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// Every top-level conversation directory of the shared OpenHands corpus
/// (`<version>/<case>/<id>`).
pub(super) fn corpus_conversations() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let root = common::corpus_dir().join("openhands");
    for version in fs::read_dir(&root).unwrap().flatten() {
        if !version.path().is_dir() {
            continue;
        }
        for store in fs::read_dir(version.path()).unwrap().flatten() {
            if !store.path().is_dir() {
                continue;
            }
            for c in fs::read_dir(store.path()).unwrap().flatten() {
                if c.path().is_dir() {
                    out.push(c.path());
                }
            }
        }
    }
    out.sort();
    assert!(out.len() > 5, "the corpus has conversations");
    out
}

/// How `export` hands a conversation to the dataset.
#[derive(Clone, Copy)]
enum Way {
    /// `add_openhands`: the events parsed again.
    Parse,
    /// `add_openhands_with` and the reader's details.
    Details,
    /// `add_openhands_with` and the previous conversation's details.
    WrongDetails,
    /// `add_openhands_with` and the reader's details, gathered in one
    /// `EventDetails` for every conversation, cleared before each (as the
    /// CLI keeps one for the whole store).
    Reused,
}

/// Exports every corpus conversation to a dataset under `out`.
fn export(out: &Path, way: Way) {
    let dir = DatasetDir::open(out, None).unwrap();
    let run = RunId::new(7);
    let mut ds = Dataset::create(out, &run, DatasetOptions::default()).unwrap();
    let mut reader = Reader::new();
    let mut parser = Parser::new();
    let mut conv = Conversation::default();
    let mut previous = EventDetails::new();
    let mut kept = EventDetails::new();
    for dir in corpus_conversations() {
        let mut details = if matches!(way, Way::Reused) {
            kept.clear();
            std::mem::take(&mut kept)
        } else {
            EventDetails::new()
        };
        reader
            .read_into_with(&dir, &mut conv, |p, doc| match p {
                Parsed::Event { index } => details.add(index, doc),
                Parsed::State => details.add_state(doc),
                _ => {}
            })
            .unwrap();
        let id = conv.name().to_owned();
        let input = OpenHandsInput {
            conversation: &conv,
            id: &id,
            parent: None,
            depth: 0,
            change: "full",
            events: EventSelection::All,
        };
        match way {
            Way::Parse => add_openhands(&mut ds, &input, &mut parser).unwrap(),
            Way::Details => add_openhands_with(&mut ds, &input, &details, &mut parser).unwrap(),
            Way::WrongDetails => {
                add_openhands_with(&mut ds, &input, &previous, &mut parser).unwrap();
            }
            Way::Reused => add_openhands_with(&mut ds, &input, &details, &mut parser).unwrap(),
        }
        if matches!(way, Way::Reused) {
            kept = details;
        } else {
            previous = details;
        }
    }
    let written = ds.finish(true).unwrap();
    dir.stage(&run, written, RunMode::Full, None, &[])
        .unwrap()
        .publish()
        .unwrap();
}

/// A table's rows, part file by part file in name order.
fn rows(out: &Path, table: Table) -> Vec<RecordBatch> {
    let mut files: Vec<PathBuf> = fs::read_dir(out.join(table.name()))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    let mut batches = Vec::new();
    for f in files {
        let r = ParquetRecordBatchReaderBuilder::try_new(fs::File::open(&f).unwrap())
            .unwrap()
            .build()
            .unwrap();
        batches.extend(r.map(Result::unwrap));
    }
    batches
}

#[test]
fn the_readers_details_give_the_rows_of_a_second_parse() {
    let t = tempfile::tempdir().unwrap();
    let (a, b, c) = (t.path().join("a"), t.path().join("b"), t.path().join("c"));
    let d = t.path().join("d");
    export(&a, Way::Parse);
    export(&b, Way::Details);
    export(&c, Way::WrongDetails);
    export(&d, Way::Reused);
    for table in Table::ALL {
        let parsed = rows(&a, table);
        let n: usize = parsed.iter().map(RecordBatch::num_rows).sum();
        assert!(n > 0, "{}: rows", table.name());
        assert_eq!(
            parsed,
            rows(&b, table),
            "{}: with the details",
            table.name()
        );
        assert_eq!(parsed, rows(&c, table), "{}: other details", table.name());
        assert_eq!(
            parsed,
            rows(&d, table),
            "{}: details kept and cleared",
            table.name()
        );
    }
}

/// Every file under `from` copied to `to`.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_tree(&p, &to.join(e.file_name()));
        } else {
            fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// Details whose events are the conversation's but whose state is not (the
/// state rewritten after they were read): the state is read again, not
/// taken from them.
#[test]
fn details_of_another_state_are_not_used() {
    let t = tempfile::tempdir().unwrap();
    let with_stats = corpus_conversations()
        .into_iter()
        .find(|d| {
            fs::read_to_string(d.join("base_state.json"))
                .is_ok_and(|s| s.contains("\"usage_to_metrics\""))
        })
        .expect("a conversation with metrics");
    let conv_dir = t.path().join("conv");
    copy_tree(&with_stats, &conv_dir);
    let mut reader = Reader::new();
    let mut conv = Conversation::default();
    let mut details = EventDetails::new();
    reader
        .read_into_with(&conv_dir, &mut conv, |p, doc| match p {
            Parsed::Event { index } => details.add(index, doc),
            Parsed::State => details.add_state(doc),
            _ => {}
        })
        .unwrap();
    // The state rewritten without its metrics; the events unchanged.
    let state_path = conv_dir.join("base_state.json");
    let mut state: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&state_path).unwrap()).unwrap();
    state.as_object_mut().unwrap().remove("stats");
    fs::write(&state_path, serde_json::to_string(&state).unwrap()).unwrap();
    reader.read_into(&conv_dir, &mut conv).unwrap();
    let id = conv.name().to_owned();
    let input = OpenHandsInput {
        conversation: &conv,
        id: &id,
        parent: None,
        depth: 0,
        change: "full",
        events: EventSelection::All,
    };
    let mut parser = Parser::new();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    for (out, with) in [(&a, false), (&b, true)] {
        let dir = DatasetDir::open(out, None).unwrap();
        let run = RunId::new(7);
        let mut ds = Dataset::create(out, &run, DatasetOptions::default()).unwrap();
        if with {
            add_openhands_with(&mut ds, &input, &details, &mut parser).unwrap();
        } else {
            add_openhands(&mut ds, &input, &mut parser).unwrap();
        }
        let written = ds.finish(true).unwrap();
        dir.stage(&run, written, RunMode::Full, None, &[])
            .unwrap()
            .publish()
            .unwrap();
    }
    for table in Table::ALL {
        assert_eq!(rows(&a, table), rows(&b, table), "{}", table.name());
    }
}
