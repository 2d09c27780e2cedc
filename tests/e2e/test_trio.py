# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Coroutine spans of a trio program (Debian's python3-trio under python3.11),
tests/progs/py/triotree.py: a nursery of sleeper(1..3) (n checkpoints each),
a producer and a consumer of K=4 items on an unbuffered memory channel (one
suspension per send and per receive), forever() cancelled mid-await, and
failing() raising through an await.  Exact facts only: one span per
invocation, awaits + 1 slices each, which spans raised, exec <= wall; and
`diff` of two recordings matches the coroutine functions with the same
invocations and slices on both sides.
"""

import collections
import json
import os
import re
import subprocess

import pytest

from conftest import PY_OFFSET_SCAN, REPO, run_bpfprof
from test_async_python import EPS_US, spans_of
from trace_util import xevents

PYTHON = "/usr/bin/python3.11"
SCRIPT = str(REPO / "tests" / "progs" / "py" / "triotree.py")
MODULE = "triotree.py"
K = 4
# function -> slices of each invocation (awaits that suspend + 1), raised
SPANS = {
    "sleeper": ([2, 3, 4], False),
    "producer": ([K + 1], False),
    "consumer": ([K + 1], False),
    "forever": ([2], True),		# suspended, then resumed by the cancellation: raises
    "failing": ([2], True),
}


@pytest.fixture(autouse=True)
def _trio():
    if not os.access(PYTHON, os.X_OK):
        pytest.skip("%s missing (Debian python3.11)" % PYTHON)
    r = os.system("%s -c 'import trio' 2>/dev/null" % PYTHON)
    if r:
        pytest.skip("python3-trio missing: run scripts/setup.sh --test")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    d = tmp_path_factory.mktemp("trio")
    out = []
    for i in range(2):
        arch, js = d / ("t%d.bpfprof" % i), d / ("t%d.json" % i)
        r = run_bpfprof(["record", "-o", str(arch), "--", PYTHON, SCRIPT])
        assert r.returncode == 0, r.stderr
        assert "triotree: sum=%d" % sum(range(K)) in r.stdout, r.stdout
        c = run_bpfprof(["convert", "-o", str(js), str(arch)])
        assert c.returncode == 0, c.stderr
        with open(js) as f:
            out.append((arch, json.load(f)))
    return out


def test_one_span_per_invocation(recorded):
    _, trace = recorded[0]
    module = {x["args"]["id"]: x["args"].get("module") for x in xevents(trace)}
    got = collections.defaultdict(list)
    for sid, evs in spans_of(trace).items():
        heads = [e for e in evs if e["args"].get("span")]
        name = evs[0]["name"]
        ids = [x["args"]["call_id"] for x in evs if "call_id" in x["args"] and x["ph"] == "b"]
        if not ids or module.get(ids[0]) != MODULE:
            continue
        assert len(heads) == 2, evs
        b, e = heads
        assert e["args"]["slices"] == len(ids), evs
        assert e["args"]["exec_us"] <= e["args"]["wall_us"] + EPS_US, e
        assert not e["args"].get("open") and not e["args"].get("began_before_recording"), e
        got[name].append((len(ids), bool(e["args"].get("raised"))))
    assert len(got["main"]) == 1 and not got["main"][0][1], got["main"]
    for name, (slices, raised) in SPANS.items():
        assert sorted(got[name]) == sorted((n, raised) for n in slices), (name, got[name])


def test_report_table(recorded):
    arch, _ = recorded[0]
    r = run_bpfprof(["report", "--format", "json", str(arch)])
    assert r.returncode == 0, r.stderr
    rows = {c["function"]: c for c in json.loads(r.stdout)["coroutines"] if c["module"] == MODULE}
    assert set(rows) == set(SPANS) | {"main"}, rows
    for name, (slices, raised) in SPANS.items():
        w = rows[name]
        assert (w["calls"], w["slices"], w["raised"], w["open"]) == \
            (len(slices), sum(slices), len(slices) if raised else 0, 0), w
        assert w["exec_ns"] <= w["wall_ns"]


def test_diff_coroutine_table(recorded):
    (a, _), (b, _) = recorded
    r = run_bpfprof(["diff", "--format", "json", str(a), str(b)])
    assert r.returncode == 0, r.stderr
    rows = {c["function"]: c for c in json.loads(r.stdout)["coroutines"] if c["module"] == MODULE}
    assert set(rows) == set(SPANS) | {"main"}, rows
    for name, (slices, raised) in SPANS.items():
        for side in ("base", "new"):
            w = rows[name][side]
            assert (w["calls"], w["slices"], w["raised"]) == \
                (len(slices), sum(slices), len(slices) if raised else 0), (name, side, w)
            assert 0 < w["max_exec_ns"] <= w["exec_ns"] <= w["wall_ns"], w
        x, y = rows[name]["base"], rows[name]["new"]
        want = (y["exec_ns"] / y["calls"]) / (x["exec_ns"] / x["calls"])
        assert abs(rows[name]["exec_per_call_ratio"] - want) <= 1e-3 * want + 1e-4, rows[name]
    p = run_bpfprof(["diff", "--no-paths", "--top", "1000", str(a), str(b)])
    assert p.returncode == 0, p.stderr
    table = p.stdout.split("Coroutines and generators")
    assert len(table) == 2, p.stdout
    line = [ln.split() for ln in table[1].splitlines() if ln.endswith("  sleeper  [triotree.py]")]
    assert len(line) == 1 and line[0][:2] == ["3", "3"], line


def test_trio_tasks_are_named_tracks(recorded):
    """Each trio task a track named as the program named it (start_soon(..., name=)),
    holding its own coroutine's span outermost: sleeper{n} its sleeper (n + 1 slices)."""
    _, trace = recorded[0]
    ev = [e for e in trace["traceEvents"] if e.get("cat") == "coroutine"]
    names = {e["id"]: e["args"]["task"] for e in ev if "task" in e["args"] and e["ph"] == "b"}
    roots = {}
    for e in ev:
        if e["args"].get("span") and e["ph"] == "e" and e["id"] in names and \
                e["args"]["span_id"] == e["id"]:
            roots[names[e["id"]]] = (e["name"], e["args"]["slices"], bool(e["args"].get("raised")))
    want = {"sleeper1": ("sleeper", 2, False), "sleeper2": ("sleeper", 3, False),
            "sleeper3": ("sleeper", 4, False), "producer": ("producer", K + 1, False),
            "consumer": ("consumer", K + 1, False), "forever": ("forever", 2, True),
            "__main__.main": ("main", roots.get("__main__.main", ("", 0))[1], False)}
    assert {n: roots.get(n) for n in want} == want, roots
    # failing() is awaited by main: a span on main's track, not a task of its own
    assert not any(r[0] == "failing" for r in roots.values()), roots


def test_offsets_of_trio_task():
    """The trio Task slots python.bpf.c reads, against this interpreter's trio."""
    src = (REPO / "user" / "cpython" / "image.c").read_text()
    off = {k: int(v) for k, v in re.findall(r"\.trio_task_(coro|name) = (\d+)", src)}
    assert len(off) == 2, off
    probe = PY_OFFSET_SCAN + r"""
import ctypes, json, trio
async def main():
    t = trio.lowlevel.current_task()
    n = type(t).__basicsize__
    print(json.dumps({"coro": at(t, t.coro, n), "name": at(t, t.name, n)}))
trio.run(main)
"""
    out = subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert {k: [v] for k, v in off.items()} == got, (off, got)


def test_offsets_of_trio_nursery():
    """The Task and Nursery fields the sampler reads for a trio task's awaiters
    (python_stack.bpf.h), against this interpreter's trio: a child task reads
    its parent nursery while main waits in that nursery's __aexit__, so of the
    nursery's inline values only _parent_waiting_in_aexit is True."""
    src = (REPO / "user" / "cpython" / "image.c").read_text()
    off = {k: int(v) for k, v in re.findall(
        r"\.(trio_task_nursery|obj_values|trio_nursery_parent|trio_nursery_waiting) = (-?\d+)",
        src)}
    assert len(off) == 4, off
    probe = PY_OFFSET_SCAN + r"""
import ctypes, json, sys, trio
got = {}
async def child(n):
    t = trio.lowlevel.current_task()
    assert n is t.parent_nursery and n._parent_waiting_in_aexit
    got["trio_task_nursery"] = at(t, n, type(t).__basicsize__)
    # Py_TPFLAGS_MANAGED_DICT: the inline values pointer is 4 words before the object
    assert type(n).__flags__ & (1 << 4) and sys.version_info[:2] == (3, 11)
    vals = int.from_bytes(ctypes.string_at(id(n) - 32, 8), "little")
    got["obj_values"] = [-32] if vals else []
    # the 10 attributes trio 0.22's Nursery.__init__ sets (vars(n) would move them)
    words = ctypes.string_at(vals, 8 * 10)
    got["trio_nursery_parent"] = [i for i in range(0, len(words), 8)
                                  if words[i:i + 8] == id(n.parent_task).to_bytes(8, "little")]
    got["trio_nursery_waiting"] = [i for i in range(0, len(words), 8)
                                   if words[i:i + 8] == id(True).to_bytes(8, "little")]
async def main():
    async with trio.open_nursery() as n:
        n.start_soon(child, n)
trio.run(main)
print(json.dumps(got))
"""
    out = subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert {k: [v] for k, v in off.items()} == got, (off, got)


def trio_edges(trace, kind):
    return [e for e in trace["traceEvents"] if e.get("cat") == "edge" and e["name"] == kind
            and e["ph"] == "s"]


def test_trio_spawn_and_complete_edges(recorded):
    """Every step of a trio task is scheduled by Runner.reschedule: its first by
    start_soon (a spawn edge from main, which called start_soon, to the task's
    first slice), each later one by what woke it (a complete edge to the
    resumption): the scheduler itself after a checkpoint (sleep(0)), the other
    side of the channel at a rendezvous, main's cancel() for forever."""
    _, trace = recorded[0]
    ev = [e for e in trace["traceEvents"] if e.get("cat") == "coroutine"]
    names = {e["id"]: e["args"]["task"] for e in ev if "task" in e["args"] and e["ph"] == "b"}
    task_of = {e["args"]["call_id"]: e["id"] for e in ev if "call_id" in e["args"]}
    own = {}	# task name -> slices of its own coroutine
    for e in ev:
        if e["args"].get("span") and e["ph"] == "e" and e["id"] in names and \
                e["args"]["span_id"] == e["id"]:
            own[names[e["id"]]] = e["args"]["slices"]
    mine = {"sleeper1", "sleeper2", "sleeper3", "producer", "consumer", "forever"}
    spawn = collections.Counter()
    for e in trio_edges(trace, "spawn"):
        t = e["args"]["to_id"]
        if names.get(t) in mine | {"__main__.main"}:
            assert task_of.get(t) == t, e	# to the task's first slice
            spawn[(names[t], e["args"]["from"])] += 1
    want = {(n, "main"): 1 for n in mine}
    want[("__main__.main", "Runner.init")] = 1
    assert spawn == want, spawn
    done = collections.defaultdict(collections.Counter)
    for e in trio_edges(trace, "complete"):
        n = names.get(task_of.get(e["args"]["to_id"]))
        if n:
            done[n][e["args"]["from"]] += 1
    for n in (1, 2, 3):
        # each sleep(0): the scheduler rescheduled the task at its checkpoint
        assert done["sleeper%d" % n] == {"unrolled_run": n}, done
    assert done["forever"] == {"main": 1}, done	# main's cancel()
    # each send and each receive suspends once: woken by the other side or the scheduler
    assert sum(done["producer"].values()) == K, done
    assert set(done["producer"]) <= {"MemoryReceiveChannel.receive_nowait", "unrolled_run"}
    assert sum(done["consumer"].values()) == K, done
    assert set(done["consumer"]) <= {"MemorySendChannel.send_nowait", "unrolled_run"}
    # each item is handed over at one rendezvous: the side that waited is woken by the other
    assert done["producer"]["MemoryReceiveChannel.receive_nowait"] + \
        done["consumer"]["MemorySendChannel.send_nowait"] == K, done
    # main: one complete edge per resumption of its own coroutine
    assert sum(done["__main__.main"].values()) == own["__main__.main"] - 1, (done, own)
