# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Dependency edges: fork, wakeup and data flow, as Chrome flow events and in
report --edges.  tests/progs/pingpong wakes its consumer exactly N times from
produce() (it waits until the consumer sleeps before each message);
tests/progs/deps passes one malloc'd pointer from make_buf to three calls."""

import collections
import json

import pytest

from conftest import prog_path, run_bpfprof
import trace_util


def flows(trace):
    """(start, finish) flow event pairs by id."""
    s, f = {}, {}
    for e in trace["traceEvents"]:
        if e.get("cat") != "edge":
            continue
        if e["ph"] == "s":
            assert e["id"] not in s
            s[e["id"]] = e
        elif e["ph"] == "f":
            assert e["id"] not in f
            f[e["id"]] = e
    assert s.keys() == f.keys(), "every flow start has its finish"
    return [(s[i], f[i]) for i in sorted(s)]


def enclosing(calls, tid, ts, name):
    return [c for c in calls if c["tid"] == tid and c["name"] == name
            and c["ts"] - 0.001 <= ts <= c["ts"] + c["dur"] + 0.001]


@pytest.mark.parametrize("mode", ["pipe", "cond"])
def test_wakeup_edges_produce_to_consume(record, mode):
    n = 25
    r = record(str(prog_path("pingpong")), mode, str(n))
    assert r.rc == 0, r.describe()
    calls = trace_util.xevents(r.trace)
    counts = trace_util.counts(calls)
    assert counts["produce"] == n and counts["consume"] == n
    fl = flows(r.trace)
    wake = [(s, f) for s, f in fl if s["name"] == "wakeup"]
    pairs = collections.Counter((s["args"]["from"], s["args"]["to"]) for s, f in wake)
    assert pairs[("produce", "consume")] == n, pairs
    consumer_pids = {c["pid"] for c in calls if c["name"] == "consume"}
    producer_pids = {c["pid"] for c in calls if c["name"] == "produce"}
    if mode == "pipe":
        assert consumer_pids != producer_pids   # across processes
    for s, f in wake:
        if s["args"]["from"] != "produce":
            continue
        assert s["args"]["latency_us"] >= 0
        assert f["ts"] >= s["ts"]
        assert f["bp"] == "e"
        # each end binds to the call it names, on its own thread
        assert enclosing(calls, s["tid"], s["ts"], "produce"), s
        assert enclosing(calls, f["tid"], f["ts"], "consume"), f


def test_fork_edge_per_child(record):
    r = record(str(prog_path("pingpong")), "pipe", "3")
    fork = [(s, f) for s, f in flows(r.trace) if s["name"] == "fork"]
    assert len(fork) == 1, fork
    s, f = fork[0]
    assert s["args"]["from"] == "start_consumer" and s["args"]["to"] == "consume"
    assert s["pid"] != f["pid"]   # the child is a new process
    r = record("threads")
    fork = [(s, f) for s, f in flows(r.trace) if s["name"] == "fork"]
    assert len(fork) == 4, fork   # one per thread, from main
    assert {s["args"]["from"] for s, f in fork} == {"main"}
    assert len({f["tid"] for s, f in fork}) == 4


def test_data_edges(record):
    r = record("deps", opts=["--deps"])
    assert r.rc == 0, r.describe()
    data = collections.Counter((s["args"]["from"], s["args"]["to"])
                               for s, f in flows(r.trace) if s["name"] == "data")
    assert data == {("make_buf", "fill"): 1, ("make_buf", "use_buf"): 1,
                    ("make_buf", "free_buf"): 1}, data
    # the pointer is the one make_buf returned, and fill received it first
    calls = {c["name"]: c for c in trace_util.xevents(r.trace)}
    ptr = calls["make_buf"]["args"]["ret"]
    assert calls["fill"]["args"]["arg"][0] == ptr
    assert calls["give_seven"]["args"]["ret"] == "0x7"


def test_no_wakeups_option(record):
    r = record(str(prog_path("pingpong")), "cond", "5", opts=["--no-wakeups"])
    assert not [s for s, f in flows(r.trace) if s["name"] == "wakeup"]


def test_report_edges(record, tmp_path):
    r = record(str(prog_path("pingpong")), "cond", "12", out="p.bpfprof", check=False)
    assert r.rc == 0, r.describe()
    rep = run_bpfprof(["report", "--format", "json", str(r.out)])
    assert rep.returncode == 0, rep.stderr
    edges = json.loads(rep.stdout)["edges"]
    wake = [e for e in edges if e["kind"] == "wakeup" and e["from"] == "produce"]
    assert len(wake) == 1 and wake[0]["to"] == "consume" and wake[0]["count"] == 12
    assert wake[0]["latency_ns"] > 0
    rep = run_bpfprof(["report", "--edges", str(r.out)])
    assert "produce -> consume" in rep.stdout
