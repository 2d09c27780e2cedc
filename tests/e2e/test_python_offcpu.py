# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Off-CPU time and wakeup edges of Python threads (Debian's python3.11).

tests/progs/py/pingpipe.py plays a strict ping-pong between its main thread
(ping) and a threading.Thread (pong) through two pipes: before each write
the writer waits until the other thread sleeps in read() on that pipe.  So,
whatever the machine's load: every recv() call blocks (an off-CPU slice on
its thread inside it, its stack through the Python frames), and is woken
by the other thread's send() of the same round (a wakeup edge from that
send call to that recv call).  Other wakeups (the GIL's) may add edges;
none of these can be missing.

A switch-in that the sched_switch program never sees (the kernel skips it
now and then: docs/sampling.md) ends the interval at the thread's next
switch-out, from the scheduler's own arrival time: no recv may miss its
slice.  BPFPROF_TEST_SKIP_SWITCHIN=N makes the program ignore every Nth
switch-in that ends an interval, as the kernel does (before, about one
blocked thread in a few hundred lost its interval under load: 2 of 5
fresh-clone CI runs of this file).
"""

import collections
import re

from conftest import REPO, debian_python
from trace_util import EPS_US, xevents

PY = REPO / "tests" / "progs" / "py"
ROUNDS = 30


def wakeups(trace):
    """(start, finish) pairs of the wakeup flow events."""
    s, f = {}, {}
    for e in trace["traceEvents"]:
        if e.get("cat") == "edge" and e.get("name") == "wakeup":
            (s if e["ph"] == "s" else f)[e["id"]] = e
    assert s.keys() == f.keys(), "every wakeup edge has both ends"
    return [(s[i], f[i]) for i in sorted(s)]


def inside(c, e):
    return c["ts"] - EPS_US <= e["ts"] and e["ts"] + e["dur"] <= c["ts"] + c["dur"] + EPS_US


def check_offcpu_in_recv(r):
    """Every recv() of each thread has an off-CPU slice of its thread inside
    it, with the Python frames that led there in its stack; returns
    (ping, pong, calls)."""
    assert r.rc == 0, r.describe()
    out = r.proc.stdout.split()
    assert out[-1] == "ok", r.proc.stdout
    ping, pong = int(out[0]), int(out[1])
    assert ping != pong
    calls = [c for c in xevents(r.trace) if c["args"].get("module") == "pingpipe.py"]
    per = collections.Counter((c["tid"], c["name"]) for c in calls)
    for tid in (ping, pong):
        assert per[(tid, "send")] == ROUNDS and per[(tid, "recv")] == ROUNDS, per
    assert per[(ping, "ping")] == 1 and per[(pong, "pong")] == 1, per

    offcpu = [e for e in r.trace["traceEvents"] if e.get("cat") == "offcpu" and e.get("ph") == "X"]
    for tid, entry in ((ping, "ping"), (pong, "pong")):
        mine = [e for e in offcpu if e["tid"] == tid]
        missing = []
        for c in (c for c in calls if c["tid"] == tid and c["name"] == "recv"):
            slices = [e for e in mine if inside(c, e)]
            if not slices:
                missing.append(c)
                continue
            assert any(entry in e["args"]["stack"] and "recv" in e["args"]["stack"]
                       for e in slices), slices
        assert not missing, ("recv on %d never went off the CPU" % tid, missing, r.describe())
    return ping, pong, calls


def test_python_threads_offcpu_and_wakeups(record):
    r = record(debian_python(), str(PY / "pingpipe.py"), str(ROUNDS),
               opts=["--offcpu", "-F", "py:pingpipe.py:*"], timeout=120)
    ping, pong, calls = check_offcpu_in_recv(r)

    # every recv was woken by the other thread's send of the same hand-off
    ids = {(tid, name): {c["args"]["id"] for c in calls if c["tid"] == tid and c["name"] == name}
           for tid in (ping, pong) for name in ("send", "recv")}
    for waker, wakee in ((ping, pong), (pong, ping)):
        edges = [(s, f) for s, f in wakeups(r.trace)
                 if s["tid"] == waker and f["tid"] == wakee and s["args"]["from"] == "send"
                 and s["args"]["to"] == "recv"]
        assert {s["args"]["to_id"] for s, f in edges} == ids[(wakee, "recv")], edges[:3]
        assert {s["args"]["from_id"] for s, f in edges} == ids[(waker, "send")], edges[:3]
        assert all(f["ts"] >= s["ts"] for s, f in edges)


def test_python_threads_offcpu_stacks_without_calls(record):
    """--offcpu alone (no call probes): each recv of each thread still goes
    off the CPU in read(), and the slice's stack shows the Python frames
    that led there, named although the program is gone long before the
    recording ends (its code objects are named by the BPF program)."""
    r = record(debian_python(), str(PY / "pingpipe.py"), str(ROUNDS), opts=["--offcpu"], timeout=120)
    assert r.rc == 0, r.describe()
    out = r.proc.stdout.split()
    assert out[-1] == "ok", r.proc.stdout
    ping, pong = int(out[0]), int(out[1])
    offcpu = [e for e in r.trace["traceEvents"] if e.get("cat") == "offcpu" and e.get("ph") == "X"]
    want = {ping: ["<module>", "main", "ping", "recv"],
            pong: ["Thread.run", "pong", "recv"]}
    for tid, frames in want.items():
        n = 0
        for e in offcpu:
            st = e["args"]["stack"]
            if e["tid"] == tid and "recv" in st and "read" in st:
                assert [f for f in st if f in frames] == frames, st
                n += 1
        assert n >= ROUNDS, (tid, n)
    assert not [e for e in offcpu if any(f.startswith("[python code") for f in e["args"]["stack"])]


def test_python_threads_offcpu_switchin_not_seen(record, monkeypatch):
    """Every third switch-in that ends an interval is ignored by the BPF
    program (BPFPROF_TEST_SKIP_SWITCHIN=3), as the kernel sometimes skips
    one: each interval still ends, at the thread's next switch-out, inside
    the recv() that blocked (its end is the scheduler's arrival time, not
    that switch-out's), and -v counts them."""
    monkeypatch.setenv("BPFPROF_TEST_SKIP_SWITCHIN", "3")
    r = record(debian_python(), str(PY / "pingpipe.py"), str(ROUNDS),
               opts=["-v", "--offcpu", "-F", "py:pingpipe.py:*"], timeout=120)
    check_offcpu_in_recv(r)
    m = re.search(r"(\d+) off-cpu intervals ended at the next switch-out", r.proc.stderr)
    # 2 * ROUNDS recv intervals and the GIL's: a third of them, at least 2 * ROUNDS / 3
    assert m and int(m.group(1)) >= 2 * ROUNDS // 3, r.proc.stderr[-2000:]
