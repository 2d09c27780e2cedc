# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The overhead governor (--max-overhead, user/cost/governor.c).

tests/progs/hottiny calls tiny() NTINY times inside each coarse() call and
prints its own counts.  tiny is single-stepped and does nothing: its probes
are nearly all of the program's CPU time, far past any limit whatever the
calibration's error, so the governor must drop it (it can only drop a
function it counted calls of: tiny has at least one recorded call), and the
rest (a few coarse calls a second) costs nothing next to the limit.  The
coarse calls are in flight when their group is re-linked without tiny: their
entries went through the old links and their returns through the new ones,
and every one must be there once, whole.  No timing is asserted here (the
slowdown against the limit is a bench row: bench/run.sh, SECTIONS=governor).
"""

import json
import re

import trace_util
from conftest import load_trace, run_bpfprof

INEXACT = ("unwound", "end_inferred", "unfinished", "began_before_recording")


def program_counts(stdout):
    m = re.search(r"hottiny: coarse=(\d+) tiny=(\d+)", stdout)
    assert m, stdout
    return int(m.group(1)), int(m.group(2))


def check_governed(trace, stdout, nthreads):
    coarse, tiny = program_counts(stdout)
    xs = trace_util.xevents(trace)
    counts = trace_util.counts(xs)
    # exact where nothing was dropped, across the re-link
    assert counts["coarse"] == coarse, counts
    assert counts["run"] == nthreads, counts
    assert counts["main"] == 1, counts
    # what was recorded of tiny up to the drop: something, never more than it made
    assert 1 <= counts["tiny"] <= tiny, counts
    assert set(counts) <= {"main", "run", "coarse", "tiny", "now_ns"}, counts
    # every kept call whole: its entry and its return seen, once
    for e in xs:
        if e["name"] != "tiny":
            assert not any(e["args"].get(k) for k in INEXACT), e
    calls, probs = trace_util.nesting_problems(xs, root_depth=None)
    assert not probs, probs[:10]
    for c in calls:
        if c.name == "tiny":
            assert trace_util.chain(c)[-2:] == ["coarse", "tiny"], trace_util.chain(c)
        if c.name == "coarse":
            assert trace_util.chain(c)[-2:] == ["run", "coarse"], trace_util.chain(c)
    # the moment of the drop, naming the function, once
    drops = [e for e in trace["traceEvents"] if e.get("ph") == "i" and e.get("cat") == "governor"]
    assert [e["name"] for e in drops] == ["dropped: tiny"], drops
    assert 1 <= drops[0]["args"]["calls"] <= counts["tiny"], drops
    assert drops[0]["args"]["calls_per_s"] >= 1, drops
    return counts


def summary_drops(stderr):
    """The functions under 'dropped by --max-overhead' in a summary or report."""
    lines = stderr.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("dropped by --max-overhead"):
            rows = []
            for r in lines[i + 2:]:
                m = re.match(r"\s+\S+ \S+\s+(\d+)\s+(\d+)\s+([\d.]+)x\s+(\S+)\s+(\S+)$", r)
                if not m:
                    break
                rows.append((m.group(5), int(m.group(1)), int(m.group(2))))
            return rows
    return None


def test_hot_tiny_function_is_dropped_coarse_stays_exact(record):
    r = record("hottiny", "40", "250000", opts=["--max-overhead", "100"], timeout=120)
    assert r.rc == 0, r.describe()
    counts = check_governed(r.trace, r.proc.stdout, 1)
    rows = summary_drops(r.proc.stderr)
    assert rows is not None and [n for n, _, _ in rows] == ["tiny"], r.proc.stderr
    assert 1 <= rows[0][2] <= counts["tiny"], rows
    assert "no longer tracing tiny" in r.proc.stderr, r.proc.stderr


def test_relink_under_threads_keeps_every_coarse_call(record):
    # four threads inside coarse() when the group is re-linked
    r = record("hottiny", "10", "100000", "4", opts=["--max-overhead", "100"], timeout=120)
    assert r.rc == 0, r.describe()
    check_governed(r.trace, r.proc.stdout, 4)


def test_archive_carries_the_drop_to_report_and_convert(record, tmp_path):
    r = record("hottiny", "20", "250000", opts=["--max-overhead", "100"], out="g.bpfprof",
               timeout=120)
    assert r.rc == 0, r.describe()
    rep = run_bpfprof(["report", r.out])
    assert rep.returncode == 0, rep.stderr
    rows = summary_drops(rep.stdout)
    assert rows is not None and [n for n, _, _ in rows] == ["tiny"], rep.stdout
    js = run_bpfprof(["report", "--format", "json", r.out])
    assert js.returncode == 0, js.stderr
    dropped = json.loads(js.stdout)["dropped"]
    assert [d["name"] for d in dropped] == ["tiny"], dropped
    assert dropped[0]["calls"] >= 1 and dropped[0]["at_ns"] > 0, dropped
    out = tmp_path / "c.json"
    cv = run_bpfprof(["convert", "-o", out, r.out])
    assert cv.returncode == 0, cv.stderr
    trace = load_trace(out)
    assert not trace_util.format_problems(trace)
    check_governed(trace, r.proc.stdout, 1)


def test_without_limit_record_is_exact_and_suggests_it(record):
    # small enough to trace whole: every call, nothing dropped; the probes are
    # still most of its CPU time, so the summary says what --max-overhead does
    r = record("hottiny", "2", "5000", timeout=120)
    assert r.rc == 0, r.describe()
    coarse, tiny = program_counts(r.proc.stdout)
    # now_ns: twice at the start, twice for the line it prints
    assert trace_util.counts(trace_util.xevents(r.trace)) == {
        "main": 1, "run": 1, "coarse": coarse, "tiny": tiny, "now_ns": 4}
    assert not [e for e in r.trace["traceEvents"] if e.get("cat") == "governor"]
    assert "--max-overhead PERCENT" in r.proc.stderr, r.proc.stderr


def test_invalid_limit_is_an_error(record):
    r = record("hottiny", "1", "1", opts=["--max-overhead", "lots"], check=False)
    assert r.rc != 0
    assert "invalid --max-overhead 'lots'" in r.proc.stderr, r.proc.stderr


def test_serve_governs_by_default(tmp_path):
    # serve's default limit (10%): a function called as fast as a loop goes,
    # single-... or emulated, costs the counter most of its CPU time: dropped,
    # and said so; serve keeps running and ends cleanly
    from test_serve import BPFPROF, Procs, free_port, prog_path, read_line, stop
    import subprocess
    ps = Procs()
    try:
        c = ps.start([prog_path("counter"), 0], stdin=subprocess.PIPE, text=True)
        pid = int(read_line(c, r"^counter: pid=(\d+)").split("=")[1])
        port = free_port()
        s = ps.start([BPFPROF, "serve", "--pid", pid, "--listen", "127.0.0.1:%d" % port,
                      "-F", "counted"], text=True)
        read_line(s, r"^http://")
        c.stdin.write("go\n")
        c.stdin.flush()
        line = read_line(s, r"--max-overhead 10% \(at most 1.1x slower\): the probes made \S+ about [\d.]+x slower; no longer tracing",
                         timeout=120, stream="stderr")
        assert "no longer tracing counted (" in line, line
        assert stop(s) == 0
    finally:
        ps.cleanup()


def test_what_tells_nothing_goes_at_once_not_only_what_the_limit_needs(record):
    # cool() is a leaf as small as tiny(), called 50 times less, from warm(),
    # which does nothing else: once tiny is gone, cool's probes are a few % of
    # tiny's at most, far under the limit, yet cool's calls are measured as
    # about their probe's own cost and cost more than the share that counts as
    # negligible.  It tells nothing, so it goes in the same round as tiny;
    # coarse stays exact.  warm() is measured as cool's residue: cool's probe
    # is single-stepped (no push to emulate), ~4x warm's, and the part of it
    # the calibration misses lands in warm's time, so warm informs in some
    # windows and not in others: dropped (at once, or later by the limit:
    # its own probes cost about the untraced run) or, if kept, exact.
    r = record("hottiny", "40", "250000", "1", "50", opts=["--max-overhead", "100"],
               timeout=120)
    assert r.rc == 0, r.describe()
    coarse, _ = program_counts(r.proc.stdout)
    m = re.search(r" warm=(\d+)", r.proc.stdout)
    assert m, r.proc.stdout
    xs = trace_util.xevents(r.trace)
    counts = trace_util.counts(xs)
    assert counts["coarse"] == coarse, counts
    assert 1 <= counts["cool"] < int(m.group(1)), counts
    drops = sorted(e["name"][len("dropped: "):] for e in r.trace["traceEvents"]
                   if e.get("ph") == "i" and e.get("cat") == "governor")
    assert drops in (["cool", "tiny"], ["cool", "tiny", "warm"]), drops
    if "warm" in drops:
        assert 1 <= counts["warm"] <= int(m.group(1)), counts
    else:
        assert counts["warm"] == int(m.group(1)), counts
    for e in xs:
        if e["name"] not in drops:
            assert not any(e["args"].get(k) for k in INEXACT), e
    rows = summary_drops(r.proc.stderr)
    assert rows is not None and sorted(n for n, _, _ in rows) == drops, r.proc.stderr


def test_annotations_cost_is_counted_and_said_not_put_on_functions(record):
    # hotmarks fires 1,000,000 BPFPROF_EVENTs (USDT probes: a trap each, about
    # a microsecond, ~1 s in all: several of the governor's windows; 200,000
    # ended within the first window once a hit cost half as much, ci22)
    # around 100 calls of coarse(), ~100 us each, and little else: the
    # annotations are nearly all the probe time.  No drop takes them away, so
    # the limit cannot be met; the warning names them (before, the estimate
    # did not count them: "about 1.0x slower"), and no function is dropped
    # for their cost: coarse stays exact.  A buffer that holds every record,
    # so that a decoder slowed by other jobs on the machine loses none.
    r = record("hotmarks", "1000000", "10000", out="trace.bpfprof",
               opts=["--max-overhead", "100", "--buffer-size", "512M"], timeout=180)
    assert r.rc == 0, r.describe()
    assert r.proc.stdout.strip().splitlines()[-1] == "hotmarks: events=1000000 coarse=100", r.proc.stdout
    js = run_bpfprof(["report", "--format", "json", r.out])
    assert js.returncode == 0, js.stderr
    rep = json.loads(js.stdout)
    calls = {f["name"]: f["calls"] for f in rep["functions"]}
    assert calls.get("coarse") == 100 and calls.get("loop") == 1, (calls, r.proc.stderr)
    assert re.search(r"--max-overhead 100%: the program's annotations \(bpfprof\.h\) and USDT "
                     r"probes alone make hotmarks (about|at least) [\d.]+x slower", r.proc.stderr), r.proc.stderr
    assert "no longer tracing" not in r.proc.stderr, r.proc.stderr
    assert not rep["dropped"], rep["dropped"]
