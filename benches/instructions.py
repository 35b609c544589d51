"""Instructions each build runs for one command, counted by valgrind.

Usage: python3 benches/instructions.py STORE BIN [BIN ...] [-- SUBCOMMAND ...]

Runs `BIN asf convert STORE -o OUT` (or `BIN SUBCOMMAND... STORE` when a
subcommand follows `--`, e.g. `-- stats --json`) under
`valgrind --tool=callgrind`, once per build, each into a new output
directory, and prints for each build the instructions of the whole process
(every thread), those in SHA-256 (`sha2::sha256`), those in glibc's
`malloc.c`, and the rest (the process's own work outside the hash,
`malloc.c` included).

Timed runs on a shared VM move by a tenth or more from run to run; an
instruction count moves by a fraction of a per cent (the threads' timing
changes a few paths), so a change of a few per cent in what a build does
shows here where timings cannot resolve it. It is not a time: valgrind
runs SHA-256 in `sha2`'s portable code (it does not emulate the SHA
extensions), reads and writes cost no waiting, and the cache is not
modelled. Use a small store (the test corpus): valgrind runs the command
about fifty times slower.
"""

import os
import re
import subprocess
import sys
import tempfile


def counts(out_file):
    """(total, SHA-256, malloc.c) instructions of a callgrind output file."""
    text = subprocess.run(
        ["callgrind_annotate", "--auto=no", "--threshold=100", out_file],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    total = sha = alloc = 0
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s", line)
        if not m:
            continue
        n = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in line:
            total = n
        elif "sha2::sha256" in line:
            sha += n
        elif "malloc.c" in line:
            alloc += n
    return total, sha, alloc


def main(argv):
    if "--" in argv:
        k = argv.index("--")
        args, sub = argv[:k], argv[k + 1 :]
    else:
        args, sub = argv, None
    if len(args) < 2:
        sys.exit(__doc__)
    store, bins = args[0], args[1:]
    print(f"{'build':40s} {'total':>14s} {'SHA-256':>14s} {'malloc.c':>12s} {'rest':>14s}")
    with tempfile.TemporaryDirectory() as work:
        for i, b in enumerate(bins):
            out = os.path.join(work, f"out{i}")
            cmd = [b] + (sub + [store] if sub else ["asf", "convert", store, "-o", out])
            cg = os.path.join(work, f"cg{i}")
            run = subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}"] + cmd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            if not os.path.exists(cg):
                sys.exit(f"{b}: valgrind wrote no profile:\n{run.stderr[-2000:]}")
            total, sha, alloc = counts(cg)
            print(f"{b[-40:]:40s} {total:14,d} {sha:14,d} {alloc:12,d} {total - sha:14,d}")


if __name__ == "__main__":
    main(sys.argv[1:])
