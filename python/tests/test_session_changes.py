"""Incremental reading of OC Chat sessions directories: `changes_since`
and `follow` on a store `agentlog.open` found to be OC Chat."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time

import pytest

import agentlog
from conftest import (
    OCCHAT,
    follow_reads_each_first_change_when_reached,
    follow_reads_each_later_change_when_reached,
)


@pytest.fixture
def sessions_copy(tmp_path):
    """A copy of the recovery sample's sessions directory (four sessions),
    free to change."""
    dst = tmp_path / "sessions"
    shutil.copytree(OCCHAT / "sample_recovery" / "sessions", dst)
    return dst


def save_again(session, messages):
    """What a save does to what a scan looks at: the chat log the meta
    names holds `messages`, and the meta file is written again (a new
    modification time)."""
    log = json.loads(session.meta_path.read_text())["chat_logs"][-1]
    path = session.path / log
    doc = json.loads(path.read_text())
    doc["messages"] = messages
    path.write_text(json.dumps(doc, indent=2))
    meta = session.meta_path
    meta.write_text(meta.read_text())
    later = time.time() + 5
    os.utime(meta, (later, later))


def brief(changes):
    return sorted((c.kind, c.id, c.from_index, c.to_index) for c in changes)


def test_first_pass_is_every_message_and_the_next_nothing(sessions_copy, tmp_path):
    store = agentlog.open(sessions_copy)
    assert store.format == "occhat"
    changes = store.changes_since(None)
    got = list(changes)
    assert changes.finished
    assert brief(got) == sorted(("new", s.id, 0, len(s.messages)) for s in store)
    for c in got:
        assert c.messages == store[c.id].messages
    cp = changes.checkpoint()
    assert len(cp) == len(store) == 4
    assert cp.messages == sum(len(s.messages) for s in store)
    assert cp.root == sessions_copy.resolve()
    assert list(store.changes_since(cp)) == []
    cp.save(tmp_path / "s.cp")
    assert list(store.changes_since(str(tmp_path / "s.cp"))) == []
    assert agentlog.SessionsCheckpoint.load(tmp_path / "s.cp").to_bytes() == cp.to_bytes()
    assert agentlog.SessionsCheckpoint.from_bytes(cp.to_bytes()).messages == cp.messages
    # A path not there yet, or an empty file: a first run.
    (tmp_path / "empty.cp").write_bytes(b"")
    assert len(list(store.changes_since(tmp_path / "empty.cp"))) == 4
    assert len(list(store.changes_since(tmp_path / "none-yet.cp"))) == 4


def test_saves_edits_and_removals_since_a_checkpoint(sessions_copy):
    store = agentlog.open(sessions_copy)
    first = store.changes_since(None)
    list(first)
    cp = first.checkpoint()
    grown, edited, gone = store["all-good"], store["orphan-user"], store["empty-reply"]
    n, n_gone = len(grown.messages), len(gone.messages)
    save_again(grown, grown.messages + [{"role": "user", "content": "one more"}])
    edited_messages = [dict(m) for m in edited.messages]
    edited_messages[1]["content"] = "said otherwise"
    save_again(edited, edited_messages)
    shutil.rmtree(gone.path)
    # The same meta saved again with the same messages: nothing to hand out.
    same = store["pending-tools"]
    save_again(same, same.messages)

    changes = store.changes_since(cp)
    got = list(changes)
    assert brief(got) == sorted(
        [
            ("removed", "empty-reply", 0, 0),
            ("rewrite", "orphan-user", 0, len(edited_messages)),
            ("updated", "all-good", n, n + 1),
        ]
    )
    by_kind = {c.kind: c for c in got}
    assert by_kind["updated"].messages == [{"role": "user", "content": "one more"}]
    assert by_kind["rewrite"].messages[1]["content"] == "said otherwise"
    assert by_kind["removed"].messages == []
    after = changes.checkpoint()
    assert len(after) == 3
    assert after.messages == cp.messages + 1 - n_gone
    assert list(store.changes_since(after)) == []
    # The checkpoint of a pass from nothing over the store as it is now.
    fresh = store.changes_since(None)
    list(fresh)
    assert fresh.checkpoint().to_bytes() == after.to_bytes()


def test_a_pass_taken_halfway_goes_on_from_its_checkpoint(sessions_copy):
    store = agentlog.open(sessions_copy)
    changes = store.changes_since(None)
    first = next(changes)
    half = changes.checkpoint()
    assert len(half) == 1 and not changes.finished
    rest = list(store.changes_since(half))
    assert sorted(c.id for c in rest) == sorted(s.id for s in store if s.id != first.id)


def test_checkpoints_of_the_other_kind_or_directory_are_refused(sessions_copy, tmp_path):
    store = agentlog.open(sessions_copy)
    openhands = agentlog.open(OCCHAT.parent / "openhands" / "1.31.2")
    oh_changes = openhands.changes_since(None)
    list(oh_changes)
    oh_cp = oh_changes.checkpoint()
    with pytest.raises(agentlog.FormatError, match="SessionsCheckpoint"):
        store.changes_since(oh_cp)
    oh_cp.save(tmp_path / "oh.cp")
    with pytest.raises(agentlog.FormatError):
        store.changes_since(tmp_path / "oh.cp")
    ss = store.changes_since(None)
    list(ss)
    with pytest.raises(agentlog.FormatError, match="agentlog.Checkpoint"):
        openhands.changes_since(ss.checkpoint())
    ss.checkpoint().save(tmp_path / "s.cp")
    with pytest.raises(agentlog.FormatError):
        openhands.changes_since(tmp_path / "s.cp")
    other = tmp_path / "other"
    shutil.copytree(sessions_copy, other)
    with pytest.raises(agentlog.FormatError):
        agentlog.open(other).changes_since(ss.checkpoint())
    with pytest.raises(ValueError):
        store.changes_since(None, verify_files=True)
    with pytest.raises(ValueError):
        store.changes_since(None, settle=1.0)
    with pytest.raises(ValueError):
        store.follow(None, verify_files=True)


def test_follow_hands_out_each_save_and_ends_when_idle(sessions_copy):
    store = agentlog.open(sessions_copy)
    session = store["all-good"]
    n = len(session.messages)
    want = sorted(("new", s.id, 0, len(s.messages)) for s in store)

    def save_now():
        save_again(session, session.messages + [{"role": "assistant", "content": "later"}])

    f = store.follow(None, poll=0.1, idle_timeout=5.0)
    got, writer = [], None
    for change in f:
        got.append(change)
        if len(got) == len(store):
            # Everything there was is handed out: a save now is a change
            # of its own.
            assert f.pending == 0
            writer = threading.Thread(target=save_now)
            writer.start()
        if change.kind == "updated":
            break
    assert writer is not None
    writer.join()
    assert brief(got[:4]) == want
    assert [(c.kind, c.id, c.from_index) for c in got[4:]] == [("updated", "all-good", n)]
    assert got[4].messages == [{"role": "assistant", "content": "later"}]
    fresh = store.changes_since(None)
    list(fresh)
    assert f.checkpoint().to_bytes() == fresh.checkpoint().to_bytes()


def test_follow_from_a_checkpoint_with_nothing_new_ends_when_idle(sessions_copy):
    store = agentlog.open(sessions_copy)
    first = store.changes_since(None)
    list(first)
    f = store.follow(first.checkpoint(), idle_timeout=0.3)
    assert list(f) == []
    assert f.checkpoint().to_bytes() == first.checkpoint().to_bytes()


def test_a_sessions_directory_gone_since_it_was_opened_is_a_read_error(sessions_copy):
    store = agentlog.open(sessions_copy)
    shutil.rmtree(sessions_copy)
    with pytest.raises(agentlog.ReadError) as e:
        store.changes_since(None)
    assert e.value.path == str(sessions_copy)
    with pytest.raises(agentlog.ReadError):
        store.follow(None, idle_timeout=0.1)


def test_follow_loads_its_first_changes_a_session_at_a_time(sessions_copy):
    store = agentlog.open(sessions_copy)

    def remove_one(order):
        shutil.rmtree(store[order[-1].id].path)
        return order[-1].id

    f = follow_reads_each_first_change_when_reached(store, remove_one)
    fresh = store.changes_since(None)
    list(fresh)
    assert f.checkpoint().to_bytes() == fresh.checkpoint().to_bytes()


def test_follow_loads_a_later_pass_a_session_at_a_time(sessions_copy):
    store = agentlog.open(sessions_copy)

    def save_three():
        for s in list(store)[:3]:
            save_again(s, s.messages + [{"role": "assistant", "content": "later"}])

    f = follow_reads_each_later_change_when_reached(store, save_three)
    fresh = store.changes_since(None)
    list(fresh)
    assert f.checkpoint().to_bytes() == fresh.checkpoint().to_bytes()
