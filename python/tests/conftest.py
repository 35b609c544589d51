"""Shared helpers of the package's tests: the repository's corpus and the
`agentlog` command built from the same tree (its `--json` outputs are what
the package is compared with)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
CORPUS = DATA / "corpus" / "openhands"
OCCHAT = DATA / "corpus" / "occhat"
ASF = DATA / "asf"
VERSIONS = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
OCCHAT_STORES = sorted(p.name for p in OCCHAT.iterdir() if p.is_dir())


def _binary() -> Path:
    given = os.environ.get("AGENTLOG_BIN")
    if given:
        return Path(given)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "debug" / "agentlog"


AGENTLOG = _binary()


def cli(*args: object, ok: tuple[int, ...] = (0,)) -> str:
    """Runs the command; its standard output (a status not in `ok` fails)."""
    if not AGENTLOG.is_file():
        pytest.fail(
            f"{AGENTLOG}: the agentlog command is not built "
            "(cargo build --features cli,parquet, or set AGENTLOG_BIN)"
        )
    r = subprocess.run(
        [str(AGENTLOG), *map(str, args)], capture_output=True, text=True, check=False
    )
    if r.returncode not in ok:
        pytest.fail(f"agentlog {' '.join(map(str, args))}: status {r.returncode}: {r.stderr}")
    return r.stdout


def cli_json(*args: object) -> object:
    return json.loads(cli(*args))


def cli_lines(*args: object, ok: tuple[int, ...] = (0,)) -> list:
    return [json.loads(line) for line in cli(*args, ok=ok).splitlines() if line.strip()]


def follow_reads_each_first_change_when_reached(store, remove_one):
    """Checks that `store.follow(None)` hands out its first changes as a
    changes-since pass does, reading each when the iterator reaches it:
    after the first, nothing is held (`pending` is 0), the checkpoint is of
    what was handed out so far, and what `remove_one(changes)` removes then
    (it returns that change's id) is never handed out. Returns the follow,
    every change handed out."""
    order = list(store.changes_since(None))
    assert len(order) >= 3
    f = store.follow(None, poll=0.1, idle_timeout=1.0)
    first = next(f)
    assert (first.kind, first.id) == (order[0].kind, order[0].id)
    assert f.pending == 0
    assert [c.id for c in store.changes_since(f.checkpoint())] == [c.id for c in order[1:]]
    gone = remove_one(order)
    got = list(f)
    assert [(c.kind, c.id) for c in got] == [(c.kind, c.id) for c in order[1:] if c.id != gone]
    assert list(store.changes_since(f.checkpoint())) == []
    return f


def follow_reads_each_later_change_when_reached(store, make_changes):
    """Checks that `store.follow(None)`, once its first changes are handed
    out, hands out a later scan's changes as they are reached: after
    `make_changes()` (three changes or more) and the first of them,
    nothing is held (`pending` is 0), the checkpoint is of what was handed
    out (a changes-since pass from it gives the others, which the follow
    then hands out), and after the last, nothing is left. Returns the
    follow."""
    f = store.follow(None, poll=0.1, idle_timeout=5.0)
    for _ in store.changes_since(None):
        next(f)
    make_changes()
    first = next(f)
    assert f.pending == 0
    rest = [(c.kind, c.id) for c in store.changes_since(f.checkpoint())]
    assert len(rest) >= 2 and (first.kind, first.id) not in rest
    assert [(c.kind, c.id) for c in (next(f) for _ in rest)] == rest
    assert f.pending == 0
    assert list(store.changes_since(f.checkpoint())) == []
    return f


@pytest.fixture
def store_copy(tmp_path: Path) -> Path:
    """A copy of the 1.31.2 part of the corpus, free to change."""
    dst = tmp_path / "store"
    shutil.copytree(CORPUS / "1.31.2", dst, symlinks=True)
    return dst
