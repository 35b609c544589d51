"""Arrow tables against the Parquet export (`agentlog export --parquet`)."""

from __future__ import annotations

import json
import os

import pytest

if os.environ.get("AGENTLOG_TESTS_NEED_PYARROW"):
    import pyarrow as pa  # CI: a missing pyarrow fails, never skips
else:
    pa = pytest.importorskip("pyarrow")
import pyarrow.compute as pc  # noqa: E402
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


def raw_stream(monkeypatch, name, store=None):
    """The table's `agentlog.ArrowStream` itself (what a consumer without
    pyarrow gets): pyarrow hidden while the table is made."""
    store = store or agentlog.open(CORPUS / "1.31.2")
    with monkeypatch.context() as m:
        m.setitem(__import__("sys").modules, "pyarrow", None)
        s = store.table(name)
    assert isinstance(s, agentlog.ArrowStream)
    return s


def test_a_requested_schema_is_each_column_cast(monkeypatch):
    plain = agentlog.open(CORPUS / "1.31.2").table("events").read_all()
    # Every string column as large_string, every timestamp in nanoseconds.
    def wider(t):
        if pa.types.is_string(t):
            return pa.large_string()
        if pa.types.is_timestamp(t):
            return pa.timestamp("ns", tz=t.tz)
        return t

    asked = pa.schema([pa.field(f.name, wider(f.type), f.nullable) for f in plain.schema])
    assert asked != plain.schema.remove_metadata()
    got = pa.RecordBatchReader.from_stream(raw_stream(monkeypatch, "events"), schema=asked).read_all()
    assert got.schema.remove_metadata() == asked
    assert got.num_rows == plain.num_rows
    # The same values (but the time of each read).
    assert rows(got.cast(plain.schema)) == rows(plain)

    # The table's own schema asked for: the stream as it is.
    same = pa.RecordBatchReader.from_stream(
        raw_stream(monkeypatch, "events"), schema=plain.schema
    ).read_all()
    assert same.schema == plain.schema
    assert rows(same) == rows(plain)


def test_a_requested_schema_for_other_columns_is_refused(monkeypatch):
    plain = agentlog.open(CORPUS / "1.31.2").table("tool_calls").read_all().schema
    fewer = pa.schema(list(plain)[:-1])
    renamed = pa.schema([plain.field(0).with_name("other")] + list(plain)[1:])
    for asked in (fewer, renamed):
        s = raw_stream(monkeypatch, "tool_calls")
        with pytest.raises(ValueError, match="requested schema"):
            s.__arrow_c_stream__(asked.__arrow_c_schema__())
        # Refused before it was consumed: the stream is still whole.
        assert pa.RecordBatchReader.from_stream(s).read_all().num_rows > 0
    with pytest.raises(TypeError, match="arrow_schema"):
        raw_stream(monkeypatch, "tool_calls").__arrow_c_stream__("not a capsule")


def test_a_requested_type_no_column_casts_to_keeps_the_tables_schema(monkeypatch):
    plain = agentlog.open(CORPUS / "1.31.2").table("events").read_all().schema
    # A struct for a string column (arrow-rs has no such cast), and a
    # timestamp in a coarser unit (its microseconds would be lost).
    struct = pa.struct([("x", pa.int8())])
    coarse = pa.timestamp("ms", tz="UTC")
    for change in (
        lambda f: struct if pa.types.is_string(f.type) else f.type,
        lambda f: coarse if pa.types.is_timestamp(f.type) else f.type,
    ):
        odd = pa.schema([pa.field(f.name, change(f), f.nullable) for f in plain])
        assert odd != plain.remove_metadata()
        capsule = raw_stream(monkeypatch, "events").__arrow_c_stream__(odd.__arrow_c_schema__())
        got = pa.RecordBatchReader._import_from_c_capsule(capsule).read_all()
        assert got.schema.remove_metadata() == plain.remove_metadata()


def test_a_value_the_requested_type_cannot_hold_is_an_error_not_a_null(monkeypatch):
    plain = agentlog.open(CORPUS / "1.31.2").table("events").read_all()
    ints = [f for f in plain.schema if pa.types.is_int64(f.type)]
    assert ints, plain.schema
    # Every 64-bit integer column asked for as 8-bit: some value is larger.
    big = [f.name for f in ints if (pc.max(plain.column(f.name)).as_py() or 0) > 127]
    assert big, "a value above 127"
    asked = pa.schema(
        [pa.field(f.name, pa.int8(), f.nullable) if f.name in big else f for f in plain.schema]
    )
    s = raw_stream(monkeypatch, "events")
    with pytest.raises(pa.ArrowInvalid):
        pa.RecordBatchReader.from_stream(s, schema=asked).read_all()
