# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""exec: the new image of a traced process is traced with the same patterns,
from its first instruction (the process is held at exec until probes are in)."""

import os
import signal
import stat
import subprocess

import trace_util
from conftest import (bpfprof_popen, kill_bpfprof_during_a_hold, kill_group, proc_stat,
                      prog_path, read_until)

CALLTREE = {"main": 1, "run": 1, "parse": 3, "compute": 5, "leaf_add": 20,
            "leaf_mul": 10, "fib": 177, "slow_io": 1}


def test_exec_follows_new_image(record):
    r = record(str(prog_path("execer")), str(prog_path("calltree")))
    assert r.rc == 0, r.describe()
    xs = trace_util.xevents(r.trace)
    pids = {e["pid"] for e in xs}
    assert len(pids) == 1, pids   # exec keeps the pid
    before = [e for e in xs if e["name"] == "before_exec"]
    assert len(before) == 1 and before[0]["args"].get("unfinished"), before
    # calltree's image: every call, complete, starting after the exec
    ct = [e for e in xs if e["args"].get("module") == "calltree"]
    counts = trace_util.counts(ct)
    assert counts == CALLTREE, counts
    assert not any(e["args"].get("unfinished") for e in ct)
    assert min(e["ts"] for e in ct) >= before[0]["ts"] + before[0]["dur"] - 0.001


def test_script_traces_programs_it_runs(record, tmp_path):
    script = tmp_path / "run.sh"
    # exitcode first: the script's status is its last command's
    script.write_text("#!/bin/sh\n%s\n%s\n" % (prog_path("exitcode"), prog_path("calltree")))
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    r = record(str(script))
    assert r.rc == 0, r.describe()
    xs = trace_util.xevents(r.trace)
    ct = [e for e in xs if e["args"].get("module") == "calltree"]
    assert trace_util.counts(ct) == CALLTREE
    ex = [e for e in xs if e["args"].get("module") == "exitcode"]
    assert trace_util.counts(ex) == {"main": 1, "f": 1}, trace_util.counts(ex)
    # two processes forked by the shell, each with its own pid
    assert len({e["pid"] for e in ct}) == 1 and len({e["pid"] for e in ex}) == 1
    assert {e["pid"] for e in ct} != {e["pid"] for e in ex}


def _launched(pid):
    """The command bpfprof launched: its child that is not one of its own
    helpers (bpfprof-fds, bpfprof-guard, ...)."""
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        kids = [int(k) for k in f.read().split()]
    ours = []
    for k in kids:
        with open("/proc/%d/comm" % k) as f:
            if not f.read().startswith("bpfprof"):
                ours.append(k)
    assert len(ours) == 1, (kids, ours)
    return ours[0]


def _stopped_children(ppid):
    """Pids of ppid's children in a stop (state T)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            fields = proc_stat(d)
        except OSError:
            continue
        if fields[0] == "T" and int(fields[1]) == ppid:
            out.append(int(d))
    return out


def test_bpfprof_killed_while_a_process_waits_at_exec(tmp_path):
    """A process stopped at its exec for its new image's probes, and bpfprof
    killed (SIGKILL) before it lets it go: bpfprof is itself stopped first,
    so that the exec stop is certain to be pending at the kill.  The process
    is continued all the same (bpfprof's guard), and the script finishes.
    The execs begin only once bpfprof is stopped (the go file): a slow test
    could otherwise read "ready" after the script had run them all."""
    go = tmp_path / "go"
    loop = ("echo ready; while [ ! -e %s ]; do sleep 0.01; done; "
            "for i in 1 2 3 4 5 6 7 8; do %s; done; echo finished" % (go, prog_path("exitcode")))
    b = bpfprof_popen(["record", "-o", str(tmp_path / "t.json"), "--", "/bin/sh", "-c", loop],
                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        read_until(b.stdout, r"^ready$", 60, "the script's stdout")
        sh = _launched(b.pid)
        os.kill(b.pid, signal.SIGSTOP)
        go.write_text("")
        kill_bpfprof_during_a_hold(b, lambda: _stopped_children(sh),
                                   "no child of the script, at its exec,")
        read_until(b.stdout, r"^finished$", 60, "the script's stdout")
    finally:
        kill_group(b)   # the script too, if the test failed


def test_bpfprof_killed_while_its_probes_cannot_go(tmp_path):
    """The same, while a traced process keeps a return probe pending and
    calls on (busy: main never returns, tick every millisecond): the killed
    bpfprof's links, released in its exit, wait for that process to stop
    (the kernel's return probes share one grace period).  The process held
    at its exec is continued all the same, and so are the script's later
    execs (stopped by the links still there), while bpfprof is still dying:
    the script finishes before busy is ended."""
    go = tmp_path / "go"
    # exitcode, a new image, is first exec'd once bpfprof is stopped: certain to be held
    loop = ("%s 0 exec-kill & while [ ! -e %s ]; do sleep 0.01; done; "
            "for i in $(seq 30); do %s; done; echo finished"
            % (prog_path("busy"), go, prog_path("exitcode")))
    b = bpfprof_popen(["record", "-o", str(tmp_path / "t.json"), "--", "/bin/sh", "-c", loop],
                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    busy = None
    try:
        # busy runs traced (it printed from main): main's return probe is pending
        m, _ = read_until(b.stdout, r"^busy: pid=(\d+)$", 60, "busy's stdout")
        busy = int(m.group(1))
        sh = _launched(b.pid)
        os.kill(b.pid, signal.SIGSTOP)
        go.write_text("")
        kill_bpfprof_during_a_hold(b, lambda: [p for p in _stopped_children(sh) if p != busy],
                                   "no child of the script, at its exec,", wait=False)
        read_until(b.stdout, r"^finished$", 60, "the script's stdout")
    finally:
        if busy:
            try:
                os.kill(busy, signal.SIGKILL)
            except ProcessLookupError:
                pass
        kill_group(b)   # the script too, if the test failed
