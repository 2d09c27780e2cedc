# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Perfetto's protobuf output (.pftrace) end to end.

The files are decoded by protoc against tests/perfetto_subset.proto and
rebuilt into slices the way Perfetto's trace processor does
(perfetto_util.py), then checked for the same exact facts as the JSON: call
counts per function, nesting per thread, thread names, flows, losses; and
compared call by call with the Chrome JSON of the same recording.
"""
import os
import re
import shutil
import subprocess
from collections import Counter

import pytest
from conftest import BPFPROF, REPO, prog_path, run_bpfprof
import perfetto_util
from trace_util import (EPS_US, assert_nesting, build_forest, chain, counts, loss_events,
                        process_names, thread_names, xevents)

pytestmark = pytest.mark.skipif(shutil.which("protoc") is None,
                                reason="protoc missing: scripts/setup.sh --test")

CALLTREE_COUNTS = {"main": 1, "run": 1, "parse": 3, "compute": 5, "leaf_add": 20,
                   "leaf_mul": 10, "fib": 177, "slow_io": 1}


def ok(p):
    assert p.returncode == 0, "bpfprof exit status %s\n%s" % (p.returncode, p.stderr[-3000:])


def read_json(path):
    import json
    with open(path) as f:
        return json.load(f)


def flagset(e):
    return frozenset(k for k in ("unfinished", "began_before_recording", "unwound",
                                 "end_inferred", "suspended", "resumed", "raised")
                     if e["args"].get(k))


def slices(trace):
    """Every call as (tid, name, begin ns, end ns, depth by containment, flags)."""
    out = Counter()
    calls, probs = build_forest(xevents(trace))
    assert not probs, "\n".join(probs[:20])
    for c in calls:
        d = 0
        p = c.parent
        while p is not None:
            d, p = d + 1, p.parent
        out[(c.ev["tid"], c.name, round(c.ev["ts"] * 1000), round((c.ev["ts"] + c.ev["dur"]) * 1000),
             d, flagset(c.ev))] += 1
    return out


def flows(trace):
    """{(name, src tid, src ns, dst tid, dst ns)} of the flow events."""
    s = {e["id"]: e for e in trace["traceEvents"] if e.get("ph") == "s"}
    f = {e["id"]: e for e in trace["traceEvents"] if e.get("ph") == "f"}
    assert set(s) == set(f), "flows with one end only"
    return Counter((s[i]["name"], s[i]["tid"], round(s[i]["ts"] * 1000), f[i]["tid"],
                    round(f[i]["ts"] * 1000)) for i in s)


def losses(trace):
    return Counter((round(e["ts"] * 1000), e["args"]["cpu"], e["args"]["count"])
                   for e in loss_events(trace))


def same_facts(jtrace, ptrace):
    """The JSON and the Perfetto trace of one recording show the same thing."""
    js, ps = slices(jtrace), slices(ptrace)
    assert js == ps, "calls differ: only in JSON %s; only in pftrace %s" % (
        list((js - ps).items())[:5], list((ps - js).items())[:5])
    assert flows(jtrace) == flows(ptrace)
    assert losses(jtrace) == losses(ptrace)
    assert thread_names(jtrace) == thread_names(ptrace)
    assert process_names(jtrace) == process_names(ptrace)


# ------------------------------------------------------------------ record

def test_calltree(tmp_path):
    out = tmp_path / "trace.pftrace"
    p = run_bpfprof(["record", "-o", out, "--", prog_path("calltree")])
    ok(p)
    tr = perfetto_util.read(out)
    ev = xevents(tr)
    assert dict(counts(ev)) == CALLTREE_COUNTS
    calls = assert_nesting(ev)
    by = {}
    for c in calls:
        by.setdefault(c.name, []).append(c)
    (run,) = by["run"]
    assert chain(run) == ["main", "run"]
    for name in ("leaf_add", "leaf_mul"):
        for c in by[name]:
            assert chain(c) == ["main", "run", "compute", name], c
    for c in by["compute"]:
        assert counts(k.ev for k in c.children) == {"leaf_add": 4, "leaf_mul": 2}, c
    assert max(c.depth for c in by["fib"]) == 11
    order = [k.name for k in sorted(run.children, key=lambda k: k.ts)]
    assert order == ["parse"] * 3 + ["compute"] * 5 + ["fib", "slow_io"]
    assert not [e for e in ev if flagset(e)], "flags in a complete run"
    assert not loss_events(tr)
    (pid,) = {e["pid"] for e in ev}
    assert {e["tid"] for e in ev} == {pid}
    assert process_names(tr).get(pid) == "calltree"
    assert thread_names(tr).get(pid) == "calltree"
    assert {e["cat"] for e in ev} == {"call"}


def test_threads_named(tmp_path):
    out = tmp_path / "t.perfetto-trace"
    p = run_bpfprof(["record", "-o", out, "--", prog_path("threads")])
    ok(p)
    pid = int(re.search(r"^threads: pid=(\d+)$", p.stdout, re.M).group(1))
    workers = {int(t): (int(i), int(n)) for i, t, n in
               re.findall(r"^worker-(\d) tid=(\d+) ticks=(\d+)$", p.stdout, re.M)}
    assert len(workers) == 4, p.stdout
    tr = perfetto_util.read(out)
    ev = xevents(tr)
    names = thread_names(tr)
    for tid, (i, n) in workers.items():
        assert names.get(tid) == "worker-%d" % i, (tid, names.get(tid))
        assert dict(counts(e for e in ev if e["tid"] == tid)) == {"worker": 1, "tick": n}
    assert dict(counts(e for e in ev if e["tid"] == pid)) == {"main": 1}
    for c in assert_nesting(ev):
        if c.name == "tick":
            assert chain(c) == ["worker", "tick"]


def test_format_flag_and_stdout(tmp_path):
    """--format perfetto with -o - writes the same kind of trace to standard output."""
    p = subprocess.run([str(BPFPROF), "record", "--format", "perfetto", "-o", "-", "--",
                        str(prog_path("calltree"))], cwd=REPO, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    out = tmp_path / "stdout.pftrace"
    # the traced program's own stdout shares the pipe: keep only the trace after it
    data = p.stdout
    k = data.find(b"\x0a", data.find(b"calltree: result="))
    out.write_bytes(data[k + 1:])
    assert dict(counts(xevents(perfetto_util.read(out)))) == CALLTREE_COUNTS


# ------------------------------------------- the same recording, both formats

@pytest.fixture(scope="module")
def pingpong_archive(tmp_path_factory):
    """pingpong cond 20 recorded once into an archive (wakeup and fork edges)."""
    d = tmp_path_factory.mktemp("pp")
    arch = d / "pp.bpfprof"
    p = run_bpfprof(["record", "-o", arch, "--", prog_path("pingpong"), "cond", "20"])
    ok(p)
    return d, arch, p


def convert(arch, out, *opts):
    p = run_bpfprof(["convert", *opts, "-o", out, arch])
    ok(p)
    return out


def test_convert_matches_json(pingpong_archive):
    d, arch, _ = pingpong_archive
    j = read_json(convert(arch, d / "pp.json"))
    pt = perfetto_util.read(convert(arch, d / "pp.pftrace"))
    same_facts(j, pt)
    c = counts(xevents(pt))
    assert c["produce"] == 20 and c["consume"] == 20, dict(c)
    fl = flows(pt)
    wake = [k for k in fl.elements() if k[0] == "wakeup" and k[1] != k[3]]
    assert len(wake) >= 20, "pingpong cond 20: 20 wakeups of the consumer, got %d" % len(wake)


def test_wakeup_flows_bound_to_calls(pingpong_archive):
    """Each flow end sits inside a call of its thread: the producer's end in
    produce(), the consumer's in consume()."""
    d, arch, p = pingpong_archive
    pt = perfetto_util.read(convert(arch, d / "pp2.pftrace"))
    calls, _ = build_forest(xevents(pt))
    consumer = int(re.search(r"consumer tid (\d+)", p.stdout).group(1))
    ends = [e for e in pt["traceEvents"] if e.get("ph") in ("s", "f") and e["name"] == "wakeup"]
    inside = Counter()
    for e in ends:
        enc = [c for c in calls if c.ev["tid"] == e["tid"] and
               c.ev["ts"] - EPS_US <= e["ts"] <= c.ev["ts"] + c.ev["dur"] + EPS_US]
        innermost = max(enc, key=lambda c: c.ev["ts"]) if enc else None
        inside[(e["ph"], e["tid"] == consumer, innermost.name if innermost else None)] += 1
    assert inside[("s", False, "produce")] >= 20, inside
    assert inside[("f", True, "consume")] >= 20, inside


def test_losses_and_counts_match_json(tmp_path):
    """A 4 KiB ring buffer under 200,000 calls: records are lost; the loss
    instants carry the same counts as the JSON's, and the calls agree."""
    arch = tmp_path / "o.bpfprof"
    p = run_bpfprof(["record", "-o", arch, "--buffer-size", "4k", "-F", "small_push", "--",
                     prog_path("spin"), "200000", "small_push"], timeout=180)
    ok(p)
    lost = int(re.search(r"(\d+) lost records", p.stderr).group(1))
    j = read_json(convert(arch, tmp_path / "o.json"))
    pt = perfetto_util.read(convert(arch, tmp_path / "o.pftrace"))
    same_facts(j, pt)
    assert sum(e["args"]["count"] for e in loss_events(pt)) == lost
    if lost:
        assert loss_events(pt)


def test_annotations(tmp_path):
    """bpfprof.h marks, events (and their counter track), infos as in the JSON."""
    arch = tmp_path / "a.bpfprof"
    p = run_bpfprof(["record", "-o", arch, "--", prog_path("annotate")])
    ok(p)
    j = read_json(convert(arch, tmp_path / "a.json"))
    pt = perfetto_util.read(convert(arch, tmp_path / "a.pftrace"))
    same_facts(j, pt)

    def inst(tr):
        return Counter((e["cat"], e["name"], e["tid"], round(e["ts"] * 1000),
                        e["args"].get("value")) for e in tr["traceEvents"]
                       if e.get("ph") == "i" and e.get("cat") in ("mark", "event", "usdt"))

    def counters(tr):
        return Counter((e["name"], e["pid"], round(e["ts"] * 1000), e["args"][e["name"]])
                       for e in tr["traceEvents"] if e.get("ph") == "C")

    def infos(tr):
        skip = {"depth", "self_us", "id", "module"}
        return Counter((e["name"], round(e["ts"] * 1000),
                        tuple(sorted((k, v) for k, v in e["args"].items() if k not in skip)))
                       for e in xevents(tr))

    assert inst(j) and inst(j) == inst(pt)
    assert counters(j) == counters(pt)
    assert infos(j) == infos(pt)


def test_attach_matches_json(tmp_path):
    """busy attached for its last ticks (it exits during the recording): the
    first tick may have begun before the attach, the last may be unfinished;
    whatever the flags, Perfetto shows what the JSON shows."""
    # 8 s: the attach (slow on a loaded machine) is in long before busy ends
    t = subprocess.Popen([str(prog_path("busy")), "8", "bpfprof-e2e-pftrace"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        line = t.stdout.readline().decode()
        pid = int(re.match(r"busy: pid=(\d+)", line).group(1))
        arch = tmp_path / "b.bpfprof"
        p = run_bpfprof(["attach", "--max-overhead", "off", "--pid", pid, "-d", "20s", "-o", arch])
        ok(p)
    finally:
        if t.poll() is None:
            t.kill()
        t.wait()
        t.stdout.close()
    j = read_json(convert(arch, tmp_path / "b.json"))
    pt = perfetto_util.read(convert(arch, tmp_path / "b.pftrace"))
    same_facts(j, pt)
    ev = xevents(pt)
    c = counts(ev)
    assert set(c) == {"tick", "now_s"} and c["tick"] > 100, dict(c)
    assert all(e["args"]["depth"] == 0 for e in ev)


def test_size_per_call(tmp_path):
    """A recording of 200,000 calls: at most 32 bytes a call, and several
    times smaller than the JSON of the same archive."""
    arch = tmp_path / "s.bpfprof"
    p = run_bpfprof(["record", "-o", arch, "-F", "small_push", "--",
                     prog_path("spin"), "200000", "small_push"], timeout=180)
    ok(p)
    calls = int(re.search(r"(\d+) calls recorded", p.stderr).group(1))
    pf = convert(arch, tmp_path / "s.pftrace")
    js = convert(arch, tmp_path / "s.json")
    per_call = os.path.getsize(pf) / calls
    assert per_call <= 32, "%.1f bytes per call" % per_call
    assert os.path.getsize(js) >= 5 * os.path.getsize(pf), (os.path.getsize(js), os.path.getsize(pf))
    assert len(xevents(perfetto_util.read(pf))) == calls


def test_big_json_warns(tmp_path):
    """A JSON past what viewers open (over 1 M events, README "Viewer
    limits") is written with a warning naming .pftrace; the .pftrace of the
    same archive and a small JSON are written without one."""
    arch = tmp_path / "big.bpfprof"
    p = run_bpfprof(["record", "-o", arch, "-F", "small_push", "--",
                     prog_path("spin"), "1500000", "small_push"], timeout=300)
    ok(p)
    pj = run_bpfprof(["convert", "-o", tmp_path / "big.json", arch], timeout=300)
    ok(pj)
    with open(tmp_path / "big.json") as f:
        nev = sum(1 for line in f if line.startswith("{\"name\""))
    warned = [l for l in pj.stderr.splitlines() if "warning" in l and ".pftrace" in l]
    assert bool(warned) == (nev > 1000000), (nev, pj.stderr)
    os.unlink(tmp_path / "big.json")
    pp = run_bpfprof(["convert", "-o", tmp_path / "big.pftrace", arch], timeout=300)
    ok(pp)
    assert "warning" not in pp.stderr, pp.stderr
    small = run_bpfprof(["record", "-o", tmp_path / "small.json", "--", prog_path("calltree")])
    ok(small)
    assert "warning" not in small.stderr, small.stderr


def test_merge(tmp_path):
    """merge of two recordings into one .pftrace: both processes, all calls."""
    archs = []
    for i in range(2):
        a = tmp_path / ("m%d.bpfprof" % i)
        ok(run_bpfprof(["record", "-o", a, "--", prog_path("calltree")]))
        archs.append(a)
    out = tmp_path / "m.pftrace"
    ok(run_bpfprof(["merge", "-o", out] + archs))
    tr = perfetto_util.read(out)
    ev = xevents(tr)
    assert dict(counts(ev)) == {k: 2 * v for k, v in CALLTREE_COUNTS.items()}
    pids = {e["pid"] for e in ev}
    assert len(pids) == 2 and all(process_names(tr).get(p) == "calltree" for p in pids)
    assert_nesting(ev)
