"""Events against `agentlog events --json` and the files themselves."""

from __future__ import annotations

import json

import pytest

import agentlog
from conftest import CORPUS, VERSIONS, cli_lines


def every_conversation(version):
    return list(agentlog.open(CORPUS / version).conversations(subagents=True))


@pytest.mark.parametrize("version", VERSIONS)
def test_envelopes_equal_the_command(version):
    for conv in every_conversation(version):
        rows = cli_lines("events", "--json", conv.path)
        assert len(conv.events) == len(rows) == len(conv)
        for e, row in zip(conv.events, rows):
            mine = {
                "index": e.index,
                "file": e.file,
                "id": e.id,
                "kind": e.kind,
                "source": e.source,
                "parent_id": e.parent_id,
                "timestamp": e.timestamp,
            }
            assert {k: row[k] for k in mine} == mine, (conv.path, e.file)


@pytest.mark.parametrize("version", VERSIONS)
def test_members_and_raw_bytes(version):
    for conv in every_conversation(version):
        for e in conv.events:
            raw = (conv.path / "events" / e.file).read_bytes()
            assert e.raw == raw
            if e.error is None:
                whole = json.loads(raw)
                assert e.to_dict() == whole
                assert e.keys() == list(whole)
                for k, v in whole.items():
                    assert e[k] == v and k in e
                assert "no such member" not in e
                assert e.get("no such member", 7) == 7
                with pytest.raises(KeyError):
                    e["no such member"]


def test_event_lookup_and_indexing():
    conv = next(iter(agentlog.open(CORPUS / "1.31.2")))
    events = conv.events
    assert events[-1].index == events[len(events) - 1].index
    with pytest.raises(IndexError):
        events[len(events)]
    e = events[3]
    assert conv.event(e.file_id).index == 3
    assert conv.event(e.file_id[:13]).file == e.file
    with pytest.raises(agentlog.NotFoundError) as err:
        conv.event("zzzz")
    assert err.value.path == str(conv.path)
    assert events.kinds() == [x.kind for x in events]
