#!/usr/bin/env python3
"""Follow latency: time from an event file's rename into place to its line
on `agentlog follow`'s standard output (read through a pipe).

    benches/follow_latency.py BIN STORE [COUNT] [PERIOD_MS]

STORE is an OpenHands store (e.g. made by `agentlog-gen`); COUNT event
files (100) are renamed into place one by one, PERIOD_MS (20) apart, each
the next index of a conversation picked at random: a copy of that
conversation's last event file under the next name. Prints the median, p99
and max latency, and the CPU time `follow` used while idle for 10 s.
"""
import json, os, random, re, subprocess, sys, threading, time

bin_, store = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 100
period = (int(sys.argv[4]) if len(sys.argv) > 4 else 20) / 1000

name_re = re.compile(r"event-(\d{5})-(.*)\.json$")
convs = []
for root, dirs, files in os.walk(store):
    if "base_state.json" in files and "events" in dirs and "subagents" not in root:
        convs.append(root)
        dirs[:] = []
random.seed(7)

p = subprocess.Popen([bin_, "follow", store], stdout=subprocess.PIPE, bufsize=0)
seen = {}
lock = threading.Lock()
last_line = [time.monotonic()]

def reader():
    f = p.stdout
    for line in f:
        now = time.monotonic()
        last_line[0] = now
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if "index" in d and "file" in d:
            with lock:
                seen.setdefault(d["file"], now)

threading.Thread(target=reader, daemon=True).start()
# What is there is printed first: wait until it is all out.
while time.monotonic() - last_line[0] < 3:
    time.sleep(0.2)

written = {}
for k in range(count):
    c = random.choice(convs)
    ev = os.path.join(c, "events")
    names = sorted(n for n in os.listdir(ev) if name_re.match(n))
    m = name_re.match(names[-1])
    nxt = "event-%05d-%s.json" % (int(m.group(1)) + 1, "%08x-0000-4000-8000-%012x" % (k, k))
    with open(os.path.join(ev, names[-1]), "rb") as f:
        data = f.read()
    tmp = os.path.join(ev, ".tmp-" + nxt)
    with open(tmp, "wb") as f:
        f.write(data)
    t = time.monotonic()
    os.rename(tmp, os.path.join(ev, nxt))
    written[nxt] = t
    time.sleep(period)

deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    with lock:
        if all(n in seen for n in written):
            break
    time.sleep(0.05)
with lock:
    lat = sorted((seen[n] - t) * 1000 for n, t in written.items() if n in seen)
missing = len(written) - len(lat)

def cpu():
    with open("/proc/%d/stat" % p.pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

time.sleep(1)
c0 = cpu()
time.sleep(10)
idle = cpu() - c0
p.kill()
q = lambda x: lat[min(len(lat) - 1, int(round(x * (len(lat) - 1))))]
print("conversations %d, events %d, missing %d" % (len(convs), len(written), missing))
print("median %.1f ms, p99 %.1f ms, max %.1f ms, idle CPU over 10 s %.3f s"
      % (q(0.5), q(0.99), lat[-1], idle))
