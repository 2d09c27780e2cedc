# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Go programs: the Go runtime copies goroutine stacks as they grow and walks
them; a return address replaced by the kernel's return trampoline makes it
abort ("unexpected return pc").  bpfprof traces Go functions at entry only,
after the stack check (which runs twice when the stack grows)."""

import pytest

from conftest import Run, assert_ok, go_build, load_trace, run_bpfprof
from trace_util import counts, xevents


@pytest.fixture(scope="module")
def gocalls(tmp_path_factory):
    """tests/progs/gocalls.go built with the Debian Go toolchain."""
    d = tmp_path_factory.mktemp("go")
    return go_build(d, d / "gocalls")


def test_go_program_survives_and_counts_are_exact(gocalls, tmp_path):
    out = tmp_path / "trace.json"
    p = run_bpfprof(["record", "-o", out, "-F", "main.*", "--", gocalls])
    r = Run(p, out, load_trace(out) if out.exists() else None)
    assert_ok(r)
    # not killed by the runtime, and right
    assert r.proc.stdout.strip() == "gocalls: total=757650", r.describe()
    assert "is a Go program" in r.proc.stderr and "entry only" in r.proc.stderr
    ev = xevents(r.trace)
    c = counts(ev)
    # exact although the stacks grew: one probe hit per call
    assert c["main.round"] == 150 and c["main.deep"] == 15150 and c["main.leaf"] == 150, dict(c)
    assert c["main.main"] == 1
    assert all(float(e["dur"]) == 0 for e in ev)


def test_go_list_shows_probe_after_stack_check(gocalls):
    p = run_bpfprof(["list", gocalls, "main.deep"])
    assert p.returncode == 0, p.stderr
    line = [l for l in p.stdout.splitlines() if l.endswith(" main.deep")]
    assert line and "gocheck+" in line[0], p.stdout
