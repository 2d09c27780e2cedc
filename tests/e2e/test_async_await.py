# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Per coroutine function, its suspended time split: awaiting its child
coroutines vs the rest (tests/progs/py/asyncawait.py).

A span's wall time is its slices (exec) and the gaps between them; a gap is
`await child` when the span suspended because a coroutine it awaited
directly suspended, else `await other` (a future, another task).  The
script's structure decides every gap: top and mid suspend only inside a
child's await (mid, leaf), leaf only on a future, asyncio's __sleep0 on a
bare yield, sleep only in __sleep0; main both in sleep(0) (a child) and on
the task it awaits last (not a coroutine, and not done yet).  The report's
numbers are exact (ns from the same clock): wall = exec + child + other
for every function.  No duration is asserted beyond > 0.
"""

import json
import re

import pytest

from conftest import record_python, run_bpfprof

pytestmark = pytest.mark.usefixtures("need_debian_python")
N = 5


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    r = record_python(tmp_path_factory, "asyncawait.py", "-q")
    assert "total %d" % sum(range(N)) in r.stdout, r.stdout
    p = run_bpfprof(["report", "--format", "json", r.arch])
    assert p.returncode == 0, p.stderr
    got = {}
    for c in json.loads(p.stdout)["coroutines"]:
        if c["module"] == "asyncawait.py" or (c["module"] == "tasks.py" and
                                              c["function"] in ("sleep", "__sleep0")):
            got[c["function"]] = c
    assert set(got) == {"main", "top", "mid", "leaf", "sleep", "__sleep0"}, sorted(got)
    return got, r.arch


def test_wall_is_exec_and_the_two_awaits(rows):
    got, _ = rows
    for f, c in got.items():
        assert c["open"] == 0 and c["raised"] == 0, c
        assert c["exec_ns"] + c["await_child_ns"] + c["await_other_ns"] == c["wall_ns"], c


def test_which_await(rows):
    got, _ = rows
    assert (got["top"]["calls"], got["top"]["slices"]) == (1, N + 1)
    assert (got["mid"]["calls"], got["leaf"]["calls"]) == (N, N)
    for f in ("top", "mid", "sleep"):		# suspended only inside a child's await
        assert got[f]["await_other_ns"] == 0 and got[f]["await_child_ns"] > 0, got[f]
    for f in ("leaf", "__sleep0"):		# on a future, on a bare yield
        assert got[f]["await_child_ns"] == 0 and got[f]["await_other_ns"] > 0, got[f]
    # sleep(0) N times (a child), then the task (not a coroutine)
    assert got["main"]["await_child_ns"] > 0 and got["main"]["await_other_ns"] > 0, got["main"]


def test_pretty_report_columns(rows):
    _, arch = rows
    p = run_bpfprof(["report", "--no-tree", arch])
    assert p.returncode == 0, p.stderr
    head = [ln for ln in p.stdout.splitlines() if ln.split()[:2] == ["calls", "slices"]]
    assert head and head[0].split()[-5:] == ["await", "child", "await", "other", "function"], head
    # the last duration before the function: await other, none for top, some for leaf
    assert re.search(r"\s0 ns\s+top$", p.stdout, re.M), p.stdout
    assert re.search(r"\s0 ns\s+\S+ \S+\s+leaf$", p.stdout, re.M), p.stdout
