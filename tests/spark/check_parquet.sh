#!/usr/bin/env bash
# The Parquet dataset in Apache Spark (local mode): run before a release
# (not in CI, which has no Spark). Needs Java 17+ and the pyspark package
# (`python3 -m pip install pyspark`); builds agentlog with the parquet
# feature, then runs tests/spark/check_parquet.py (its docstring lists the
# checks). Exit status 0 when every check holds.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 -c 'import pyspark' 2>/dev/null || {
  echo "the pyspark package is missing: python3 -m pip install pyspark" >&2
  exit 2
}
cargo build --quiet --features cli,parquet --bin agentlog
exec python3 tests/spark/check_parquet.py "${CARGO_TARGET_DIR:-target}/debug/agentlog"
