//! A dataset holds at most its memory budget after every row, whatever the size of its conversations: the budget is
//! kept within a conversation, not only between conversations.

use agentlog::json::Parser;
use agentlog::openhands::Store;
use agentlog::parquet::{
    Dataset, DatasetOptions, EventSelection, OpenHandsInput, RunId, add_openhands,
};
use agentlog::synth::{GenConfig, SdkStyle, write_store};

#[test]
fn the_budget_holds_after_every_conversation_of_any_size() {
    let t = tempfile::tempdir().unwrap();
    let store_dir = t.path().join("store");
    let cfg = GenConfig {
        conversations: 6,
        events_per_conversation: 120,
        seed: 3,
        style: SdkStyle::V1_58,
        subagent_ratio: 0.0,
        condenser_ratio: 0.3,
        confirm_ratio: 0.0,
        branch_ratio: 0.0,
        meta_ratio: 0.5,
        content_scale: 8.0,
        length_spread: 0.0,
        threads: 1,
    };
    write_store(&store_dir, &cfg).unwrap();
    // A budget far below one conversation's rows, row groups and batches
    // above it: only the budget can keep the bytes down.
    let budget = 64 << 10;
    let options = DatasetOptions {
        memory_budget: budget,
        batch_bytes: 64 << 20,
        row_group_bytes: 64 << 20,
        ..DatasetOptions::default()
    };
    let mut ds = Dataset::create(&t.path().join("out"), &RunId::new(1), options).unwrap();
    let store = Store::open(&store_dir).unwrap();
    let mut stream = store.stream();
    let mut parser = Parser::new();
    let mut event_bytes = 0usize;
    while let Some(item) = stream.next() {
        let item = item.unwrap();
        let conv = item.conversation;
        event_bytes += conv.events().map(|e| e.raw().len()).sum::<usize>();
        let id = conv.name().to_owned();
        let input = OpenHandsInput {
            conversation: conv,
            id: &id,
            parent: None,
            depth: item.depth,
            change: "full",
            events: EventSelection::All,
        };
        add_openhands(&mut ds, &input, &mut parser).unwrap();
        // No `bound_memory` call: the budget is kept row by row.
        assert!(
            ds.buffered() <= budget,
            "{} bytes held, budget {budget}",
            ds.buffered()
        );
    }
    assert!(
        event_bytes > 8 * budget,
        "the store is far above the budget"
    );
    let w = ds.finish(true).unwrap();
    assert!(w.rows[1] >= 6 * 120, "every event written: {:?}", w.rows);
}
