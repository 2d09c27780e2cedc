# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The overhead governor over every process of a recording and over Python calls.

tests/progs/execfan runs its children one after the other, each a new
image of the same file (exec of /proc/self/exe) calling tiny() 2 * NTINY
times inside two coarse() calls: tiny's probe is many times its own time
whatever the calibration's error, so it is dropped, once, for the file:
every child started after the decision runs without it (probes belong to
the file, not to a process), while the children's coarse() and the
parent's spawn() stay exact.

tests/progs/py/hotafter.py calls coarse() (a loop without calls) a few
times, then tiny() (one line) from hot(), hundreds of thousands of times
and on until the process has used HOT_S seconds of CPU in hot(), then
after() once, which calls spin(): a loop without calls until the process
has used SPIN_S more seconds of CPU.  CPython's probe fires for
every call, dropped functions' too (filtered in BPF): those traps alone
are far past the limit, so the governor drops tiny, then detaches the
interpreter's probes while hot() still loops, says so, and samples the
stacks in their place (the recording has no --sample).  No timing is
asserted.
"""

import json
import re

import trace_util
from conftest import REPO, debian_python, load_trace, run_bpfprof
from test_governor import summary_drops

NCHILD, NTINY = 12, 20000


def children(stdout, nchild=NCHILD):
    rows = {}
    for m in re.finditer(r"execfan: child=(\d+) pid=(\d+) coarse=(\d+) tiny=(\d+)", stdout):
        rows[int(m.group(1))] = dict(pid=int(m.group(2)), coarse=int(m.group(3)),
                                     tiny=int(m.group(4)))
    assert sorted(rows) == list(range(nchild)), stdout
    assert "execfan: children=%d failed=0" % nchild in stdout, stdout
    return rows


def test_a_drop_holds_in_every_later_process_of_the_file(record, tmp_path):
    r = record("execfan", str(NCHILD), str(NTINY), opts=["--max-overhead", "100"],
               out="e.bpfprof", timeout=600)
    assert r.rc == 0, r.describe()
    rows = children(r.proc.stdout)
    # dropped once, for the file, named in the summary and the archive's report
    assert [n for n, _, _ in summary_drops(r.proc.stderr)] == ["tiny"], r.proc.stderr
    js = run_bpfprof(["report", "--format", "json", r.out])
    assert js.returncode == 0, js.stderr
    dropped = json.loads(js.stdout)["dropped"]
    assert [(d["name"], d["module"]) for d in dropped] == [("tiny", "execfan")], dropped
    out = tmp_path / "e.json"
    cv = run_bpfprof(["convert", "-o", out, r.out])
    assert cv.returncode == 0, cv.stderr
    trace = load_trace(out)
    xs = trace_util.xevents(trace)
    counts = trace_util.counts(xs)
    assert counts["spawn"] == NCHILD, counts
    assert counts["main"] == NCHILD + 1, counts
    per = {i: trace_util.counts([e for e in xs if e["pid"] == c["pid"]])
           for i, c in rows.items()}
    for i, c in rows.items():
        # kept: exact in every child, before and after the drop
        assert per[i]["child_main"] == 1 and per[i]["coarse"] == c["coarse"] == 2, (i, per[i])
        assert per[i]["tiny"] <= c["tiny"] == 2 * NTINY, (i, per[i])
    # the decision came while a child ran; every child after it ran without tiny's probe
    first = min(i for i in rows if per[i]["tiny"] < 2 * NTINY)
    assert first < NCHILD - 1, per
    assert all(per[i]["tiny"] == 0 for i in rows if i > first), per
    for e in xs:
        if e["name"] in ("coarse", "child_main", "spawn"):
            assert not any(e["args"].get(k) for k in ("unwound", "end_inferred",
                                                      "unfinished")), e
    drops = [e["name"] for e in trace["traceEvents"] if e.get("cat") == "governor"]
    assert drops == ["dropped: tiny"], drops


def test_a_process_shorter_than_a_window_is_governed(record):
    """One child of execfan: its 2 * NTINY tiny() calls take about a tenth of
    a second traced, less than a window (250 ms), and it is the recording's
    only busy process.  A window ends early once the targets used 30 ms of
    CPU in it with the estimate past the limit, so the decision comes from
    the child's first calls, inside it: tiny is dropped while the child
    still runs (fewer of its calls recorded than it made), and named in the
    summary and the archive; coarse and child_main stay exact.  Before, the
    first decision waited for a whole window: the child had ended, every
    call recorded, nothing dropped."""
    r = record("execfan", "1", str(NTINY), opts=["--max-overhead", "100"], out="s.bpfprof",
               timeout=300)
    assert r.rc == 0, r.describe()
    rows = children(r.proc.stdout, 1)
    assert [n for n, _, _ in summary_drops(r.proc.stderr)] == ["tiny"], r.proc.stderr
    js = run_bpfprof(["report", "--format", "json", r.out])
    assert js.returncode == 0, js.stderr
    rep = json.loads(js.stdout)
    assert [(d["name"], d["module"]) for d in rep["dropped"]] == [("tiny", "execfan")], rep["dropped"]
    calls = {f["name"]: f["calls"] for f in rep["functions"]}
    assert calls["child_main"] == 1 and calls["coarse"] == rows[0]["coarse"] == 2, calls
    assert calls["spawn"] == 1, calls
    # dropped while the child ran: the only process that calls tiny
    assert 1 <= calls["tiny"] < rows[0]["tiny"] == 2 * NTINY, calls


def test_execs_of_a_probed_image_are_not_held(record, tmp_path):
    """Only the first exec of a file waits for its probes: the launcher's
    exec of execfan is held (the probes were attached before it), the
    children's execs of the same file are not, and still each child is
    traced from its first call: every count is exact (no governor)."""
    ntiny = 2000
    r = record("execfan", str(NCHILD), str(ntiny), opts=["-v"], out="x.bpfprof",
               timeout=300)
    assert r.rc == 0, r.describe()
    rows = children(r.proc.stdout)
    assert "execs held for their new image: 1 " in r.proc.stderr, r.proc.stderr[-3000:]
    out = tmp_path / "x.json"
    cv = run_bpfprof(["convert", "-o", out, r.out])
    assert cv.returncode == 0, cv.stderr
    xs = trace_util.xevents(load_trace(out))
    for i, c in rows.items():
        per = trace_util.counts([e for e in xs if e["pid"] == c["pid"]])
        assert per["child_main"] == 1 and per["coarse"] == 2, (i, per)
        assert per["tiny"] == c["tiny"] == 2 * ntiny, (i, per)
        assert per["main"] == 1, (i, per)


# hot() traps for HOT_S s of CPU at least: many of the governor's windows
# (each ends once the targets used 50 ms of CPU; one put off, 2 s at most),
# so the probes go inside it; spin() then runs SPIN_S s of CPU with the
# probes gone: ~150 samples at 99 Hz
HOT_S, SPIN_S = 3, 1.5


def test_python_probes_go_while_the_hot_loop_runs(record, tmp_path):
    ncoarse, ntiny = 10, 400000
    r = record(debian_python(), str(REPO / "tests/progs/py/hotafter.py"), str(ncoarse),
               str(ntiny), str(HOT_S), str(SPIN_S), opts=["--max-overhead", "100"],
               out="h.bpfprof", timeout=900)
    assert r.rc == 0, r.describe()
    m = re.search(r"hotafter: coarse=%d tiny=(\d+) after=1" % ncoarse, r.proc.stdout)
    assert m and int(m.group(1)) >= ntiny, r.proc.stdout
    err = r.proc.stderr
    # The fallback comes as soon as CPython's probes alone pass the limit: in
    # the hot loop (tiny named first), or, when the start-up's imports alone
    # pass it in an early window (ci6, alone on the machine), before hot()
    # ran: then no function of the program was seen, and coarse is sampled.
    early = not re.search(r"no longer tracing tiny \(", err)
    assert "the Python probes are detached" in err, err
    # no --sample: the stacks are sampled in the probes' place from then on
    assert "; sampling its stacks at 99 Hz from now on" in err, err
    assert re.search(r"bpfprof: [1-9]\d* cpu samples", err), err
    js = run_bpfprof(["report", "--format", "json", r.out])
    assert js.returncode == 0, js.stderr
    rep = json.loads(js.stdout)
    dropped = [d["name"] for d in rep["dropped"]]
    own = [d["name"] for d in rep["dropped"] if d["module"] == "hotafter.py"]
    # tiny first of the program's own functions, by distortion (on a loaded
    # machine a window can end while the interpreter still imports, and some
    # of importlib's functions go first); then, at the fallback, every Python
    # function seen
    calls = {f["name"]: f["calls"] for f in rep["functions"]}
    if early:
        assert calls.get("coarse", 0) <= ncoarse and calls.get("tiny", 0) < int(m.group(1)), calls
    else:
        assert own and own[0] == "tiny", rep["dropped"][:8]
        assert {"hot", "coarse", "main"} <= set(dropped), dropped
        # coarse ran before anything was dropped: exact
        assert calls.get("coarse") == ncoarse, calls
        assert 1 <= calls.get("tiny", 0) < int(m.group(1)), calls
    # the probes went while hot() looped: after() (called once, after the loop) never seen
    assert "after" not in calls, calls
    # so spin(), after() spent SPIN_S s of CPU in it with the probes gone and the
    # sampler started at their going: it is in the samples, below main and after
    out = tmp_path / "h.folded"
    cv = run_bpfprof(["convert", "-o", out, r.out])
    assert cv.returncode == 0, cv.stderr
    spin = 0
    for line in out.read_text().splitlines():
        stack, weight = line.rsplit(" ", 1)
        frames = [f.replace(" [dropped by --max-overhead]", "") for f in stack.split(";")]
        if "spin" not in frames:
            continue
        py = [f for f in frames if f in ("main", "after", "spin")]
        assert py == ["main", "after", "spin"], stack
        spin += int(weight)
    assert spin > 0, out.read_text()[:3000]


def test_python_stays_traced_when_a_librarys_annotations_are_the_cost(record):
    # ctmarks.py calls libplug_a.so's plug_work 300,000 times through ctypes:
    # C calls, no Python probe hit; each fires BPFPROF_EVENT and plugin:work
    # (-U), two USDT traps, ~2 us against ~0.7 us of the call itself.  What
    # no drop takes away is the annotations, not CPython's probes: those
    # stay (before, they were detached and blamed: "CPython's probes fire
    # for every Python call ... those alone made python3.11 about 2.6x
    # slower"), and main() and total(), one call each, are recorded.
    n = 300000
    lib = REPO / "tests/progs/plugins.d/libplug_a.so"
    r = record(debian_python(), str(REPO / "tests/progs/py/ctmarks.py"), str(lib), str(n),
               opts=["--max-overhead", "100", "--buffer-size", "256M", "-F", "libplug_a.so:plug_init",
                     "-U", "libplug_a.so:plugin:work"], out="c.bpfprof", timeout=300)
    assert r.rc == 0, r.describe()
    assert r.proc.stdout.strip().splitlines()[-1] == "ctmarks: n=%d sum=%d" % (n, 3 * n * (n + 1) // 2)
    err = r.proc.stderr
    assert "the Python probes are detached" not in err, err
    assert "CPython's probes fire" not in err, err
    js = run_bpfprof(["report", "--format", "json", r.out])
    assert js.returncode == 0, js.stderr
    rep = json.loads(js.stdout)
    calls = {(f["module"], f["name"]): f["calls"] for f in rep["functions"]}
    assert calls.get(("ctmarks.py", "main")) == 1 and calls.get(("ctmarks.py", "total")) == 1, calls
    assert calls.get(("libplug_a.so", "plug_init")) == 1, calls
    assert not [d for d in rep["dropped"] if d["module"] == "ctmarks.py"], rep["dropped"]
