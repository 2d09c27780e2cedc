# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Uprobe session links (docs/probe-cost.md): a process that is not traced
but runs a probed file has no return address taken over, where the pair of
entry and return links took one at every call.

tests/progs/stepper (see its facts) calls beat() once per byte of stdin and
says "beat N"; beat's first instruction is one the kernel emulates, so the
[uprobes] area (the return trampoline's page, also the single-step slots)
is mapped into a stepper only when a return probe took over a return
address there, and its loop calls nothing that someone else's probes on
the C library could hit.  Two steppers, one traced by `attach --pid`: the
traced one has the area (the control: this kernel maps it for a return
probe), the other has it only with the pair of links (BPFPROF_NO_SESSION=1).
"""

import os
import re
import signal
import subprocess

import pytest

from conftest import BPFPROF, REPO, load_trace, prog_path, read_until
from trace_util import counts, xevents


def stepper():
    p = subprocess.Popen([str(prog_path("stepper"))], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0,
                         start_new_session=True)
    m, _ = read_until(p.stdout, r"^stepper: pid=(\d+)$", 20, "stepper's stdout")
    assert int(m.group(1)) == p.pid
    return p


def step(p, n):
    """One beat() call in stepper p, its n-th: returns once it said so."""
    p.stdin.write(b"x")
    read_until(p.stdout, r"^beat %d$" % n, 30, "stepper %d's stdout" % p.pid)


def kernel_has_sessions():
    """The kernel's BTF names the session attach type (Linux 6.13+)."""
    try:
        with open("/sys/kernel/btf/vmlinux", "rb") as f:
            return b"BPF_TRACE_UPROBE_SESSION\0" in f.read()
    except OSError:
        return False


def session_env(session):
    """The environment for bpfprof with session links (skipped where the
    kernel has none) or with the pair (BPFPROF_NO_SESSION=1)."""
    if session and not kernel_has_sessions():
        pytest.skip("no uprobe session links in this kernel")
    env = dict(os.environ)
    env.pop("BPFPROF_NO_SESSION", None)
    if not session:
        env["BPFPROF_NO_SESSION"] = "1"
    return env


def has_uprobes_area(pid):
    with open("/proc/%d/maps" % pid) as f:
        return any(line.rstrip().endswith("[uprobes]") for line in f)


@pytest.mark.parametrize("session", [True, False], ids=["session", "pair"])
def test_untraced_process_of_a_probed_file(tmp_path, session):
    env = session_env(session)
    traced, other = stepper(), stepper()
    out = tmp_path / "t.json"
    a = subprocess.Popen([str(BPFPROF), "attach", "-v", "--max-overhead", "off", "--pid",
                          str(traced.pid), "-F", "beat", "-o", str(out)], cwd=REPO, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, bufsize=0, start_new_session=True)
    try:
        _, early = read_until(a.stderr, r"^bpfprof: traced .*$", 60, "bpfprof's stderr")
        early = early.decode(errors="replace")
        assert not has_uprobes_area(other.pid) and not has_uprobes_area(traced.pid)
        for n in (1, 2, 3):
            step(traced, n)
            step(other, n)
        # the control: a traced call's return probe maps the area here
        assert has_uprobes_area(traced.pid)
        # the fact: only the pair took over the untraced process's returns
        assert has_uprobes_area(other.pid) == (not session), early
        # -v says which kind of links traces the calls
        said = ("one uprobe session link per group" if session else
                "entry and return uprobe_multi links (BPFPROF_NO_SESSION)")
        assert said in early, early
        a.send_signal(signal.SIGINT)
        _, err = a.communicate(timeout=120)
        err = early + err.decode(errors="replace")
        assert a.returncode == 130, err  # ended by SIGINT, the trace written
        c = counts(xevents(load_trace(out)))
        assert c["beat"] == 3, (c, err)
    finally:
        if a.poll() is None:
            os.killpg(a.pid, signal.SIGKILL)
            a.communicate()
        for p in (traced, other):
            p.stdin.close()
            p.wait(timeout=30)
            p.stdout.close()


@pytest.mark.parametrize("session", [True, False], ids=["session", "pair"])
def test_calls_open_across_a_relink_keep_their_returns(tmp_path, session):
    """tests/progs/inflight (see its facts): tiny is dropped by --max-overhead
    while outer and main, in tiny's group, are open.  A session link's
    return is seen by that link alone, and it goes at the re-link: so the
    governor's groups are always an entry and a return link, whose return
    probe made anew sees the returns of calls entered before it.  Both end
    with their returns (never flagged unfinished), with session links on
    or off."""
    env = session_env(session)
    out = tmp_path / "t.json"
    p = subprocess.run([str(BPFPROF), "record", "-v", "--max-overhead", "100", "-o", str(out),
                        "--", str(prog_path("inflight")), "3000000"], cwd=REPO, env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "inflight: outer=1 tiny=3000000" in p.stdout, p.stdout
    m = re.search(r"governor: group \d+ re-linked: 1 dropped: tiny;.*$", p.stderr, re.M)
    assert m, p.stderr[-3000:]
    calls = [e for e in xevents(load_trace(out)) if e["name"] in ("outer", "main")]
    assert sorted(e["name"] for e in calls) == ["main", "outer"], calls
    for e in calls:
        flags = {k for k in ("unfinished", "unwound", "end_inferred") if e["args"].get(k)}
        assert not flags, (e, p.stderr[-3000:])
