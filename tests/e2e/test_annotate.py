# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Annotations over USDT: include/bpfprof.h marks, infos, events, spans and
the --gated window (tests/progs/annotate), and any USDT probe with -U
(libstdc++'s libstdcxx:throw, counted against bpftrace on the same run)."""

import collections
import csv
import io
import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import bpftrace_maps, prog_path, run_bpfprof
import trace_util


def by_cat(trace, cat):
    return [e for e in trace["traceEvents"] if e.get("cat") == cat]


def test_program_runs_unchanged_untraced():
    out = subprocess.run([str(prog_path("annotate"))], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout == "annotate: ok 6\n", out


def test_every_macro_in_two_threads(record):
    r = record("annotate")
    assert r.rc == 0 and "annotate: ok 6" in r.proc.stdout, r.describe()
    t = r.trace
    calls = trace_util.xevents(t)
    phases = [c for c in calls if c["name"] == "phase"]
    assert len(phases) == 4 and len({c["tid"] for c in phases}) == 2
    # marks: begin, middle, end twice per thread, in order, >= 5 ms apart within a phase
    marks = collections.defaultdict(list)
    for m in sorted(by_cat(t, "mark"), key=lambda e: e["ts"]):
        marks[m["tid"]].append(m)
    assert set(marks) == {c["tid"] for c in phases}
    for tid, ms in marks.items():
        assert [m["name"] for m in ms] == ["begin", "middle", "end"] * 2, ms
        for a, b in zip(ms, ms[1:]):
            assert b["ts"] >= a["ts"]
            if a["name"] != "end":
                assert b["ts"] - a["ts"] >= 5000 - 1, (a, b)
        # each mark belongs to (is inside) a phase of its thread
        for m in ms:
            assert any(p["tid"] == tid and p["ts"] <= m["ts"] <= p["ts"] + p["dur"] for p in phases)
    # infos: merged into the phase call of the thread that said them
    for p in phases:
        who = p["args"]["who"]
        assert who in ("main", "worker")
        assert p["args"]["items"] == (42 if who == "main" else 43)
        assert (p["tid"] == p["pid"]) == (who == "main")
    # events: 4 per phase, values 10..40 (+1 in the worker), and a counter track
    ev = by_cat(t, "event")
    inst = [e for e in ev if e["ph"] == "i"]
    per_tid = collections.defaultdict(list)
    for e in sorted(inst, key=lambda e: e["ts"]):
        per_tid[e["tid"]].append(e["args"]["value"])
    for tid, vals in per_tid.items():
        off = 0 if tid == phases[0]["pid"] else 1
        assert vals == [v + off for v in (10, 20, 30, 40)] * 2, vals
    counters = [e for e in ev if e["ph"] == "C"]
    assert len(counters) == len(inst) == 16
    assert all(e["args"]["queue"] == v["args"]["value"] for e, v in
               zip(sorted(counters, key=lambda e: e["ts"]), sorted(inst, key=lambda e: e["ts"])))
    # spans: outer contains inner contains work_in_span, inside phase, on each thread
    spans = by_cat(t, "span")
    assert collections.Counter(s["name"] for s in spans) == {"outer": 4, "inner": 4}
    forest, probs = trace_util.nesting_problems(calls + spans)
    assert not probs, probs[:10]
    for w in [c for c in calls if c["name"] == "work_in_span"]:
        inner = [s for s in spans if s["name"] == "inner" and s["tid"] == w["tid"]
                 and s["ts"] <= w["ts"] and w["ts"] + w["dur"] <= s["ts"] + s["dur"] + 0.001]
        assert len(inner) == 1
        outer = [s for s in spans if s["name"] == "outer" and s["tid"] == w["tid"]
                 and s["ts"] <= inner[0]["ts"] and inner[0]["ts"] + inner[0]["dur"] <= s["ts"] + s["dur"] + 0.001]
        assert len(outer) == 1
        assert outer[0]["args"]["depth"] + 1 == inner[0]["args"]["depth"] == w["args"]["depth"] - 1


def test_labels_on_pages_the_program_never_touched(record):
    """bpfprof.h strings the BPF read cannot see (page never faulted in) are
    read from the mapped file: every name and key as the program wrote it."""
    r = record("coldlabels")
    assert r.rc == 0 and "coldlabels: ok" in r.proc.stdout, r.describe()
    # the situation under test is real: the labels' page was not mapped when the probes fired
    assert "coldlabels: labels not mapped" in r.proc.stdout, r.proc.stdout
    t = r.trace
    assert [m["name"] for m in by_cat(t, "mark")] == ["cold-mark"]
    ev = by_cat(t, "event")
    assert [(e["ph"], e["name"]) for e in ev] == [("i", "cold-event"), ("C", "cold-event")]
    assert ev[1]["args"] == {"cold-event": 5}
    assert [s["name"] for s in by_cat(t, "span")] == ["cold-span"]
    run = [c for c in trace_util.xevents(t) if c["name"] == "run"]
    assert len(run) == 1 and run[0]["args"]["cold-key"] == 7
    assert run[0]["args"]["cold-who"] == "cold-value"
    assert "" not in run[0]["args"]


def test_gated_records_only_the_window(record):
    r = record("annotate", "gated", opts=["--gated"])
    assert r.rc == 0, r.describe()
    phases = [c for c in trace_util.xevents(r.trace) if c["name"] == "phase"]
    assert len(phases) == 2 and len({c["tid"] for c in phases}) == 2, phases
    assert all(not c["args"].get("unfinished") and not c["args"].get("began_before_recording")
               for c in phases)
    assert len(by_cat(r.trace, "mark")) == 6
    cap = by_cat(r.trace, "capture")
    assert [c["name"] for c in sorted(cap, key=lambda e: e["ts"])] == ["capture start", "capture stop"]
    first = min(c["ts"] for c in cap)
    assert all(p["ts"] >= first for p in phases)


def test_report_marks(record):
    r = record("annotate", out="a.bpfprof", check=False)
    rep = run_bpfprof(["report", "--marks", str(r.out)])
    assert rep.returncode == 0, rep.stderr
    out = rep.stdout
    assert out.count("> Entering thread") == 2 and out.count("< Exiting thread") == 2
    lines = re.findall(r"^  (begin|middle|end): ([0-9.]+ \w+), tot: ([0-9.]+ \w+)$", out, re.M)
    assert len(lines) == 12, out
    assert "annot-worker" in out
    # --format csv: the marks (it printed the function table)
    rep = run_bpfprof(["report", "--format", "csv", "--marks", str(r.out)])
    assert rep.returncode == 0, rep.stderr
    rows = list(csv.DictReader(io.StringIO(rep.stdout)))
    assert len(rows) == 12 and len({r["tid"] for r in rows}) == 2, rep.stdout
    for tid in {r["tid"] for r in rows}:
        mine = [r for r in rows if r["tid"] == tid]
        assert [r["label"] for r in mine] == ["begin", "middle", "end"] * 2, rep.stdout
        assert mine[0]["delta_ns"] == "0" and mine[0]["total_ns"] == "0", rep.stdout
        assert int(mine[-1]["total_ns"]) == int(mine[-1]["ts_ns"]) - int(mine[0]["ts_ns"])


def test_list_shows_usdt():
    r = run_bpfprof(["list", str(prog_path("annotate"))])
    assert r.returncode == 0
    for p in ("bpfprof:mark", "bpfprof:info", "bpfprof:info_str", "bpfprof:event",
              "bpfprof:span_begin", "bpfprof:span_end", "bpfprof:start", "bpfprof:stop"):
        assert p in r.stdout, p


@pytest.mark.skipif(not shutil.which("bpftrace"), reason="bpftrace not installed (scripts/setup.sh --test)")
def test_usdt_probe_of_a_debian_library_matches_bpftrace(record):
    lib = os.path.realpath("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
    if not os.path.exists(lib):
        pytest.skip("libstdc++ not installed")
    prog = 'usdt:"%s":libstdcxx:throw /comm == "throw"/ { @n = count(); } BEGIN { printf("ready\\n"); }' % lib
    bt = subprocess.Popen(["bpftrace", "-e", prog], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True, start_new_session=True)
    try:
        deadline = time.time() + 30
        line = ""
        while "ready" not in line and time.time() < deadline:
            line = bt.stdout.readline()
        assert "ready" in line, "bpftrace did not start"
        r = record(str(prog_path("throw")), opts=["-U", "libstdc++.so*:libstdcxx:throw", "-F", "main"])
        assert r.rc == 0, r.describe()
    finally:
        out = bpftrace_maps(bt, r"^@n: \d+$")
    m = re.search(r"@n: (\d+)", out)
    assert m, out
    probes = [e for e in by_cat(r.trace, "usdt") if e["name"] == "libstdcxx:throw"]
    # throw.cc throws exactly 5 exceptions; bpftrace saw the same run
    assert len(probes) == int(m.group(1)) == 5
    assert all(len(e["args"]["args"]) >= 1 for e in probes)


def test_bad_usdt_specs():
    r = run_bpfprof(["record", "-U", "nocolon", "--", str(prog_path("exitcode"))])
    assert r.returncode != 0 and "invalid -U" in r.stderr
    r = run_bpfprof(["record", "-U", "bpfprof:nosuchprobe", "--", str(prog_path("exitcode"))])
    assert r.returncode != 0 and "no USDT probe" in r.stderr
