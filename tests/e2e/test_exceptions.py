# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""C++ exceptions in multi-threaded programs, and a bpfprof that dies.

tests/progs/throwthreads.cc documents the facts checked here: THREADS
std::threads each call outer(t, i) ITERS times, and every call throws from
inner through middle* into outer's catch (plus, in `nested` mode, a
std::logic_error caught inside middle_nested; in `rethrow` mode, middle
rethrows with `throw;`).  The program prints a checksum of every value it
caught: traced, it must print the same checksum as untraced -- the tracer
must never change what the program computes, and an exception that meets a
return trampoline ends the program in std::terminate.
"""

import os
import re
import select
import signal
import subprocess
import time

import pytest

from conftest import BPFPROF, REPO, load_trace, prog_path, read_until
from trace_util import counts, format_problems, nesting_problems, xevents

FUNCS = ["-F", "outer*", "-F", "middle*", "-F", "inner*"]
THREADS = 4
ITERS = 1000
RESULT = re.compile(r"^throwthreads: caught=(\d+) checksum=([0-9a-f]+)$", re.M)


def untraced(*args):
    p = subprocess.run([str(prog_path("throwthreads"))] + [str(a) for a in args],
                       input="go\n", capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    m = RESULT.search(p.stdout)
    assert m, p.stdout
    return m.group(0)


def result_line(out):
    m = RESULT.search(out)
    return m.group(0) if m else None


MIDDLE = {"plain": "middle", "rethrow": "middle_rethrow", "nested": "middle_nested"}


def check_calls(trace, pid, mode, per_thread):
    """Exact counts per thread, and every call nested where the program puts it."""
    ev = [e for e in xevents(trace) if e["pid"] == pid]
    tids = {e["tid"] for e in ev}
    assert len(tids) == THREADS, "threads seen: %s" % sorted(tids)
    want = {"outer": per_thread, MIDDLE[mode]: per_thread, "inner": per_thread}
    if mode == "nested":
        want["inner_nested"] = per_thread
    for tid in tids:
        c = counts(e for e in ev if e["tid"] == tid)
        c.pop("outer_loop", None)
        assert dict(c) == want, "tid %d: %s, want %s" % (tid, dict(c), want)
    calls, probs = nesting_problems(ev, root_depth=None)
    assert not probs, "\n".join(probs[:30])
    for c in calls:
        parent = c.parent.name if c.parent else None
        if c.name in ("middle", "middle_rethrow", "middle_nested"):
            assert parent == "outer", c
        elif c.name == "inner":
            assert parent == MIDDLE[mode], c
        elif c.name == "inner_nested":
            assert parent == "middle_nested", c
        # left by their exception, never by a return
        if c.name in ("inner", "inner_nested", MIDDLE[mode]):
            assert c.ev["args"].get("unwound") or c.ev["args"].get("unfinished"), c.ev


@pytest.mark.parametrize("mode", ["plain", "rethrow", "nested"])
def test_threads_throwing(record, mode):
    """4 threads x 300 exceptions through traced frames: the program prints
    what it prints untraced (before: std::terminate, 5 runs out of 5)."""
    want = untraced(mode, THREADS, ITERS)
    r = record(prog_path("throwthreads"), mode, THREADS, ITERS, opts=FUNCS)
    assert r.rc == 0, "the traced program must survive its exceptions\n" + r.describe()
    assert result_line(r.proc.stdout) == want, r.describe()
    assert r.trace is not None, r.describe()
    pid = {e["pid"] for e in xevents(r.trace)}
    assert len(pid) == 1, pid
    check_calls(r.trace, pid.pop(), mode, ITERS)


def read_all(p, stream, timeout, what):
    """Everything left in the binary pipe until EOF, as text; p.wait()s after."""
    buf = b""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail("%s did not end within %ss; got %r" % (what, timeout, buf[-2000:]))
        r, _, _ = select.select([stream], [], [], left)
        if r:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
    p.wait(timeout=timeout)
    return buf.decode(errors="replace")


def test_attach_threads_throwing(tmp_path):
    """std::threads created before bpfprof attaches, throwing while it is
    attached: every thread is traced (the keeper takes them over from the
    attach hold), the program finishes with the untraced checksum, and the
    second half of the calls (all made after the attach, before the exit)
    is counted exactly."""
    iters = 4000
    want = untraced("plain", THREADS, iters, "gate")
    prog = subprocess.Popen([str(prog_path("throwthreads")), "plain", str(THREADS), str(iters),
                             "gate"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    out = tmp_path / "trace.json"
    a = None
    try:
        read_until(prog.stdout, r"^throwthreads: pid=\d+ ready$", 30, "the program's output")
        a = subprocess.Popen([str(BPFPROF), "attach", "--max-overhead", "off", "--pid", str(prog.pid), "-o", str(out)]
                             + FUNCS, cwd=REPO, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, bufsize=0,
                             start_new_session=True)
        read_until(a.stderr, r"^bpfprof: traced .*$", 30, "bpfprof's stderr")
        prog.stdin.write(b"go\n")
        prog.stdin.close()
        rest = read_all(prog, prog.stdout, 60, "the program")
        assert prog.returncode == 0, "exit %s" % prog.returncode
        assert result_line(rest) == want, rest
        # the target is gone: attach ends by itself
        _, err = a.communicate(timeout=60)
        assert a.returncode == 0, err.decode()
    finally:
        for p in (prog, a):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    trace = load_trace(out)
    assert not format_problems(trace)
    check_calls(trace, prog.pid, "plain", iters - iters // 2)


@pytest.mark.parametrize("mode", ["plain", "nested"])
def test_bpfprof_killed_mid_run(tmp_path, mode):
    """bpfprof is SIGKILLed while 4 threads throw through traced frames, and
    while each thread's outer_loop (entered before, traced) still has its
    return probe: the program goes on, and its last exception, which passes
    outer_loop's frame, is caught too -- it prints the untraced checksum and
    exits 0.  Nothing is left stopped (the keeper puts every return address
    back and lets every thread go)."""
    iters = 4000
    want = untraced(mode, THREADS, iters, "gate")
    out = tmp_path / "trace.json"
    b = subprocess.Popen([str(BPFPROF), "record", "-o", str(out)] + FUNCS +
                         ["--", str(prog_path("throwthreads")), mode, str(THREADS), str(iters),
                          "gate"], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, bufsize=0, start_new_session=True)
    try:
        read_until(b.stdout, r"^throwthreads: pid=\d+ ready$", 60, "the program's output")
        b.stdin.write(b"go\n")
        b.stdin.close()
        time.sleep(0.05)  # not needed for the assertions: the threads are throwing by now
        os.kill(b.pid, signal.SIGKILL)
        # the program still writes into the pipe bpfprof left: EOF once it exits
        rest = read_all(b, b.stdout, 60, "the program's output")
    finally:
        if b.poll() is None:
            os.killpg(b.pid, signal.SIGKILL)
            b.wait()
    assert b.returncode == -signal.SIGKILL
    assert result_line(rest) == want, rest
