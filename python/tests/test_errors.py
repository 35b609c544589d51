"""Bad paths and bad arguments raise the package's exceptions, each with
the path it is about and the reason."""

from __future__ import annotations

import os

import pytest

import agentlog
from conftest import CORPUS


def test_a_missing_path(tmp_path):
    missing = tmp_path / "no" / "such" / "store"
    with pytest.raises(agentlog.ReadError) as e:
        agentlog.open(missing)
    assert e.value.path == str(missing)
    assert "No such file or directory" in e.value.reason
    assert str(e.value) == f"{missing}: {e.value.reason}"
    assert isinstance(e.value, agentlog.AgentlogError)


def test_a_directory_of_nothing(tmp_path):
    with pytest.raises(agentlog.ReadError) as e:
        agentlog.open(tmp_path)
    assert e.value.path == str(tmp_path)
    assert "no OpenHands conversations or OC Chat sessions" in e.value.reason


def test_a_file_that_is_not_of_a_conversation(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("hello")
    with pytest.raises(agentlog.ReadError) as e:
        agentlog.open(f)
    assert e.value.path == str(f)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every directory")
def test_an_unreadable_directory(tmp_path):
    d = tmp_path / "locked"
    d.mkdir()
    d.chmod(0)
    try:
        with pytest.raises(agentlog.ReadError) as e:
            agentlog.open(d)
        assert e.value.path == str(d)
    finally:
        d.chmod(0o755)


def test_no_such_conversation_or_event():
    store = agentlog.open(CORPUS / "1.31.2")
    with pytest.raises(agentlog.NotFoundError) as e:
        store["zzzz"]
    assert isinstance(e.value, KeyError)
    assert e.value.path == str(CORPUS / "1.31.2") and "zzzz" in e.value.reason
    conv = next(iter(store))
    with pytest.raises(agentlog.NotFoundError):
        conv.view(branch="zzzz")
    with pytest.raises(agentlog.FormatError) as e:
        conv.view(sdk_version="99.0.0")
    assert "99.0.0" in e.value.reason and isinstance(e.value, ValueError)


def test_a_conversation_removed_after_opening(store_copy):
    import shutil

    store = agentlog.open(store_copy)
    first = store.ids_list()[0]
    victim = next(c.path for c in store if c.id == first)
    shutil.rmtree(victim)
    with pytest.raises(agentlog.ReadError) as e:
        store[first]
    assert str(victim) in str(e.value)


def test_bad_table():
    with pytest.raises(agentlog.FormatError) as e:
        agentlog.open(CORPUS).table("nope")
    assert "conversations, events, messages" in e.value.reason


def test_bad_checkpoints(tmp_path):
    bad = tmp_path / "bad.cp"
    bad.write_bytes(b"\x00garbage")
    with pytest.raises(agentlog.FormatError) as e:
        agentlog.Checkpoint.load(bad)
    assert e.value.path == str(bad)
    with pytest.raises(agentlog.ReadError):
        agentlog.Checkpoint.load(tmp_path / "missing.cp")
    with pytest.raises(agentlog.FormatError):
        agentlog.Checkpoint.from_bytes(b"{}")


def test_a_consumed_arrow_stream():
    s = agentlog.open(CORPUS / "1.0.0").table("events")
    stream = s if hasattr(s, "__arrow_c_stream__") and not hasattr(s, "read_all") else None
    if stream is None:
        # pyarrow took the stream: a second read of the reader is empty.
        s.read_all()
        with pytest.raises(StopIteration):
            s.read_next_batch()
    else:
        stream.__arrow_c_stream__()
        with pytest.raises(agentlog.AgentlogError):
            stream.__arrow_c_stream__()
