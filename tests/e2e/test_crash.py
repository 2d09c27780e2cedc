# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A recording whose bpfprof is SIGKILLed (as the OOM killer does).

The archive is written a complete events block at a time into
OUT.tmp.PID.XXXXXX (renamed OUT at the end), so what was recorded up to the
last complete block survives, and `report --partial` / `convert --partial`
read it.  tests/progs/rounds.c: main -> round_of(r) (ROUNDS) -> leaf (LEAVES
each), then it waits on stdin with every call but main's returned.
"""

import glob
import os
import signal
import subprocess
import time

from conftest import BPFPROF, REPO, load_trace, prog_path, read_until
from trace_util import format_problems, nesting_problems, xevents

ROUNDS, LEAVES = 200, 1000


def run(*args, timeout=60):
    return subprocess.run([str(BPFPROF)] + [str(a) for a in args], cwd=REPO, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def rounds_of(trace):
    calls, probs = nesting_problems(xevents(trace), root_depth=None)
    assert not probs, "\n".join(probs[:30])
    return calls


def test_killed_recording_is_readable(tmp_path):
    out = tmp_path / "rec.bpfprof"
    b = subprocess.Popen([str(BPFPROF), "record", "-o", str(out), "-F", "round_of", "-F", "leaf",
                          "--", str(prog_path("rounds")), str(ROUNDS), str(LEAVES)], cwd=REPO,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         bufsize=0, start_new_session=True)
    part = None
    try:
        read_until(b.stdout, "rounds: ready", 60)
        # Every call but main's has returned: bpfprof writes the complete blocks
        # (~2 MB of events, 256 KiB a block) as it decodes them.  Wait for one.
        deadline = time.monotonic() + 60
        while True:
            tmps = glob.glob(str(out) + ".tmp.%d.*" % b.pid)
            assert len(tmps) == 1, tmps
            p = run("convert", "--partial", "-q", "-o", tmp_path / "probe.json", tmps[0])
            if p.returncode == 0 and any(e["name"] == "round_of" for e in
                                         xevents(load_trace(tmp_path / "probe.json"))):
                break
            assert time.monotonic() < deadline, p.stderr
            time.sleep(0.2)
        os.kill(b.pid, signal.SIGKILL)
        # a killed process's links go at its exit, each after the uprobes'
        # grace period: tens of seconds on a loaded machine
        b.wait(timeout=180)
        part = tmps[0]
        # the program is not harmed: it goes on when told to
        b.stdin.write(b"go\n")
        b.stdin.close()
        read_until(b.stdout, "rounds: done", 30)
    finally:
        if b.poll() is None:
            os.killpg(b.pid, signal.SIGKILL)
            b.wait()
    assert not out.exists(), "a killed recording must not look finished"

    # Without --partial: the one-line truncation error, which names --partial.
    p = run("report", part)
    assert p.returncode != 0 and "truncated archive" in p.stderr and "--partial" in p.stderr

    # report --partial: the calls of the complete blocks, and a warning saying so.
    p = run("report", "--partial", "--no-tree", "--format", "csv", part)
    assert p.returncode == 0, p.stderr
    assert "unfinished recording" in p.stderr, p.stderr
    rows = {l.split(",")[0]: int(l.split(",")[2]) for l in p.stdout.splitlines()[1:]}
    assert set(rows) <= {"round_of", "leaf"} and "round_of" in rows, p.stdout

    # convert --partial: exact nesting; every round in it is whole.
    p = run("convert", "--partial", "-o", tmp_path / "part.json", part)
    assert p.returncode == 0, p.stderr
    trace = load_trace(tmp_path / "part.json")
    assert not format_problems(trace)
    calls = rounds_of(trace)
    rounds = [c for c in calls if c.name == "round_of"]
    leaves = [c for c in calls if c.name == "leaf"]
    assert 1 <= len(rounds) <= ROUNDS and not [c for c in calls if c.name == "main"]
    for r in rounds:
        assert r.parent is None and [k.name for k in r.children] == ["leaf"] * LEAVES, r
    # Calls are written as they end: after the last whole round, only leaves of
    # the round that was running when the block was cut.
    loose = [l for l in leaves if l.parent is None]
    assert len(loose) < LEAVES, len(loose)
    assert all(l.ts > max(r.end for r in rounds) for l in loose)
    assert len(leaves) == LEAVES * len(rounds) + len(loose)
    # report read the same calls
    assert rows == {"round_of": len(rounds), "leaf": len(leaves)}, rows


def test_stale_temporaries_are_cleaned(tmp_path):
    """Temporaries of dead bpfprofs go when the next output is opened there;
    the newest archive among them stays (the crash copy), a live owner's stays."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    live = os.getpid()
    out = tmp_path / "t.json"
    arch = b"\x89BPFPROF\x01\x00\x01\x00\x00\x00\x00\x00"
    files = {
        "t.json.tmp.%d.aaaaaa" % dead.pid: b"{\"traceEvents\":[",
        "t.json.tmp.%d.bbbbbb" % dead.pid: arch,
        "t.json.tmp.%d.cccccc" % dead.pid: arch,
        "t.json.tmp.%d.dddddd" % live: b"{",
        "other.tmp.%d.eeeeee" % dead.pid: b"{",
    }
    for i, (name, data) in enumerate(files.items()):
        (tmp_path / name).write_bytes(data)
        os.utime(tmp_path / name, (1000000 + i, 1000000 + i))
    p = run("record", "-q", "-o", out, "--", prog_path("rounds"), 1, 1)
    assert p.returncode == 0, p.stderr
    left = sorted(os.listdir(tmp_path))
    assert left == sorted(["t.json", "t.json.tmp.%d.cccccc" % dead.pid,
                           "t.json.tmp.%d.dddddd" % live, "other.tmp.%d.eeeeee" % dead.pid]), left
