"""Views, trees and usage against `agentlog view --json`, `tree --json`
and `stats --json`."""

from __future__ import annotations

import pytest

import agentlog
from conftest import CORPUS, VERSIONS, cli_json, cli_lines


def every_conversation(version):
    return list(agentlog.open(CORPUS / version).conversations(subagents=True))


@pytest.mark.parametrize("version", VERSIONS)
def test_view_equals_the_command(version):
    for conv in every_conversation(version):
        assert conv.view() == cli_json("view", "--json", conv.path), conv.path
        assert conv.view_event_ids() == cli_json("view", "--event-ids", "--json", conv.path)


@pytest.mark.parametrize("version", VERSIONS)
def test_tree_equals_the_command(version):
    for conv in every_conversation(version):
        want = cli_json("tree", "--json", conv.path)
        got = conv.tree()
        want.pop("path")
        want.pop("subagents")
        assert got["head"] == want["head"]
        assert got["forks"] == want["forks"]
        assert [{k: b[k] for k in b if k != "event_ids"} for b in got["branches"]] == want["branches"]
        assert {k: v for k, v in got.items() if k not in ("branches",)} == {
            k: v for k, v in want.items() if k != "branches"
        }


def test_view_of_a_branch():
    store = agentlog.open(CORPUS / "1.58.2")
    forked = [c for c in store if len(c.tree()["branches"]) > 1]
    assert forked, "the corpus has a conversation with branches"
    for conv in forked:
        for b in conv.tree()["branches"]:
            tip = b["tip_id"]
            assert conv.view(branch=tip) == cli_json("view", "--json", "--branch", tip, conv.path)


@pytest.mark.parametrize("version", VERSIONS)
def test_usage_equals_stats(version):
    for conv in agentlog.open(CORPUS / version):
        if conv.subagents:
            continue  # stats of the directory counts its sub-agents too
        want = cli_json("stats", "--json", conv.path)["usage"]
        got = conv.usage()
        assert got.keys() == want.keys()
        for model, u in got.items():
            for k, v in u.items():
                assert v == pytest.approx(want[model][k]), (conv.path, model, k)
