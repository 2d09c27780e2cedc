# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Coroutine spans of Debian's python3.11 (tests/progs/py/asynctree.py).

A coroutine's resume fires a start and each suspending await an end, so
one invocation is several slices; bpfprof joins them into one span.  Every
assertion is a fact of the script's structure: how many times each
coroutine is invoked, how often each invocation suspends (slices = awaits
that suspended + 1), the sync helper's calls, what nests in what, which span
raised.  Nothing depends on timing beyond exec <= wall, which holds by
construction (the slices of a span lie inside it, one after another).
"""

import collections
import json

import pytest

from conftest import record_python, run_bpfprof
from trace_util import nesting_problems, xevents
from test_view import need_browser, problems, view  # noqa: F401 (view: a fixture)

MODULE = "asynctree.py"
EPS_US = 0.002		# JSON times are in us with 3 decimals

# the script's structure: worker(n) for n in 2, 3, 5; step K=4 helpers each
WORKER_SLICES = [3, 4, 6]		# n awaits of step() that suspend, + 1
STEPS = 2 + 3 + 5
HELPERS = 4 * STEPS + 3			# 4 in each step, 1 in each quick
# function -> (invocations, slices of each invocation)
SPANS = {
    "main": (1, [3]),		# suspends in the gather, then in failing()
    "worker": (3, WORKER_SLICES),
    "step": (STEPS, [2] * STEPS),	# asyncio.sleep(0) suspends once
    "quick": (3, [1] * 3),		# never suspends: a span of one slice
    "failing": (1, [2]),
}


pytestmark = pytest.mark.usefixtures("need_debian_python")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One recording of the script, as an archive and its Chrome JSON."""
    r = record_python(tmp_path_factory, "asynctree.py")
    return r.arch, r.trace


def own_calls(trace):
    calls, probs = nesting_problems(xevents(trace), root_depth=None)
    assert not probs, probs[:5]
    return [c for c in calls if c.ev["args"].get("module") == MODULE]


def spans_of(trace):
    """The coroutine async events by span id: {id: [events in file order]}."""
    by_id = collections.defaultdict(list)
    for e in trace["traceEvents"]:
        if e.get("cat") == "coroutine" and "task" not in e["args"]:
            by_id[e["args"]["span_id"]].append(e)	# (a task's spans share its id)
    return by_id


def test_slices_and_helper_calls(recorded):
    _, trace = recorded
    n = collections.Counter(c.name for c in own_calls(trace))
    assert n == {"<module>": 1, "main": 3, "worker": sum(WORKER_SLICES), "step": 2 * STEPS,
                 "quick": 3, "failing": 2, "helper": HELPERS,
                 "main.<locals>.<listcomp>": 1}, n


def test_one_span_per_invocation_with_its_slices(recorded):
    _, trace = recorded
    calls = own_calls(trace)
    xid = {c.ev["args"]["id"]: c for c in calls}
    got = collections.defaultdict(list)
    in_span = set()
    for sid, evs in spans_of(trace).items():
        name = evs[0]["name"]
        if evs[0]["args"].get("call_id") is None and name not in SPANS:
            continue	# the interpreter's own generators and coroutines
        heads = [e for e in evs if e["args"].get("span")]
        assert [e["ph"] for e in heads] == ["b", "e"], evs
        b, e = heads
        slices = [x for x in evs if "call_id" in x["args"]]
        assert all(x["name"] == name for x in evs), evs
        # each slice a b/e pair naming one on-CPU call of the same function
        ids = [x["args"]["call_id"] for x in slices if x["ph"] == "b"]
        assert sorted(ids) == sorted(x["args"]["call_id"] for x in slices if x["ph"] == "e")
        if name not in SPANS:
            continue
        assert all(i in xid and xid[i].name == name for i in ids), (name, ids)
        assert not in_span & set(ids), "a slice in two spans"
        in_span |= set(ids)
        assert e["args"]["slices"] == len(ids), evs
        got[name].append(len(ids))
        parts = sorted((xid[i] for i in ids), key=lambda c: c.ts)
        # the span runs from its first slice's start to its last slice's end
        assert abs(b["ts"] - parts[0].ts) <= EPS_US and abs(e["ts"] - parts[-1].end) <= EPS_US
        # started, then resumed where it suspended, ended without suspending
        flags = [(bool(p.ev["args"].get("resumed")), bool(p.ev["args"].get("suspended")))
                 for p in parts]
        assert flags == [(False, len(parts) > 1)] + [(True, True)] * (len(parts) - 2) + \
            ([(True, False)] if len(parts) > 1 else []), (name, flags)
        exec_us = sum(p.dur for p in parts)
        assert abs(e["args"]["exec_us"] - exec_us) <= EPS_US * (len(parts) + 1)
        assert e["args"]["exec_us"] <= e["args"]["wall_us"] + EPS_US
        assert bool(e["args"].get("raised")) == (name == "failing"), e
        assert not e["args"].get("open") and not e["args"].get("began_before_recording"), e
    for name, (calls_n, slices) in SPANS.items():
        assert sorted(got[name]) == sorted(slices), (name, got[name])
        assert len(got[name]) == calls_n
    # every slice of these coroutines belongs to a span
    assert in_span == {c.ev["args"]["id"] for c in calls if c.name in SPANS}


def test_nesting_of_slices(recorded):
    _, trace = recorded
    calls = own_calls(trace)
    for c in calls:
        if c.name == "helper":
            assert c.parent is not None and c.parent.name in ("step", "quick"), c
        if c.name in ("step", "quick"):
            # awaited directly: each slice runs inside a slice of its worker
            assert c.parent is not None and c.parent.name == "worker", c
        if c.name == "failing":
            assert c.parent is not None and c.parent.name == "main", c
    # the slices of one step span run inside the slices of one worker span
    xid = {c.ev["args"]["id"]: c for c in calls}
    span_of = {}
    for sid, evs in spans_of(trace).items():
        for x in evs:
            if "call_id" in x["args"]:
                span_of[x["args"]["call_id"]] = sid
    steps = collections.defaultdict(set)
    for c in calls:
        if c.name == "step":
            steps[span_of[c.ev["args"]["id"]]].add(span_of[c.parent.ev["args"]["id"]])
    assert len(steps) == STEPS and all(len(w) == 1 for w in steps.values()), steps
    # worker(n) awaits n steps
    per_worker = collections.Counter(next(iter(w)) for w in steps.values())
    assert sorted(per_worker.values()) == [2, 3, 5], per_worker


def test_report_coroutine_table(recorded):
    arch, _ = recorded
    r = run_bpfprof(["report", "--format", "json", str(arch)])
    assert r.returncode == 0, r.stderr
    rows = {c["function"]: c for c in json.loads(r.stdout)["coroutines"]
            if c["module"] == MODULE}
    assert set(rows) == set(SPANS), rows
    for name, (calls_n, slices) in SPANS.items():
        w = rows[name]
        assert (w["calls"], w["slices"], w["kind"]) == (calls_n, sum(slices), "coroutine"), w
        assert w["exec_ns"] <= w["wall_ns"] and w["max_exec_ns"] <= w["max_wall_ns"] <= w["wall_ns"]
        assert (w["raised"], w["open"]) == (1 if name == "failing" else 0, 0), w
    p = run_bpfprof(["report", "--no-tree", str(arch)])
    assert p.returncode == 0, p.stderr
    table = p.stdout.split("Coroutines and generators")
    assert len(table) == 2, p.stdout
    line = [ln.split() for ln in table[1].splitlines() if ln.endswith("  worker")]
    assert len(line) == 1 and line[0][:2] == ["3", str(sum(WORKER_SLICES))], line


def test_view_coroutine_tab(recorded, view):
    """`bpfprof view` of the archive: a Coroutines tab with the same rows as the report."""
    need_browser()
    import cdp

    arch, _ = recorded
    v = view(arch)
    with cdp.Browser() as b:
        b.navigate(v.url)
        assert b.wait_for("document.body && document.body.dataset.ready", timeout=30) == "1", \
            "\n".join(problems(b))
        assert b.evaluate("document.querySelector('nav button[data-tab=coroutines]').hidden") is False
        b.evaluate("document.querySelector('nav button[data-tab=coroutines]').click()")
        assert b.evaluate("document.getElementById('coroutines').classList.contains('on')")
        rows = b.evaluate("[...document.querySelectorAll('#ctable tbody tr')]"
                          ".map(r => [...r.cells].map(c => c.textContent))")
        assert not problems(b), problems(b)
    # columns: calls slices exec wall avg-wall max-wall max-exec await-child await-other
    # raised not-ended kind function module
    got = {r[12]: (int(r[0]), int(r[1]), int(r[9]), int(r[10]), r[11])
           for r in rows if r[13] == MODULE}
    assert got == {name: (n, sum(sl), 1 if name == "failing" else 0, 0, "coroutine")
                   for name, (n, sl) in SPANS.items()}, got
