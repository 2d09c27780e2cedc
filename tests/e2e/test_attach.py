# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""`bpfprof attach --pid PID` end to end, on tests/progs/busy (see the facts
at the top of busy.c: prints "busy: pid=PID", then calls tick() about 1000
times a second from main until killed).

attach ends at --duration, on SIGINT/SIGTERM, or when every traced process
has exited; it must never kill or stop its target.
"""

import os
import re
import signal
import subprocess
import time
import uuid

import pytest

from conftest import (BPFPROF, REPO, debian_python, load_trace, proc_stat, prog_path,
                      read_until)
from trace_util import (counts, format_problems, nesting_problems, process_names, thread_names,
                        xevents)


def alive(pid):
    """True when `pid` exists and is neither a zombie nor stopped."""
    try:
        state = proc_stat(pid)[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X", "T", "t")


@pytest.fixture
def target():
    """target(name="busy", seconds=0): starts tests/progs/NAME (busy or
    throwloop: until killed, or for `seconds`), returns its Popen once it has
    printed "NAME: pid=PID".  All are killed at teardown (stopped ones too)."""
    started = []

    def _start(name="busy", seconds=0):
        p = subprocess.Popen([str(prog_path(name)), str(seconds),
                              "bpfprof-e2e-%s" % uuid.uuid4().hex],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, bufsize=0, start_new_session=True)
        started.append(p)
        m, _ = read_until(p.stdout, r"^%s: pid=(\d+)$" % name, 20, name + "'s stdout")
        assert int(m.group(1)) == p.pid
        return p

    yield _start
    for p in started:
        if p.poll() is None:
            p.kill()
        p.wait()
        p.stdout.close()


@pytest.fixture
def busy(target):
    """busy(seconds=0): tests/progs/busy, see target."""
    return lambda seconds=0: target("busy", seconds)


def ctx_switches(pid):
    with open("/proc/%d/status" % pid) as f:
        m = re.search(r"^voluntary_ctxt_switches:\s+(\d+)$", f.read(), re.M)
    return int(m.group(1))


def wait_ticks(pid, n=2):
    """Until busy `pid` went through its loop (usleep: a voluntary context
    switch each) n more times: then it has ticked since, however busy the
    machine is."""
    before = ctx_switches(pid)
    deadline = time.monotonic() + 30
    while ctx_switches(pid) - before < n:
        assert time.monotonic() < deadline, "pid %d made no progress in 30 s" % pid
        time.sleep(0.02)


def assert_keeps_running(p, name):
    """p runs on after the attach: not exited, not left stopped, and still
    making progress (it sleeps 1 ms per loop: a voluntary context switch
    per loop; 20 more of them, however long a busy machine takes).  A
    thread held for the exception unwinder as bpfprof ended is let go by
    the keeper, which outlives bpfprof for that: a stop (t) seen at
    bpfprof's exit, gone within 100 ms, 1 run in 30-40 beside a CPU hog;
    left stopped is 5 s and more."""
    assert p.poll() is None, "%s exited (%s) during or after the attach" % (name, p.returncode)
    deadline = time.monotonic() + 5
    while not alive(p.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive(p.pid), "%s is stopped after the attach" % name
    before = after = ctx_switches(p.pid)
    deadline = time.monotonic() + 30
    while after - before < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
        after = ctx_switches(p.pid)
    assert alive(p.pid), "%s is stopped after the attach" % name
    assert after - before >= 20, "%s made no progress after the attach (%d -> %d context " \
        "switches in 30 s)" % (name, before, after)


def popen_attach(args):
    return subprocess.Popen([str(BPFPROF), "attach", "--max-overhead", "off"] + [str(a) for a in args], cwd=REPO,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0, start_new_session=True)


def finish(p, timeout, already=b"", targets=()):
    """Waits for bpfprof; returns (stdout, stderr) as text.  Fails (after
    killing it, and first the `targets` Popens, which may be what it waits
    for) if it is still running after `timeout` s."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for t in targets:
            if t.poll() is None:
                t.kill()
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail("bpfprof attach still running after %ss\n%s"
                    % (timeout, (already + err).decode(errors="replace")))
    return out.decode(errors="replace"), (already + err).decode(errors="replace")


def run_attach(args, timeout=60, targets=()):
    p = popen_attach(args)
    out, err = finish(p, timeout, targets=targets)
    return p.returncode, out, err


def valid_trace(path, err=""):
    assert path.exists(), "no trace written at %s\n%s" % (path, err)
    trace = load_trace(path)
    probs = format_problems(trace)
    assert not probs, "trace format:\n  " + "\n  ".join(probs[:30])
    return trace


def check_ticks(trace, pid):
    """The calls of one busy process seen from outside: only tick (main began
    before the attach and is still running), all complete, except that the
    first may have begun before the attach and the last may still have been
    running at the end."""
    ev = sorted((e for e in xevents(trace) if e["pid"] == pid), key=lambda e: e["ts"])
    c = counts(ev)
    assert set(c) == {"tick"}, dict(c)
    # how many depends on how much CPU busy got meanwhile: some
    assert c["tick"] >= 1, "no tick traced"
    assert {e["tid"] for e in ev} == {pid}, "busy is single-threaded"
    for i, e in enumerate(ev):
        a = e["args"]
        allowed = set()
        if i == 0:
            allowed.add("began_before_recording")
        if i == len(ev) - 1:
            allowed.add("unfinished")
        got = {k for k in ("unfinished", "began_before_recording", "unwound") if a.get(k)}
        assert got <= allowed, "tick #%d of %d flagged %s: %s" % (i, len(ev), got, e)
        assert a["depth"] == 0, e
    _, probs = nesting_problems(ev, root_depth=0)
    assert not probs, "\n".join(probs[:30])
    return ev


# ------------------------------------------------------------ --duration

def test_attach_duration(busy, tmp_path):
    p = busy()
    out = tmp_path / "trace.json"
    t0 = time.monotonic()
    rc, _, err = run_attach(["--pid", p.pid, "-d", "1s", "-o", out])
    took = time.monotonic() - t0
    assert rc == 0, "exit %s\n%s" % (rc, err)
    assert took >= 1.0, "attach -d 1s took %.2f s" % took   # (a hang: run_attach's timeout)
    trace = valid_trace(out, err)
    ev = check_ticks(trace, p.pid)
    assert {e["pid"] for e in xevents(trace)} == {p.pid}
    # the ticks span (most of) the second
    assert ev[-1]["ts"] - ev[0]["ts"] > 500000, (ev[0]["ts"], ev[-1]["ts"])
    m = re.search(r"^bpfprof: (\d+) calls recorded", err, re.M)
    assert m, "no 'N calls recorded' summary\n" + err
    assert int(m.group(1)) == len(xevents(trace)), err
    assert alive(p.pid), "attach must leave its target running"


def test_attach_names(busy, tmp_path):
    """The process and thread names of an attached process are its comm, as
    for a recorded one (README: process_name / thread_name metadata)."""
    p = busy()
    with open("/proc/%d/comm" % p.pid) as f:
        comm = f.read().strip()
    assert comm == "busy"
    out = tmp_path / "trace.json"
    rc, _, err = run_attach(["--pid", p.pid, "-d", "300ms", "-o", out])
    assert rc == 0, err
    trace = valid_trace(out, err)
    assert process_names(trace).get(p.pid) == comm, process_names(trace)
    assert thread_names(trace).get(p.pid) == comm, thread_names(trace)


def test_attach_two_pids(busy, tmp_path):
    """--pid A,B traces both processes (same executable)."""
    a, b = busy(), busy()
    out = tmp_path / "trace.json"
    rc, _, err = run_attach(["--pid", "%d,%d" % (a.pid, b.pid), "-d", "1s", "-o", out])
    assert rc == 0, "exit %s\n%s" % (rc, err)
    trace = valid_trace(out, err)
    assert {e["pid"] for e in xevents(trace)} == {a.pid, b.pid}
    check_ticks(trace, a.pid)
    check_ticks(trace, b.pid)
    assert alive(a.pid) and alive(b.pid)


# -------------------------------------------------------------- errors

def test_attach_no_such_process(tmp_path):
    """A pid that does not exist: one error line saying so, non-zero exit,
    no output file.  The pid is that of a process we started and reaped."""
    q = subprocess.Popen(["true"])
    q.wait()
    pid = q.pid
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    out = tmp_path / "trace.json"
    rc, _, err = run_attach(["--pid", pid, "-o", out, "-d", "1s"])
    lines = [l for l in err.splitlines() if l.strip()]
    assert rc > 0, "exit %s\n%s" % (rc, err)
    assert len(lines) == 1, "want exactly one error line:\n" + err
    assert lines[0].startswith("bpfprof: ") and "no such process" in lines[0], err
    assert str(pid) in lines[0], "the error names the pid\n" + err
    assert not out.exists(), "a failed attach created %s" % out


@pytest.mark.parametrize("args", [[], ["-d", "1s"], ["-o", "x.json"]])
def test_attach_without_pid(tmp_path, args):
    """attach without --pid is a usage error: exit 2, a message, no file."""
    rc, _, err = run_attach(args + (["-o", tmp_path / "t.json"] if "-o" not in args else []))
    assert rc == 2, "exit %s, want 2\n%s" % (rc, err)
    assert "--pid" in err, err
    assert not (tmp_path / "t.json").exists() and not (REPO / "x.json").exists()


# -------------------------------------------------------- target exits

def attach_until(p, out, end, timeout, targets=()):
    """`attach --pid P -o out` to the Popen p without --duration; once it has
    traced, end(a) (a: its Popen) makes it stop, and finish() waits for it
    (`timeout`, `targets`: as finish).  Returns (exit status, stderr); kills
    it if it is left running."""
    a = popen_attach(["--pid", p.pid, "-o", out])
    try:
        _, early = read_until(a.stderr, r"^bpfprof: traced .*$", 30, "bpfprof's stderr")
        end(a)
        _, err = finish(a, timeout, early, targets=targets)
    finally:
        if a.poll() is None:
            os.killpg(a.pid, signal.SIGKILL)
            a.communicate()
    return a.returncode, err


def test_attach_target_killed(busy, tmp_path):
    """No --duration: when the only target dies (SIGKILL here), attach
    notices, writes the trace and exits 0 by itself."""
    p = busy()
    out = tmp_path / "trace.json"

    def kill_target(a):
        wait_ticks(p.pid)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()

    # it must notice by itself (no --duration): finish() fails if it does not
    rc, err = attach_until(p, out, kill_target, 60)
    assert rc == 0, "exit %s\n%s" % (rc, err)
    trace = valid_trace(out, err)
    check_ticks(trace, p.pid)


# --------------------------------------------------------------- Ctrl-C

def test_attach_sigint(busy, tmp_path):
    """SIGINT (Ctrl-C) during attach: the trace of what was captured is
    written, bpfprof exits 128 + SIGINT = 130 (as record does), and the
    target keeps running: attach must not kill or stop it."""
    p = busy()
    out = tmp_path / "trace.json"

    def interrupt(a):
        time.sleep(0.7)
        os.kill(a.pid, signal.SIGINT)

    rc, err = attach_until(p, out, interrupt, 30, targets=[p])
    assert rc == 130, "exit %s after SIGINT, want 130\n%s" % (rc, err)
    trace = valid_trace(out, err)
    check_ticks(trace, p.pid)
    assert_keeps_running(p, "busy")
    p.terminate()
    assert p.wait(timeout=10) == -signal.SIGTERM


# ------------------------------------------------ a target that throws

def test_attach_exceptions(target, tmp_path):
    """throwloop.c: attach to a C++ program that throws ~1000 exceptions a
    second through traced frames.  Each exception enters the unwinder while
    return probes are armed (the loader puts the real return addresses back
    for it): the target must catch every one (an uncaught one aborts it)
    during the attach, and must run on normally afterwards -- in particular
    it must not be left stopped by an exception that entered the unwinder
    while bpfprof was finishing."""
    p = target("throwloop")
    out = tmp_path / "trace.json"
    rc, _, err = run_attach(["--pid", p.pid, "-d", "1s", "-F", "catcher", "-F", "thrower",
                             "-o", out], targets=[p])
    assert rc == 0, "exit %s\n%s" % (rc, err)
    assert_keeps_running(p, "throwloop")
    trace = valid_trace(out, err)
    ev = [e for e in xevents(trace) if e["pid"] == p.pid]
    c = counts(ev)
    assert set(c) <= {"catcher", "thrower"}, dict(c)
    assert c["thrower"] > 100, dict(c)
    assert abs(c["catcher"] - c["thrower"]) <= 2, dict(c)
    # every thrower was left by its exception, never by a return
    late = [e for e in ev if e["name"] == "thrower" and not (
        e["args"].get("unwound") or e["args"].get("unfinished"))]
    assert not late, "thrower calls not flagged unwound: %s" % late[:3]
    calls, probs = nesting_problems(ev, root_depth=0)
    assert not probs, "\n".join(probs[:30])
    for c_ in calls:
        if c_.name == "thrower" and c_.parent is not None:
            assert c_.parent.name == "catcher", c_
    # keep throwing, untraced now, until killed: it never aborted
    time.sleep(0.5)
    assert p.poll() is None and alive(p.pid)


def test_attach_busy_threads_no_half_calls(tmp_path):
    """Attaching to Debian's python3.11 with 3 threads calling thousands of
    traced functions a second: the return link and the entry link go in
    while the threads are held still, so no call has a return without an
    entry (before: ~1,500 of them, closed as 'began before recording' calls
    overlapping each other), and the trace nests."""
    python = debian_python()
    script = tmp_path / "busy.py"
    script.write_text(
        "import threading, json, time, sys\n"
        "def w():\n"
        "    while True:\n"
        "        json.dumps({'a': [1, 'x']}); time.sleep(0.001)\n"
        "for _ in range(3): threading.Thread(target=w, daemon=True).start()\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n")
    target = subprocess.Popen([python, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert target.stdout.readline().strip() == "ready"
        out = tmp_path / "trace.json"
        p = subprocess.run([str(BPFPROF), "attach", "--max-overhead", "off", "--pid", str(target.pid), "-F", "*",
                            "--duration", "1", "-o", str(out)],
                           cwd=REPO, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        # the target was let go: still running, with its threads
        assert target.poll() is None
        with open("/proc/%d/status" % target.pid) as f:
            assert "Threads:\t4" in f.read()
    finally:
        target.kill()
        target.wait()
    trace = load_trace(out)
    assert not format_problems(trace)
    ev = xevents(trace)
    assert len({e["tid"] for e in ev}) >= 3, len(ev)
    assert not [e for e in ev if e["args"].get("began_before_recording")], \
        [e["name"] for e in ev if e["args"].get("began_before_recording")][:10]
    calls, probs = nesting_problems(ev, root_depth=None)
    assert not probs, probs[:5]
