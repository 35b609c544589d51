"""Stores, conversations and their metadata against `agentlog ls --json`."""

from __future__ import annotations

import pytest

import agentlog
from conftest import CORPUS, OCCHAT, OCCHAT_STORES, VERSIONS, cli_lines


@pytest.mark.parametrize("version", VERSIONS)
def test_ls_rows_equal_the_command(version):
    root = str(CORPUS / version)
    store = agentlog.open(root)
    rows = cli_lines("ls", "--json", root)
    assert store.format == "openhands"
    assert len(store) == len(rows) > 0
    assert [c.ls_row() for c in store] == rows
    assert store.ids_list() == [r["id"] for r in rows]


@pytest.mark.parametrize("version", VERSIONS)
def test_lookup_by_id_and_prefix(version):
    store = agentlog.open(CORPUS / version)
    ids = store.ids_list()
    for cid in ids:
        assert store[cid].id == cid
        assert store[cid.upper()[:10]].id == cid or sum(i.startswith(cid[:10]) for i in ids) > 1
    assert store.get("f" * 40) is None


def test_ambiguous_prefix_lists_the_candidates():
    store = agentlog.open(CORPUS)
    ids = store.ids_list()
    first = {}
    for i in ids:
        first.setdefault(i[0], []).append(i)
    letter, many = next((k, v) for k, v in sorted(first.items()) if len(v) > 1)
    with pytest.raises(agentlog.AmbiguousError) as e:
        store[letter]
    assert sorted(e.value.candidates) == sorted(set(many))
    assert e.value.path == str(CORPUS)


def test_subagents_walk_as_export_does():
    root = CORPUS / "1.58.2"
    store = agentlog.open(root)
    walked = list(store.conversations(subagents=True))
    exported = {(r["conversation"], r["parent"]) for r in cli_lines("export", root)}
    assert {(c.id, c.parent_id) for c in walked} == exported
    subs = [c for c in walked if c.depth > 0]
    assert subs, "the 1.58.2 corpus has sub-agents"
    for s in subs:
        parent = next(c for c in walked if c.id == s.parent_id)
        assert s.id in [x.id for x in parent.subagents]


@pytest.mark.parametrize("name", [n for n in OCCHAT_STORES if n != "sample_legacy"])
def test_occhat_sessions_equal_the_command(name):
    root = str(OCCHAT / name / "sessions")
    store = agentlog.open(root)
    assert store.format == "occhat"
    rows = cli_lines("ls", "--json", root)
    assert [s.ls_row() for s in store] == rows
    for s in store:
        assert store[s.name].name == s.name


def test_read_all_in_parallel_equals_iteration():
    store = agentlog.open(CORPUS)
    seq = [(c.id, len(c), c.events.kinds()) for c in store]
    par = [(c.id, len(c), c.events.kinds()) for c in store.read_all()]
    assert par == seq


def test_reads_from_threads_agree():
    from concurrent.futures import ThreadPoolExecutor

    store = agentlog.open(CORPUS)
    ids = store.ids_list()

    def kinds(cid):
        return store[cid].events.kinds()

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(kinds, ids))
    assert got == [kinds(i) for i in ids]


def test_flat_layout_occhat_store_is_refused_as_the_command_refuses_it():
    root = OCCHAT / "sample_legacy" / "sessions"
    with pytest.raises(agentlog.ReadError) as e:
        agentlog.open(root)
    assert e.value.path == str(root)
    assert "flat layout" in e.value.reason and "migrate" in e.value.reason
