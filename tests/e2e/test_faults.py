# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Faults during a recording: longjmp, C++ exceptions, signal handlers,
pthread_exit, deep recursion, SIGKILL, a full ring buffer, and two
recordings at once.  Each program documents at the top of its source
(tests/progs/*.c, *.cc) the exact facts checked here.

Flags in a call's args (user/model/session.h, exporters/chrome.c):
  "unfinished": true              no return seen (thread exited / killed / recording ended)
  "began_before_recording": true  a return without its entry
  "entry_lost": true              a return without its entry after records were lost
  "unwound": true                 skipped by longjmp or an exception (found by the stack pointer)
"""

import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import BPFPROF, REPO, Run, assert_ok, load_trace, prog_path, read_until
from trace_util import (CALL_FLAGS as FLAGS, assert_nesting, chain, counts, format_problems,
                        loss_events, nesting_problems, xevents)


def flags(call_or_event):
    """The set of flags a call carries ("unfinished", "unwound", ...)."""
    ev = getattr(call_or_event, "ev", call_or_event)
    return {k for k in FLAGS if ev["args"].get(k)}


def group(calls):
    out = {}
    for c in calls:
        out.setdefault(c.name, []).append(c)
    return out


def inside(child, parent):
    """child's time range lies within parent's (same thread)."""
    return child.tid == parent.tid and parent.contains(child)


def summary_number(stderr, what):
    """N from the `bpfprof: N calls recorded ..., M lost records` summary line."""
    m = re.search(r"^bpfprof: (\d+) calls recorded .*?(\d+) lost records", stderr, re.M)
    assert m, "no summary line on stderr:\n" + stderr
    return int(m.group(1 if what == "calls" else 2))


# ------------------------------------------------------------------ longjmp

def test_longjmp(record):
    """jumps.c: inner longjmps back into outer, past mid and inner.  The two
    skipped frames are closed and flagged unwound; outer continues with
    after_jump, which is a child of outer (not of the dead mid)."""
    r = record("jumps")
    assert_ok(r)
    assert "jumps: jumped=5" in r.proc.stdout, r.describe()
    ev = xevents(r.trace)
    assert dict(counts(ev)) == {"main": 1, "outer": 5, "mid": 5, "inner": 5, "after_jump": 5}
    calls = assert_nesting(ev, root_depth=0)
    by = group(calls)

    (main,) = by["main"]
    assert main.depth == 0 and not flags(main), main.ev
    for o in by["outer"]:
        assert chain(o) == ["main", "outer"] and o.depth == 1, o
        assert not flags(o), "outer returned normally: %s" % o.ev
    for m in by["mid"]:
        assert chain(m) == ["main", "outer", "mid"] and m.depth == 2, m
        assert flags(m) == {"unwound"}, m.ev
    for i in by["inner"]:
        assert chain(i) == ["main", "outer", "mid", "inner"] and i.depth == 3, i
        assert flags(i) == {"unwound"}, i.ev
    for a in by["after_jump"]:
        assert not flags(a), a.ev
        assert a.parent is not None and a.parent.name == "outer", "after_jump outside an outer: %r" % a
        assert a.depth == a.parent.depth + 1 == 2
        assert inside(a, a.parent)
    # each outer: mid (dead, with inner in it), then after_jump, in that order
    for o in by["outer"]:
        kids = sorted(o.children, key=lambda c: c.ts)
        assert [k.name for k in kids] == ["mid", "after_jump"], (o, kids)
        assert kids[0].end <= kids[1].ts + 0.0025, "mid must end before after_jump starts: %r" % kids
        assert [k.name for k in kids[0].children] == ["inner"]
    assert r.trace and not loss_events(r.trace)
    assert re.search(r"\b10 unwound\b", r.proc.stderr), "summary counts 10 unwound frames\n" + r.proc.stderr


# --------------------------------------------------------------- exceptions

THROW_FUNCS = ["-F", "main", "-F", "catcher", "-F", "thrower_*", "-F", "after_catch",
               "-F", "cleanup_dtor"]


def check_throw_common(r, mid):
    """Facts shared by both modes of throw.cc; `mid` is thrower_mid or thrower_mid_dtor."""
    assert r.rc == 0, "the traced program must survive the exceptions (std::terminate " \
                      "aborts: 134)\n" + r.describe()
    assert r.trace is not None, r.describe()
    assert r.proc.stdout.splitlines() == ["caught leaf %d" % i for i in range(5)] + \
        ["throw: caught=5"], r.describe()
    calls = assert_nesting(xevents(r.trace), root_depth=0)
    by = group(calls)
    for name in ("catcher", mid, "thrower_leaf", "after_catch"):
        assert len(by.get(name, [])) == 5, "%s: %d calls, want 5" % (name, len(by.get(name, [])))
    for c in by["catcher"]:
        assert chain(c) == ["main", "catcher"], c
    for m in by[mid]:
        assert m.parent is not None and m.parent.name == "catcher", m
        assert flags(m) == {"unwound"}, m.ev
    for l in by["thrower_leaf"]:
        assert l.parent is not None and l.parent.name == mid, l
        assert flags(l) == {"unwound"}, l.ev
    for a in by["after_catch"]:
        assert a.parent is not None and a.parent.name == "catcher", "after_catch outside a catcher: %r" % a
        assert a.depth == a.parent.depth + 1 == 2
        assert not flags(a), a.ev
    for c in by["catcher"]:
        kids = sorted(c.children, key=lambda k: k.ts)
        assert [k.name for k in kids] == [mid, "after_catch"], (c, kids)
        assert kids[0].end <= kids[1].ts + 0.0025
    return by


def test_exception(record):
    """throw.cc: thrower_leaf throws through thrower_mid into catcher.  Without
    the loader restoring the return addresses, the unwinder meets the kernel's
    return trampoline and the program dies in std::terminate."""
    r = record(prog_path("throw"), opts=THROW_FUNCS)
    by = check_throw_common(r, "thrower_mid")
    assert dict(counts(xevents(r.trace))) == {"main": 1, "catcher": 5, "thrower_mid": 5,
                                              "thrower_leaf": 5, "after_catch": 5}
    assert "cleanup_dtor" not in by


def test_exception_cleanup_pad(record):
    """throw.cc dtor: the exception passes a frame with a destructor to run:
    the unwinder enters its cleanup pad (Guard::~Guard -> cleanup_dtor) and
    then resumes with _Unwind_Resume, a second unwinder entry.

    Every function of the executable is traced here (C++ helpers such as
    Guard::Guard and std::to_string's internals too), so only the program's
    own functions are counted.  With Guard::~Guard traced, its entry (at the
    stack slot thrower_leaf had) proves thrower_leaf gone."""
    r = record(prog_path("throw"), "dtor")
    by = check_throw_common(r, "thrower_mid_dtor")
    c = counts(xevents(r.trace))
    assert {k: c[k] for k in ("main", "catcher", "thrower_mid", "thrower_mid_dtor",
                              "thrower_leaf", "cleanup_dtor", "after_catch")} == \
        {"main": 1, "catcher": 5, "thrower_mid": 0, "thrower_mid_dtor": 5, "thrower_leaf": 5,
         "cleanup_dtor": 5, "after_catch": 5}
    for d in by["cleanup_dtor"]:
        assert not flags(d), d.ev
        path = chain(d)
        # run by thrower_mid_dtor's cleanup pad, after thrower_leaf's frame is gone
        assert "thrower_mid_dtor" in path and "thrower_leaf" not in path, path
        assert path[-2:] == ["Guard::~Guard()", "cleanup_dtor"], path


def test_exception_cleanup_pad_selected(record):
    """The same with only the program's functions selected: cleanup_dtor is
    called (through the untraced destructor) from thrower_mid_dtor's frame
    after thrower_leaf's frame was unwound, so it is a child of
    thrower_mid_dtor, not of thrower_leaf."""
    r = record(prog_path("throw"), "dtor", opts=THROW_FUNCS)
    assert r.rc == 0, r.describe()
    calls = assert_nesting(xevents(r.trace), root_depth=0)
    by = group(calls)
    assert len(by.get("cleanup_dtor", [])) == 5
    for d in by["cleanup_dtor"]:
        assert chain(d)[-2:] == ["thrower_mid_dtor", "cleanup_dtor"], chain(d)


@pytest.mark.parametrize("mode", ["plain", "dtor"])
def test_exception_catcher_not_flagged(record, mode):
    """catcher catches the exception and returns normally, and so does main:
    neither may be flagged unwound or unfinished, and each catcher ends after
    its after_catch (its own return), not at some later event."""
    r = record(prog_path("throw"), *(["dtor"] if mode == "dtor" else []), opts=THROW_FUNCS)
    assert r.rc == 0, r.describe()
    calls = assert_nesting(xevents(r.trace), root_depth=0)
    by = group(calls)
    bad = [c.ev for c in by["catcher"] + by["main"] if flags(c)]
    assert not bad, "catcher/main returned normally but are flagged:\n%s" % \
        "\n".join(json.dumps(e) for e in bad)


# ------------------------------------------------------------ signal handlers

def test_signal_handlers(record):
    """sighandler.c: handlers run inside the interrupted traced call, on the
    same stack (SIGUSR1) and on a sigaltstack from malloc (SIGUSR2); every
    call returns normally."""
    r = record("sighandler")
    assert_ok(r)
    assert "sighandler: handled=3 alt=2 on_altstack=2" in r.proc.stdout, r.describe()
    ev = xevents(r.trace)
    assert dict(counts(ev)) == {"main": 1, "victim": 3, "on_signal": 3, "in_handler": 3,
                                "alt_victim": 2, "on_alt_signal": 2}
    bad = [e for e in ev if flags(e)]
    assert not bad, "flagged calls in a run where every call returns:\n%s" % bad
    calls = assert_nesting(ev, root_depth=0)
    by = group(calls)
    for v in by["victim"] + by["alt_victim"]:
        assert v.parent is by["main"][0] and v.depth == 1, v
    for s in by["on_signal"]:
        assert chain(s) == ["main", "victim", "on_signal"] and s.depth == 2, s
    for s in by["in_handler"]:
        assert chain(s) == ["main", "victim", "on_signal", "in_handler"] and s.depth == 3, s
    for s in by["on_alt_signal"]:
        assert chain(s) == ["main", "alt_victim", "on_alt_signal"] and s.depth == 2, s
    for v in by["victim"]:
        assert [k.name for k in v.children] == ["on_signal"], v
    for v in by["alt_victim"]:
        assert [k.name for k in v.children] == ["on_alt_signal"], v
    assert "unwound" not in r.proc.stderr and "unfinished" not in r.proc.stderr, r.proc.stderr


# -------------------------------------------------------------- pthread_exit

def test_pthread_exit(record):
    """threadexit.c: pthread_exit inside level2 (forced unwind through
    worker -> level1 -> level2, then the thread exits): the three frames never
    return and are closed at the thread's exit, flagged unfinished."""
    r = record("threadexit")
    assert_ok(r)
    m = re.search(r"^threadexit: pid=(\d+) worker_tid=(\d+)$", r.proc.stdout, re.M)
    assert m, r.describe()
    pid, wtid = int(m.group(1)), int(m.group(2))
    ev = xevents(r.trace)
    assert {e["pid"] for e in ev} == {pid}
    assert dict(counts(e for e in ev if e["tid"] == wtid)) == {"worker": 1, "level1": 1, "level2": 1}
    assert dict(counts(e for e in ev if e["tid"] == pid)) == {"main": 1, "after_join": 1}
    assert {e["tid"] for e in ev} == {pid, wtid}
    calls = assert_nesting(ev, root_depth=0)
    by = group(calls)
    (l1,), (l2,), (w,) = by["level1"], by["level2"], by["worker"]
    assert chain(l2) == ["worker", "level1", "level2"] and l2.depth == 2
    assert inside(l2, l1) and inside(l1, w)
    # The thread exited inside them.  (Whether "unwound" is also set -- the
    # forced unwind did skip them -- is left open.)
    for c in (w, l1, l2):
        assert "unfinished" in flags(c), c.ev
    (aj,), (mn,) = by["after_join"], by["main"]
    assert aj.parent is mn and aj.depth == 1
    assert not flags(aj) and not flags(mn), (aj.ev, mn.ev)
    assert aj.ts >= l2.end - 0.0025, "after_join runs after the worker was joined"


# ------------------------------------------------------------- deep recursion

def test_recursion_10000(record):
    """recurse 10000: far past the kernel's 64 pending return probes per
    thread.  Every entry is recorded; the frames without a return probe are
    closed when a later return proves them gone: all 10000 down calls are
    properly nested, one inside the previous, and none is left unfinished."""
    d = 10000
    r = record("recurse", str(d), timeout=120)
    assert_ok(r)
    assert "recurse: depth=%d sum=%d" % (d, d * (d - 1) // 2) in r.proc.stdout, r.describe()
    ev = xevents(r.trace)
    assert dict(counts(ev)) == {"main": 1, "down": d}
    assert not [e for e in ev if "unfinished" in e["args"]], "unfinished calls"
    assert not loss_events(r.trace)
    calls = assert_nesting(ev, root_depth=0)
    downs = sorted((c for c in calls if c.name == "down"), key=lambda c: c.depth)
    assert downs[0].parent is not None and downs[0].parent.name == "main"
    assert [c.depth for c in downs] == list(range(1, d + 1))
    for a, b in zip(downs, downs[1:]):
        assert b.parent is a, (a, b)
    assert not downs[-1].children


# ------------------------------------------------------------------ SIGKILL

def popen_bpfprof(args):
    return subprocess.Popen([str(BPFPROF)] + [str(a) for a in args], cwd=REPO,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0, start_new_session=True)


def finish(p, timeout=30):
    """communicate() with a deadline; kills the group and fails on timeout."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail("bpfprof still running after %ss\n%s" % (timeout, err.decode(errors="replace")))
    return out.decode(errors="replace"), err.decode(errors="replace")


def test_target_sigkill(tmp_path):
    """kill -9 of the traced command: bpfprof passes the status on (128 + 9),
    and writes a valid trace with main closed at its last time and flagged."""
    out = tmp_path / "trace.json"
    p = popen_bpfprof(["record", "-o", out, "--", prog_path("busy")])
    try:
        m, _ = read_until(p.stdout, r"^busy: pid=(\d+)$", 20, "the output of bpfprof record")
        busy = int(m.group(1))
        assert busy != p.pid
        # until it has ticked (a usleep per loop: a voluntary context switch each)
        with open("/proc/%d/status" % busy) as f:
            before = int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)$", f.read(), re.M).group(1))
        deadline = time.monotonic() + 30
        while True:
            with open("/proc/%d/status" % busy) as f:
                now = int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)$", f.read(), re.M).group(1))
            if now - before >= 2:
                break
            assert time.monotonic() < deadline, "busy made no progress in 30 s"
            time.sleep(0.02)
        os.kill(busy, signal.SIGKILL)
        _, err = finish(p)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    assert p.returncode == 137, "exit %s, want 137 (128 + SIGKILL)\n%s" % (p.returncode, err)
    assert out.exists(), err
    trace = load_trace(out)
    probs = format_problems(trace)
    assert not probs, "\n".join(probs[:30])
    ev = xevents(trace)
    c = counts(ev)
    assert set(c) <= {"main", "tick"}, dict(c)
    assert c["tick"] > 0 and c["main"] == 1, dict(c)
    assert {e["pid"] for e in ev} == {busy}
    (main,) = [e for e in ev if e["name"] == "main"]
    assert main["args"].get("unfinished") is True, main
    # only the call running at the kill (main, and maybe one tick) is unfinished
    ticks_unfinished = [e for e in ev if e["name"] == "tick" and e["args"].get("unfinished")]
    assert len(ticks_unfinished) <= 1, ticks_unfinished
    _, probs = nesting_problems(ev, root_depth=0)
    assert not probs, "\n".join(probs[:30])


# ----------------------------------------------------------------- overload

@pytest.fixture(scope="module")
def overload_run(tmp_path_factory):
    """spin calling small_push 2,000,000 times into a 4 KiB ring buffer: far
    more than the loader drains, so records are lost."""
    out = tmp_path_factory.mktemp("overload") / "trace.json"
    p = subprocess.run([str(BPFPROF), "record", "-o", str(out), "--buffer-size", "4k",
                        "-F", "small_push", "--", str(prog_path("spin")), "2000000",
                        "small_push"], cwd=REPO, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=180)
    trace = load_trace(out) if out.exists() else None
    return Run(p, out, trace)


N_SPIN = 2000000


def test_overload_lost_counted(overload_run):
    r = overload_run
    assert_ok(r)
    assert "spin: n=2000000 func=small_push" in r.proc.stdout, r.describe()
    probs = format_problems(r.trace)
    assert not probs, "trace format:\n  " + "\n  ".join(probs[:30])
    ev = xevents(r.trace)
    assert set(counts(ev)) == {"small_push"}
    calls = len(ev)
    lost = summary_number(r.proc.stderr, "lost")
    assert lost > 0, "a 4 KiB buffer cannot hold 4M records: want lost > 0\n" + r.proc.stderr
    assert 0 < calls < N_SPIN, calls
    assert summary_number(r.proc.stderr, "calls") == calls
    le = loss_events(r.trace)
    assert le, "no \"cat\":\"loss\" events in the trace"
    for e in le:
        assert e.get("ph") in ("i", "I") and isinstance(e.get("ts"), (int, float)), e
    # The loss events carry the per-CPU counts; together they are the summary's number.
    assert sum(e["args"]["count"] for e in le) == lost, (sum(e["args"]["count"] for e in le), lost)
    # Nothing silently dropped: every one of the 2 N call records (entry and
    # return) was either decoded into an X event or counted lost.  A complete
    # call used two records, a call flagged began_before_recording only its
    # return, an unfinished/unwound one only its entry.  The lost count may
    # also include a few process records (exec, exit).
    used = 0
    for e in ev:
        f = flags(e)
        used += 2 if not f else 1
    assert 2 * N_SPIN <= used + lost <= 2 * N_SPIN + 16, \
        "records accounted for: %d used + %d lost, want 2 * %d" % (used, lost, N_SPIN)


def test_overload_no_false_nesting(overload_run):
    """small_push is only ever called by main (untraced here), never by
    itself: whatever was lost, no small_push may be shown inside another."""
    r = overload_run
    assert r.trace is not None, r.describe()
    deep = [e for e in xevents(r.trace) if e["args"]["depth"] != 0]
    assert not deep, "%d small_push calls nested in small_push, e.g. %s" % (len(deep), deep[:3])


@pytest.fixture(scope="module")
def lossy_hottiny(tmp_path_factory):
    """hottiny's two threads, each coarse() calling tiny() 50,000 times, into
    a 4 KiB ring buffer: records are lost (nearly always; the checks below
    hold whether or not)."""
    out = tmp_path_factory.mktemp("lossy") / "trace.csv"
    p = subprocess.run([str(BPFPROF), "record", "-o", str(out), "--buffer-size", "4k", "--",
                        str(prog_path("hottiny")), "2", "50000", "2"], cwd=REPO,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    return Run(p, out, None)


def csv_calls(path):
    """The calls of a CSV export, by id: tid, begin, end, depth, parent id, flags."""
    import csv
    calls = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if not row["id"]:
                continue        # a loss marker
            b = int(row["start_ns"])
            calls[int(row["id"])] = dict(
                name=row["function"], tid=int(row["tid"]), b=b, e=b + int(row["duration_ns"]),
                depth=int(row["depth"]), parent=int(row["parent_id"] or 0),
                flags=set(filter(None, row["flags"].split("|"))))
    return calls


def test_lost_entry_invents_no_call(lossy_hottiny):
    """A return whose entry was lost begins at its thread's record before it
    (flagged entry_lost), not at its caller's start: otherwise one tiny()
    outlasts and overlaps thousands of its siblings.  So: no call overlaps a
    sibling (same thread, same caller), none lies outside its caller, and
    none is flagged began_before_recording (record started the program:
    nothing began before)."""
    r = lossy_hottiny
    assert r.rc == 0 and r.out.exists(), r.describe()
    assert "hottiny: coarse=4 tiny=200000 " in r.proc.stdout, r.describe()
    lost = summary_number(r.proc.stderr, "lost")
    calls = csv_calls(r.out)
    assert calls, r.describe()
    probs = []
    siblings = {}
    for c in calls.values():
        siblings.setdefault((c["tid"], c["parent"]), []).append(c)
        p = calls.get(c["parent"])
        if c["parent"] and p is None:
            probs.append("caller of %r not in the trace" % c)
        elif p and not (p["b"] <= c["b"] and c["e"] <= p["e"]):
            probs.append("%r lies outside its caller %r" % (c, p))
        if "began_before_recording" in c["flags"]:
            probs.append("%r began before the recording" % c)
    for cs in siblings.values():
        cs.sort(key=lambda c: (c["b"], c["e"]))
        probs += ["%r overlaps its sibling %r" % (a, b) for a, b in zip(cs, cs[1:])
                  if b["b"] < a["e"]]
    assert not probs, "%d lost records; %d problems:\n  %s" % (
        lost, len(probs), "\n  ".join(probs[:10]))
    if not lost:
        assert not [c for c in calls.values() if "entry_lost" in c["flags"]]


# ------------------------------------------------- two recordings at once

CALLTREE_COUNTS = {"main": 1, "run": 1, "parse": 3, "compute": 5, "leaf_add": 20,
                   "leaf_mul": 10, "fib": 177, "slow_io": 1}


def test_two_recordings_at_once(tmp_path):
    """Two bpfprof instances on the same binary at the same time: the probes
    are shared by the kernel, but each instance records only its own
    process, completely."""
    outs = [tmp_path / ("t%d.json" % i) for i in range(2)]
    ps = [subprocess.Popen([str(BPFPROF), "record", "-o", str(o), "--", str(prog_path("calltree"))],
                           cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, start_new_session=True) for o in outs]
    results = []
    try:
        for p in ps:
            results.append(finish(p, timeout=60))
    finally:
        for p in ps:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
    pids = []
    for p, o, (out, err) in zip(ps, outs, results):
        assert p.returncode == 0, "exit %s\n%s" % (p.returncode, err)
        trace = load_trace(o)
        probs = format_problems(trace)
        assert not probs, "\n".join(probs[:30])
        ev = xevents(trace)
        assert dict(counts(ev)) == CALLTREE_COUNTS, (o.name, dict(counts(ev)))
        assert len({e["pid"] for e in ev}) == 1, "%s holds calls of several processes" % o.name
        assert not [e for e in ev if flags(e)], "flagged calls in %s" % o.name
        assert_nesting(ev, root_depth=0)
        pids.append(ev[0]["pid"])
    assert pids[0] != pids[1], "both traces show the same process %d" % pids[0]
