"""Incremental reading against `agentlog export --checkpoint`."""

from __future__ import annotations

import json
import shutil
import threading
import time

import pytest

import agentlog
from conftest import (
    cli_lines,
    follow_reads_each_first_change_when_reached,
    follow_reads_each_later_change_when_reached,
)


def as_lines(changes):
    """The changes as the lines `export --checkpoint` prints."""
    out = []
    for c in changes:
        if c.kind in ("removed", "rewrite"):
            out.append({"conversation": c.id, "parent": c.parent_id, "record": c.kind})
        if c.kind == "removed":
            continue
        for e in c.events:
            out.append(
                {
                    "conversation": c.id,
                    "parent": c.parent_id,
                    "index": e.index,
                    "file": e.file,
                    "error": e.error,
                    "event": None if e.error else json.loads(e.raw),
                }
            )
    return out


def test_first_scan_is_everything_and_the_next_nothing(store_copy, tmp_path):
    store = agentlog.open(store_copy)
    changes = store.changes_since(None)
    got = list(changes)
    assert {c.kind for c in got} == {"new"}
    assert changes.finished and changes.errors == []
    want = cli_lines("export", "--checkpoint", tmp_path / "cli.cp", store_copy)
    assert as_lines(got) == want
    cp = changes.checkpoint()
    assert cp.events == sum(len(c.events) for c in got)
    assert list(store.changes_since(cp)) == []
    cp.save(tmp_path / "py.cp")
    assert list(store.changes_since(str(tmp_path / "py.cp"))) == []
    assert agentlog.Checkpoint.from_bytes(cp.to_bytes()).events == cp.events
    # A path not there yet, or an empty file: a first run.
    (tmp_path / "empty.cp").write_bytes(b"")
    assert len(list(store.changes_since(tmp_path / "empty.cp"))) == len(got)
    assert len(list(store.changes_since(tmp_path / "none-yet.cp"))) == len(got)


def test_changes_equal_the_command_after_the_store_changed(store_copy, tmp_path):
    store = agentlog.open(store_copy)
    changes = store.changes_since(None)
    list(changes)
    changes.checkpoint().save(tmp_path / "py.cp")
    shutil.copyfile(tmp_path / "py.cp", tmp_path / "cli.cp")
    # One conversation removed, one added (a copy of another scenario's),
    # one gaining an event (its last one again under the next index).
    scenarios = sorted(p for p in store_copy.iterdir() if p.is_dir())
    gone = next(p for p in sorted(scenarios[0].iterdir()) if p.is_dir())
    shutil.rmtree(gone)
    grow = next(p for p in sorted(scenarios[1].iterdir()) if p.is_dir())
    events = sorted(p for p in (grow / "events").iterdir() if p.name.startswith("event-"))
    last = events[-1]
    n = len(events)
    new_name = f"event-{n:05d}-{'0' * 8}-0000-4000-8000-{'0' * 12}.json"
    data = json.loads(last.read_bytes())
    data["id"] = f"{'0' * 8}-0000-4000-8000-{'0' * 12}"
    (grow / "events" / new_name).write_text(json.dumps(data))
    time.sleep(0.05)
    got = list(store.changes_since(tmp_path / "py.cp"))
    kinds = {c.kind for c in got}
    assert "removed" in kinds and "updated" in kinds, kinds
    grown = next(c for c in got if c.path == grow)
    assert [e.file for e in grown.events] == [new_name]
    assert grown.from_index == n and grown.to_index == n + 1
    want = cli_lines("export", "--checkpoint", tmp_path / "cli.cp", store_copy)
    assert as_lines(got) == want


def test_verify_files_sees_an_earlier_event_file_edited_in_place(store_copy, tmp_path):
    import os

    store = agentlog.open(store_copy)
    changes = store.changes_since(None)
    list(changes)
    changes.checkpoint().save(tmp_path / "py.cp")
    shutil.copyfile(tmp_path / "py.cp", tmp_path / "cli.cp")
    # An earlier event file of a conversation rewritten in place: the same
    # size, its modification time put back.
    conv = next(c for c in store.conversations() if len(c.events) > 3)
    files = sorted(p for p in (conv.path / "events").iterdir() if p.name.startswith("event-"))
    edited = files[1]
    st = edited.stat()
    data = bytearray(edited.read_bytes())
    at = data.index(b'"id":"') + 6
    data[at] = ord("e") if data[at] == ord("f") else ord("f")
    edited.write_bytes(bytes(data))
    os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns))
    # Not seen without the option (one stat per event file), as the command.
    assert list(store.changes_since(tmp_path / "py.cp")) == []
    got = list(store.changes_since(tmp_path / "py.cp", verify_files=True))
    assert [(c.kind, c.path) for c in got] == [("rewrite", conv.path)]
    assert len(got[0].events) == len(files)
    want = cli_lines("export", "--checkpoint", tmp_path / "cli.cp", "--verify-files", store_copy)
    assert as_lines(got) == want


def test_a_checkpoint_of_another_store_is_refused(store_copy, tmp_path):
    from conftest import CORPUS

    other = agentlog.open(CORPUS / "1.0.0")
    changes = other.changes_since(None)
    list(changes)
    with pytest.raises(agentlog.FormatError) as e:
        agentlog.open(store_copy).changes_since(changes.checkpoint())
    assert e.value.path == str(store_copy)
    (tmp_path / "junk.cp").write_text("not a checkpoint")
    with pytest.raises(agentlog.FormatError):
        agentlog.open(store_copy).changes_since(tmp_path / "junk.cp")


def test_follow_hands_out_what_is_written(store_copy, tmp_path):
    store = agentlog.open(store_copy)
    first = store.changes_since(None)
    n = len(list(first))
    cp = first.checkpoint()
    scenarios = sorted(p for p in store_copy.iterdir() if p.is_dir())
    src = next(p for p in sorted(scenarios[0].iterdir()) if p.is_dir())

    def write_later():
        # Made beside the store, then renamed into it: one change.
        time.sleep(0.5)
        shutil.copytree(src, tmp_path / "stage" / src.name)
        (tmp_path / "stage" / src.name).rename(store_copy / "copied")

    t = threading.Thread(target=write_later)
    t.start()
    got = []
    for change in store.follow(cp, poll=0.1, idle_timeout=3.0):
        got.append(change)
        if change.path == store_copy / "copied":
            break
    t.join()
    assert n > 0
    copied = [c for c in got if c.path == store_copy / "copied"]
    assert len(copied) == 1
    assert copied[0].kind in ("new", "rewrite")
    assert [e.file for e in copied[0].events] == sorted(
        p.name for p in (src / "events").iterdir() if p.name.startswith("event-")
    )


def test_follow_from_nothing_ends_when_idle(store_copy):
    store = agentlog.open(store_copy)
    f = store.follow(None, idle_timeout=0.5)
    got = list(f)
    assert len(got) == len(list(store.changes_since(None)))
    assert f.checkpoint().events == sum(len(c.events) for c in got)


def test_follow_reads_its_first_changes_a_conversation_at_a_time(store_copy):
    def remove_one(order):
        # A top-level conversation without sub-agents, late in the order.
        last = next(
            c for c in reversed(order) if c.depth == 0 and not (c.path / "subagents").exists()
        )
        shutil.rmtree(last.path)
        return last.id

    follow_reads_each_first_change_when_reached(agentlog.open(store_copy), remove_one)


def test_follow_reads_a_later_scan_a_conversation_at_a_time(store_copy, tmp_path):
    template = next((store_copy / "chat").iterdir())

    def add_three():
        # Each a copy of the chat conversation under an ID of its own,
        # made beside the store and renamed into it.
        (store_copy / "added").mkdir()
        for k in range(3):
            new_id = f"{k + 1:08x}-0000-4000-8000-000000000000"
            stage = tmp_path / "stage" / new_id.replace("-", "")
            shutil.copytree(template, stage)
            state = json.loads((stage / "base_state.json").read_text())
            state["id"] = new_id
            (stage / "base_state.json").write_text(json.dumps(state))
            stage.rename(store_copy / "added" / stage.name)

    follow_reads_each_later_change_when_reached(agentlog.open(store_copy), add_three)


def nest_too_deep(store_copy):
    """Makes a conversation with sub-agents nested one level deeper than
    the reader follows (`MAX_SUBAGENT_DEPTH`, 16): each level a copy of the
    `chat` conversation. Returns the directories, outermost first; the last
    is the one too deep to read."""
    template = next((store_copy / "chat").iterdir())
    levels = []
    at = store_copy / "deep" / "d0000000000000000000000000000000"
    for depth in range(18):
        at.mkdir(parents=True)
        shutil.copy(template / "base_state.json", at / "base_state.json")
        shutil.copytree(template / "events", at / "events")
        levels.append(at)
        at = at / "subagents" / f"d{depth + 1:031x}"
    return levels


def test_a_conversation_that_cannot_be_read_is_an_error_and_the_rest_is_read(store_copy):
    levels = nest_too_deep(store_copy)
    store = agentlog.open(store_copy)
    everything = store.changes_since(None)
    got = list(everything)
    assert everything.finished
    [error] = everything.errors
    assert isinstance(error, agentlog.ReadError)
    assert error.path == str(levels[-1])
    paths = {c.path for c in got}
    assert all(level in paths for level in levels[:-1])
    assert levels[-1] not in paths
    # Kept as it was in the checkpoint: tried again the next time.
    again = store.changes_since(everything.checkpoint())
    assert list(again) == []
    assert [e.path for e in again.errors] == [error.path]
    # The follow's first changes meet it as the scan does.
    f = store.follow(None, idle_timeout=0.5)
    assert [(c.kind, c.id) for c in f] == [(c.kind, c.id) for c in got]
    assert [(type(e), e.path) for e in f.errors] == [(agentlog.ReadError, error.path)]
