//! Whether two OpenHands conversations hold the same: for the fuzz
//! targets' checks and the reader's tests.

use agentlog::openhands::Conversation;

/// What two conversations hold, compared field by field (not the directory
/// path, and errors by kind).
pub fn assert_same(a: &Conversation, b: &Conversation, what: &str) {
    assert_eq!(a.name(), b.name(), "{what}");
    assert_eq!(a.state().is_some(), b.state().is_some(), "{what}");
    assert_eq!(
        a.state().map(|f| f.raw()),
        b.state().map(|f| f.raw()),
        "{what}"
    );
    assert_eq!(
        a.state().and_then(|f| f.error()).is_some(),
        b.state().and_then(|f| f.error()).is_some(),
        "{what}"
    );
    assert_eq!(a.meta().is_some(), b.meta().is_some(), "{what}");
    assert_eq!(
        a.meta().map(|f| f.raw()),
        b.meta().map(|f| f.raw()),
        "{what}"
    );
    assert_eq!(
        a.meta().and_then(|f| f.error()).is_some(),
        b.meta().and_then(|f| f.error()).is_some(),
        "{what}"
    );
    assert_eq!(a.len(), b.len(), "{what}");
    for (x, y) in a.events().zip(b.events()) {
        assert_eq!(x.index(), y.index());
        assert_eq!(x.file_name(), y.file_name());
        assert_eq!(x.file_id(), y.file_id());
        assert_eq!(x.kind(), y.kind());
        assert_eq!(x.id(), y.id());
        assert_eq!(x.timestamp(), y.timestamp());
        assert_eq!(x.source(), y.source());
        assert_eq!(x.parent_id(), y.parent_id());
        assert_eq!(x.has_parent(), y.has_parent());
        assert_eq!(x.raw(), y.raw());
        assert_eq!(x.is_ok(), y.is_ok());
        assert_eq!(x.error().map(|e| e.offset()), y.error().map(|e| e.offset()));
    }
    let files = |c: &Conversation| -> Vec<_> {
        c.files()
            .map(|f| {
                (
                    f.name().to_owned(),
                    f.index(),
                    f.id().map(str::to_owned),
                    f.status(),
                )
            })
            .collect()
    };
    assert_eq!(files(a), files(b), "{what}");
    assert_eq!(a.others(), b.others(), "{what}");
    assert_eq!(a.dirs(), b.dirs(), "{what}");
    assert_eq!(a.subagents(), b.subagents(), "{what}");
    assert_eq!(a.sidecars(), b.sidecars(), "{what}");
    assert_eq!(a.units(), b.units(), "{what}");
    assert_eq!(a.parsed_event_count(), b.parsed_event_count(), "{what}");
    assert_eq!(a.event_file_count(), b.event_file_count(), "{what}");
}
