"""ASF: conversions against `agentlog asf convert`, verification against
`asf check --json`, contexts against `asf context --json` / `--chat`."""

from __future__ import annotations

import json

import pytest

import agentlog
from conftest import ASF, CORPUS, OCCHAT, VERSIONS, cli, cli_json, cli_lines

SESSIONS = sorted((ASF / "sessions").glob("*.jsonl"))


@pytest.mark.parametrize("version", VERSIONS)
def test_conversions_equal_the_command(version, tmp_path):
    root = CORPUS / version
    cli("asf", "convert", root, "-o", tmp_path)
    report = cli_lines("asf", "convert", root, "--report")
    mine_report = []
    for conv in agentlog.open(root).conversations(subagents=True):
        done = conv.to_asf()
        assert done.data == (tmp_path / f"{done.session_id}.jsonl").read_bytes(), conv.path
        mine_report.extend(done.report)
        assert done.session().verify() == []
    assert mine_report == report


def test_a_conversion_saved_is_the_file(tmp_path):
    conv = next(iter(agentlog.open(CORPUS / "1.31.2")))
    done = conv.to_asf()
    path = done.save(tmp_path)
    assert path == tmp_path / f"{done.session_id}.jsonl"
    assert path.read_bytes() == done.data
    assert agentlog.read_asf(path).id == done.session().id


def test_occhat_conversions_equal_the_command(tmp_path):
    root = OCCHAT / "sample_basic" / "sessions"
    cli("asf", "convert", root, "-o", tmp_path)
    for s in agentlog.open(root):
        done = s.to_asf()
        assert done.data == (tmp_path / f"{done.session_id}.jsonl").read_bytes()


# The formats this reader names (RFC 0001 draft 0.10, Versioning: a reader
# refuses a format minor it does not name).
READ_FORMATS = {f"agentsession/0.{minor}" for minor in range(5, 11)}


def _format(path):
    return json.loads(path.read_bytes().splitlines()[0])["format"]


# Files of a 0.x format: read as stored or lowered (a later major, 1.0, is
# only refused).
MINOR_0 = [p for p in SESSIONS if _format(p).startswith("agentsession/0.")]


def _readable(path, tmp_path):
    """The fixture as this reader reads it: as stored, or, for a later 0.x
    header (only the header's `format` changes from 0.5 to 0.11, as
    tests/data/asf/FIXTURES-SOURCE.md says), a copy with it lowered to 0.10,
    as the Rust fixture tests read them."""
    if _format(path) in READ_FORMATS:
        return path
    text = path.read_text()
    lowered = text.replace('"agentsession/0.11"', '"agentsession/0.10"', 1)
    copy = tmp_path / path.name
    copy.write_text(lowered)
    return copy


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_a_format_not_named_is_refused_alike(path):
    if _format(path) in READ_FORMATS:
        assert agentlog.read_asf(path).format == _format(path)
        return
    with pytest.raises(agentlog.FormatError) as e:
        agentlog.read_asf(path)
    assert e.value.path == str(path) and "unsupported format" in e.value.reason
    rows = cli_lines("asf", "check", "--json", path, ok=(2,))
    assert [(r["line"], r["problem"]) for r in rows] == [(1, "refused")]


@pytest.mark.parametrize("path", MINOR_0, ids=lambda p: p.name)
def test_verify_equals_asf_check(path, tmp_path):
    path = _readable(path, tmp_path)
    s = agentlog.read_asf(path)
    assert s.verify() == cli_lines("asf", "check", "--json", path, ok=(0, 1))
    assert s.verify(request_hashes=False) == cli_lines(
        "asf", "check", "--json", "--no-request-hashes", path, ok=(0, 1)
    )
    lines = path.read_bytes().splitlines()
    assert s.header == json.loads(lines[0])
    assert s.format == s.header["format"] and s.id == s.header["id"]
    assert len(s) == len(s.entries)
    # The same bytes from memory: the same rows, less the path.
    no_path = [{k: v for k, v in row.items() if k != "path"} for row in s.verify()]
    assert agentlog.AsfSession.from_bytes(path.read_bytes()).verify() == no_path


@pytest.mark.parametrize("path", MINOR_0, ids=lambda p: p.name)
def test_context_equals_asf_context(path, tmp_path):
    path = _readable(path, tmp_path)
    s = agentlog.read_asf(path)
    if s.leaf is None:
        pytest.skip("no entry")  # none of the fixtures; kept for new ones
    try:
        want = cli_json("asf", "context", "--json", path)
    except BaseException:
        with pytest.raises(agentlog.FormatError):
            s.context().to_dict()
        return
    ctx = s.context()
    assert ctx.to_dict() == want
    assert ctx.leaf == s.leaf
    assert ctx.chat_messages() == cli_json("asf", "context", "--chat", path)
    # An entry by a prefix of its hex digits, as --leaf takes it.
    first = s.entries[0]["id"]
    at = s.context(first.split(":")[1][:12])
    assert at.leaf == first
    assert at.to_dict() == cli_json("asf", "context", "--json", "--leaf", first, path)


def test_asf_reference_contexts(tmp_path):
    # The fixtures' own expected contexts (tests/data/asf/context/*.json).
    for expected in sorted((ASF / "context").glob("*.json")):
        s = agentlog.read_asf(_readable(ASF / "sessions" / f"{expected.stem}.jsonl", tmp_path))
        want = json.loads(expected.read_text())
        assert want, expected.name
        # instructions.json names entries by their `legacy_id`.
        legacy = {e["legacy_id"]: e["id"] for e in s.entries if "legacy_id" in e}
        for leaf, ctx in want.items():
            got = s.context(legacy.get(leaf, leaf)).to_dict()
            for key in ("entries", "item_entries"):
                if key not in ctx:
                    continue  # extensions.json's expectation has no item_entries
                ctx[key] = [legacy.get(i, i) for i in ctx[key]]
            assert {k: got[k] for k in ctx} == ctx, (expected.name, leaf)


def test_not_an_asf_file(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"type": "message"}\n')
    with pytest.raises(agentlog.FormatError) as e:
        agentlog.read_asf(p)
    assert e.value.path == str(p) and "not an ASF session file" in e.value.reason
    with pytest.raises(agentlog.ReadError):
        agentlog.read_asf(tmp_path / "missing.jsonl")
    with pytest.raises(agentlog.FormatError):
        agentlog.AsfSession.from_bytes(b"")
