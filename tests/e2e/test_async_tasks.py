# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""asyncio tasks as tracks, and their await edges (tests/progs/py/asynctasks.py).

Every coroutine slice belongs to the task whose step ran it; each task is
an async track in the Chrome JSON (a slice named after the task, then its
coroutines' spans under the same id) and a track under its thread in
Perfetto.  The task names are the ones the program saw itself run under
(it prints them); the spans per task and the spawn/complete edges are facts
of the program's structure: worker k awaits Queue.get() k times, each woken
by main's put_nowait (Queue._wakeup_next sets the getter's result); the
gather's children are spawned by gather(); main cancels "victim" while it
waits.  No timing is asserted.
"""

import collections
import json
import re

import pytest

import perfetto_util
from conftest import DEBIAN_PYTHON as PYTHON, PY_OFFSET_SCAN, REPO, record_python, run_bpfprof

K = {"worker-a": 2, "worker-b": 3, "worker-c": 4}
OWN = ("main", "worker", "child", "victim", "thrower")	# the script's task coroutines


pytestmark = pytest.mark.usefixtures("need_debian_python")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    r = record_python(tmp_path_factory, "asynctasks.py", pftrace=True)
    seen = json.loads([ln for ln in r.stdout.splitlines() if ln.startswith("{")][-1])
    return r.arch, r.trace, seen, r.pf


def own_tasks(trace):
    """{task id: (name, [span end events])} of the tasks whose outermost coroutine is the script's."""
    ev = [e for e in trace["traceEvents"] if e.get("cat") == "coroutine"]
    names = {e["id"]: e["name"] for e in ev if "task" in e["args"] and e["ph"] == "b"}
    spans = collections.defaultdict(list)
    for e in ev:
        if e["args"].get("span") and e["ph"] == "e" and e["id"] in names:
            spans[e["id"]].append(e)
    own = {}
    for tid, name in names.items():
        root = [s for s in spans[tid] if s["args"]["span_id"] == tid]
        assert len(root) == 1, (name, spans[tid])
        if root[0]["name"] in OWN:
            own[tid] = (name, spans[tid])
    return own


def by_func(spans):
    return collections.Counter((s["name"], s["args"]["slices"], bool(s["args"].get("raised")))
                               for s in spans)


def test_offsets_of_asyncio_objects():
    """The Task and Handle offsets python.bpf.c reads, against this interpreter's objects."""
    src = (REPO / "user" / "cpython" / "image.c").read_text()
    off = {k: int(v) for k, v in re.findall(
        r"\.(handle_callback|task_coro|task_name|fut_callback0|task_fut_waiter) = (\d+)", src)}
    assert len(off) == 5, off
    probe = PY_OFFSET_SCAN + r"""
import asyncio, ctypes, json
async def c():
    pass
async def waiter(f):
    await f
async def main():
    co = c()
    t = asyncio.get_running_loop().create_task(co, name="probe-name")
    cb = object()
    h = asyncio.events.Handle(cb, (), asyncio.get_running_loop())
    done = lambda _: None
    f = asyncio.get_running_loop().create_future()
    w = asyncio.get_running_loop().create_task(waiter(f))
    w.add_done_callback(done)
    await asyncio.sleep(0)
    print(json.dumps({"task_coro": at(t, co, 256), "task_name": at(t, t.get_name(), 256),
                      "handle_callback": at(h, cb, 64), "fut_callback0": at(w, done, 256),
                      "task_fut_waiter": at(w, f, 256)}))
    f.set_result(None)
    await t
    await w
asyncio.run(main())
"""
    import subprocess
    out = subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert {k: [v] for k, v in off.items()} == got, (off, got)


def test_task_tracks_named_as_the_program_names_them(recorded):
    _, trace, seen, _ = recorded
    own = own_tasks(trace)
    names = sorted(n for n, _ in own.values())
    assert names == sorted(sum(seen.values(), [])), (names, seen)
    for tid, (name, spans) in own.items():
        f = by_func(spans)
        if name in K:
            k = K[name]
            assert f[("worker", k + 1, False)] == 1 and f[("Queue.get", 2, False)] == k, (name, f)
            assert sum(f.values()) == k + 1, (name, f)
        elif name in seen["child"]:
            assert f[("child", 2, False)] == 1, (name, f)
        elif name == "victim":
            # cancelled while waiting: thrown into the Event's wait, raised through victim
            assert f == {("victim", 2, True): 1, ("Event.wait", 2, True): 1}, f
        elif name == "thrower":
            assert f[("thrower", 2, True)] == 1, f
        else:
            assert name == seen["main"][0], name
            # 1 + sleep(0) + 4 rounds of sleep(0) + 2 gathers + sleep(0) + await victim, thrower
            assert f[("main", 11, False)] == 1, f
    # every slice of the script's coroutines is on a task's track
    slices = [e for e in trace["traceEvents"] if e.get("cat") == "coroutine" and
              "call_id" in e["args"] and e["name"] in OWN]
    assert slices and all(e["id"] in own for e in slices)


def edges(trace, kind):
    return [e for e in trace["traceEvents"] if e.get("cat") == "edge" and e["name"] == kind
            and e["ph"] == "s"]


def test_spawn_and_complete_edges(recorded):
    _, trace, seen, _ = recorded
    own = own_tasks(trace)
    task_of = {}
    for e in trace["traceEvents"]:
        if e.get("cat") == "coroutine" and "call_id" in e["args"]:
            task_of[e["args"]["call_id"]] = e["id"]
    name = {tid: n for tid, (n, _) in own.items()}
    spawn = collections.Counter()
    for e in edges(trace, "spawn"):
        t = e["args"]["to_id"]
        if t in name:
            # to the task's first slice
            spawn[(name[t], e["args"]["from"])] += 1
    want = {(n, "main.<locals>.<listcomp>"): 1 for n in K}
    want.update({(n, "gather"): 1 for n in seen["child"]})
    want.update({("victim", "main"): 1, ("thrower", "main"): 1, (seen["main"][0], "Runner.run"): 1})
    assert spawn == want, spawn
    done = collections.Counter()
    for e in edges(trace, "complete"):
        t = task_of.get(e["args"]["to_id"])
        if t in name:
            done[(name[t], e["args"]["from"])] += 1
    for n, k in K.items():
        assert done[(n, "Queue._wakeup_next")] == k, done
    assert done[("victim", "main")] == 1, done	# main's cancel() woke it
    assert done[(seen["main"][0], "gather.<locals>._done_callback")] == 2, done
    for n in seen["child"]:
        assert done[(n, "Handle._run")] == 1, done	# its sleep(0): the step rescheduled itself


def test_report_edges_lists_them(recorded):
    arch, _, _, _ = recorded
    r = run_bpfprof(["report", "--edges", str(arch)])
    assert r.returncode == 0, r.stderr
    assert re.search(r"\bspawn\b", r.stdout) and re.search(r"\bcomplete\b", r.stdout), r.stdout


def test_perfetto_task_tracks(recorded):
    """Perfetto: each task a track named after it under its thread's, holding its spans."""
    _, trace, seen, pf = recorded
    ev = perfetto_util.read(str(pf))["traceEvents"]
    spans = [e for e in ev if e["ph"] == "X" and e.get("cat") == "coroutine"]
    assert spans and all("track" in e for e in spans), spans[:3]
    tracks = collections.defaultdict(list)
    for e in spans:
        tracks[e["track_uuid"]].append(e)
    own = {}
    for uuid, ss in tracks.items():
        names = {e["track"] for e in ss}
        assert len(names) == 1, names
        root = [e for e in ss if e["args"]["depth"] == 0]
        assert len(root) == 1, (names, root)	# the task's coroutine holds the others
        if root[0]["name"] in OWN:
            own[names.pop()] = ss
    assert sorted(own) == sorted(sum(seen.values(), [])), (sorted(own), seen)
    main_tid = {e["tid"] for e in ev if e["ph"] == "X" and e["name"] == "main"
                and e.get("cat") == "call"}
    for name, ss in own.items():
        assert {e["tid"] for e in ss} == main_tid, name	# under the loop's thread
        f = collections.Counter((e["name"], e["args"]["slices"], bool(e["args"].get("raised")))
                                for e in ss)
        for e in ss:
            assert e["args"]["exec_ns"] <= e["args"]["wall_ns"], e
        if name in K:
            assert f == {("worker", K[name] + 1, False): 1, ("Queue.get", 2, False): K[name]}, f
            assert all(e["args"]["depth"] == (e["name"] != "worker") for e in ss), ss
        elif name == "victim":
            assert f == {("victim", 2, True): 1, ("Event.wait", 2, True): 1}, f
        elif name == seen["main"][0]:
            assert f[("main", 11, False)] == 1, f
    # the edges are flows there too
    kinds = collections.Counter(e["name"] for e in ev if e["ph"] == "s" and e.get("cat") == "edge")
    assert kinds["spawn"] >= 8 and kinds["complete"] >= 9 + 1 + 2, kinds
