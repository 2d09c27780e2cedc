# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The governor and the breakpoints of new processes (user/cost/governor_cold.c).

tests/progs/coldfan runs NCHILD children one after the other, each a new
image of the same file (exec of /proc/self/exe), calling child_main() once
and work() NWORK times; the file's 4096 functions cold_XYZ are never called.
Every child pays at its exec for the breakpoint of every function probed on
the file, called or not.  With --max-overhead, once a child has ended, the
functions no process called are dropped, named with that reason (a line on
stderr with their count and a few names, every name in the archive); the
called ones stay exact in every child.  No timing is asserted.
"""

import json
import re

from conftest import run_bpfprof

NCHILD, NWORK, NCOLD = 30, 200, 4096


def children(stdout):
    rows = {}
    for m in re.finditer(r"coldfan: child=(\d+) pid=(\d+) work=(\d+)", stdout):
        rows[int(m.group(1))] = int(m.group(3))
    assert rows == {i: NWORK for i in range(NCHILD)}, stdout
    assert "coldfan: children=%d failed=0" % NCHILD in stdout, stdout


def report(path):
    js = run_bpfprof(["report", "--format", "json", path])
    assert js.returncode == 0, js.stderr
    rep = json.loads(js.stdout)
    return rep, {f["name"]: f["calls"] for f in rep["functions"]}


def exact(calls):
    # every call of the called functions, in every child (none has more than NWORK)
    assert calls["work"] == NCHILD * NWORK, calls
    assert calls["child_main"] == NCHILD and calls["spawn"] == NCHILD, calls
    assert calls["main"] == NCHILD + 1, calls


def test_never_called_functions_go_once_a_process_ended(record):
    r = record("coldfan", str(NCHILD), str(NWORK), opts=["--max-overhead", "100"],
               out="c.bpfprof", timeout=600)
    assert r.rc == 0, r.describe()
    children(r.proc.stdout)
    err = r.proc.stderr
    m = re.search(r"no longer tracing (\d+) functions of coldfan never called in its first "
                  r"(\d+) process(?:es)?: their breakpoints cost ([\d.]+) ms per new process "
                  r"\(e\.g\. ((?:cold_[0-9a-f]{3}, ){2}cold_[0-9a-f]{3}), \.\.\.;", err)
    assert m, err[-3000:]
    # the parent and at least one child that ended; only groups (16 functions
    # of the file in a row) with no called function go whole: the four
    # called ones can keep at most 15 cold ones each with them
    ncold = int(m.group(1))
    assert NCOLD - 4 * 15 <= ncold <= NCOLD and int(m.group(2)) >= 2, m.group(0)
    # stderr: the count and three names, not thousands
    assert len(re.findall(r"cold_[0-9a-f]{3}", err)) < 20, err[-3000:]
    rep, calls = report(r.out)
    exact(calls)
    dropped = rep["dropped"]
    names = [d["name"] for d in dropped]
    assert len(names) == len(set(names)) == ncold, names[:10]
    assert all(re.fullmatch(r"cold_[0-9a-f]{3}", n) for n in names), \
        [n for n in names if not n.startswith("cold_")]
    for d in dropped:
        assert d["module"] == "coldfan" and d["reason"] == "never called", d
        assert d["calls"] == 0 and d["processes"] == int(m.group(2)), d
    # the report: a line for the module, not a row per function
    pr = run_bpfprof(["report", r.out])
    assert pr.returncode == 0, pr.stderr
    assert re.search(r"%d functions of coldfan never called in its first %s processes: their "
                     r"breakpoints cost [\d.]+ ms per new process" % (ncold, m.group(2)),
                     pr.stdout), pr.stdout[-3000:]
    assert len(re.findall(r"cold_[0-9a-f]{3}", pr.stdout)) < 20, pr.stdout[-3000:]


def test_nothing_dropped_without_a_limit(record):
    r = record("coldfan", str(NCHILD), str(NWORK), out="x.bpfprof", timeout=600)
    assert r.rc == 0, r.describe()
    children(r.proc.stdout)
    assert "never called" not in r.proc.stderr, r.proc.stderr[-3000:]
    rep, calls = report(r.out)
    exact(calls)
    assert rep["dropped"] == [], rep["dropped"][:5]
