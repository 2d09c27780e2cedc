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


def test_go_report_sorted_by_calls(gocalls, tmp_path):
    """Entry-only functions all have a total of 0: the report sorts them by
    calls (most first), not by name (main.main, called once, came before
    main.round, called 150 times)."""
    out = tmp_path / "go.bpfprof"
    p = run_bpfprof(["record", "-q", "-o", out, "-F", "main.*", "--", gocalls])
    assert p.returncode == 0, p.stderr
    p = run_bpfprof(["report", "--format", "csv", out])
    assert p.returncode == 0, p.stderr
    import csv
    import io
    rows = [r for r in csv.DictReader(io.StringIO(p.stdout))]
    names = [r["name"] for r in rows]
    calls = [int(r["calls"]) for r in rows]
    assert {"main.deep", "main.leaf", "main.round", "main.main"} <= set(names), names
    assert calls == sorted(calls, reverse=True), list(zip(names, calls))
    # equal calls: by name
    assert names.index("main.leaf") < names.index("main.round") < names.index("main.main"), names
