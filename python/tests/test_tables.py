"""Arrow tables against the Parquet export (`agentlog export --parquet`)."""

from __future__ import annotations

import json
import os

import pytest

if os.environ.get("AGENTLOG_TESTS_NEED_PYARROW"):
    import pyarrow as pa  # CI: a missing pyarrow fails, never skips
else:
    pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

import agentlog  # noqa: E402
from conftest import CORPUS, OCCHAT, cli  # noqa: E402

TABLES = ["conversations", "events", "messages", "tool_calls", "llm_calls"]
# The time of the run: the export's and the table's differ by construction.
PER_RUN = {"snapshot_at"}


def rows(table):
    keep = [n for n in table.column_names if n not in PER_RUN]
    out = table.select(keep).to_pylist()
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def exported(out, name):
    files = sorted((out / name).rglob("*.parquet"))
    assert files, f"the export wrote no {name} part"
    return pa.concat_tables([pq.read_table(f) for f in files])


@pytest.fixture(scope="module")
def parquet_export(tmp_path_factory):
    out = tmp_path_factory.mktemp("pq") / "dataset"
    cli("export", CORPUS, "--parquet", out)
    return out


@pytest.mark.parametrize("name", TABLES)
def test_tables_equal_the_parquet_export(parquet_export, name):
    want = exported(parquet_export, name)
    got = agentlog.open(CORPUS).table(name).read_all()
    assert got.schema.remove_metadata() == want.schema.remove_metadata()
    assert got.num_rows == want.num_rows
    assert rows(got) == rows(want)


def test_table_shortcuts_and_the_c_stream():
    store = agentlog.open(CORPUS / "1.31.2")
    n = store.events_table().read_all().num_rows
    assert n == sum(len(c) for c in store.conversations(subagents=True))
    assert store.conversations_table().read_all().num_rows == len(list(store.conversations()))
    no_json = store.events_table(json=False).read_all()
    assert no_json.column("event_json").null_count == no_json.num_rows
    for t in ("messages_table", "tool_calls_table", "llm_calls_table"):
        assert getattr(store, t)().read_all().num_rows > 0


def test_occhat_tables_equal_the_parquet_export(tmp_path):
    root = OCCHAT / "sample_basic" / "sessions"
    out = tmp_path / "dataset"
    cli("export", root, "--parquet", out)
    for name in ("conversations", "messages"):
        want = exported(out, name)
        got = agentlog.open(root).table(name).read_all()
        assert rows(got) == rows(want)
