#!/usr/bin/env python3
"""Builds the corpus-copy store: COPIES copies of every top-level
conversation of the shared OpenHands corpus (`1.58.2/large` aside), each
under a fresh 32-hex-digit directory name, with the old ID replaced by the
new one (plain and dashed) in `base_state.json` and `meta.json`. Files are
written in the order a writer creates them (state, then events by index),
one conversation after another, as a real store grows.

Usage: benches/corpus_store.py CORPUS_OPENHANDS OUT [COPIES]
  e.g. benches/corpus_store.py tests/data/corpus/openhands /tmp/cstore 80
"""

import os
import random
import shutil
import sys


def conversations(corpus):
    for version in sorted(os.listdir(corpus)):
        vdir = os.path.join(corpus, version)
        if not os.path.isdir(vdir):
            continue
        for scenario in sorted(os.listdir(vdir)):
            sdir = os.path.join(vdir, scenario)
            if scenario == "large" or not os.path.isdir(sdir):
                continue
            for conv in sorted(os.listdir(sdir)):
                cdir = os.path.join(sdir, conv)
                if os.path.isdir(cdir) and len(conv) == 32:
                    yield cdir


def dashed(h):
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def copy_conv(src, dst, old, new):
    os.makedirs(dst)
    for name in sorted(os.listdir(src)):
        s = os.path.join(src, name)
        d = os.path.join(dst, name)
        if os.path.islink(s):
            os.symlink(os.readlink(s), d)
        elif os.path.isdir(s):
            shutil.copytree(s, d, symlinks=True)
        elif name in ("base_state.json", "meta.json"):
            with open(s, "rb") as f:
                data = f.read()
            data = data.replace(old.encode(), new.encode())
            data = data.replace(dashed(old).encode(), dashed(new).encode())
            with open(d, "wb") as f:
                f.write(data)
        else:
            shutil.copyfile(s, d)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    corpus, out = sys.argv[1], sys.argv[2]
    copies = int(sys.argv[3]) if len(sys.argv) > 3 else 80
    rng = random.Random(18)
    convs = list(conversations(corpus))
    os.makedirs(out, exist_ok=True)
    n = 0
    for _ in range(copies):
        for c in convs:
            old = os.path.basename(c)
            new = "%032x" % rng.getrandbits(128)
            copy_conv(c, os.path.join(out, new), old, new)
            n += 1
    print(f"{n} conversations in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
