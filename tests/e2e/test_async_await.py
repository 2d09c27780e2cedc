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

import perfetto_util
from conftest import record_python, run_bpfprof
from test_view import need_browser, problems, view  # noqa: F401 (view: a fixture)

pytestmark = pytest.mark.usefixtures("need_debian_python")
N = 5
RECS = []	# the fixture's recording (its Chrome JSON and .pftrace)
# the script's coroutines: how many spans, and which awaits they make (by construction)
SPANS = {"main": 1, "top": 1, "mid": N, "leaf": N}
ONLY_CHILD, ONLY_OTHER = ("top", "mid"), ("leaf",)


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    r = record_python(tmp_path_factory, "asyncawait.py", "-q", pftrace=True)
    assert "total %d" % sum(range(N)) in r.stdout, r.stdout
    RECS.append(r)
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


def check_span_split(spans, ns):
    """spans: {function: [args of each span]}; ns(args, key) its figure in ns."""
    assert {f: len(v) for f, v in spans.items()} == SPANS, spans
    for f, ss in spans.items():
        for a in ss:
            exec_, wall = ns(a, "exec"), ns(a, "wall")
            child, other = ns(a, "await_child"), ns(a, "await_other")
            assert exec_ <= wall and exec_ + child + other == wall, (f, a)
            if f in ONLY_CHILD:
                assert other == 0 and child > 0, (f, a)
            if f in ONLY_OTHER:
                assert child == 0 and other > 0, (f, a)
    # main: sleep(0) N times (a child), then the task (not a coroutine)
    assert ns(spans["main"][0], "await_child") > 0 and ns(spans["main"][0], "await_other") > 0


def test_chrome_span_args(rows):
    """Chrome JSON: each span's end ("e", args.span) has its split in us, exact to the ns."""
    ev = RECS[0].trace["traceEvents"]
    spans = {}
    for e in ev:
        if (e.get("cat") == "coroutine" and e["ph"] == "e" and e["args"].get("span")
                and e["name"] in SPANS):
            spans.setdefault(e["name"], []).append(e["args"])
    check_span_split(spans, lambda a, k: round(a[k + "_us"] * 1000))


def test_perfetto_span_args(rows):
    """Perfetto: each coroutine span of a task carries its split as annotations, in ns."""
    ev = perfetto_util.read(str(RECS[0].pf))["traceEvents"]
    spans = {}
    for e in ev:
        if e["ph"] == "X" and e.get("cat") == "coroutine" and e["name"] in SPANS:
            spans.setdefault(e["name"], []).append(e["args"])
    check_span_split(spans, lambda a, k: a[k + "_ns"])


@pytest.fixture(scope="module")
def diffed(rows, tmp_path_factory):
    """`bpfprof diff` of the fixture's recording (base) against a second run (new)."""
    _, base = rows
    r = record_python(tmp_path_factory, "asyncawait.py", "-q")
    assert "total %d" % sum(range(N)) in r.stdout, r.stdout
    return base, r.arch


def test_diff_json_split(diffed):
    base, new = diffed
    p = run_bpfprof(["diff", "--format", "json", base, new])
    assert p.returncode == 0, p.stderr
    got = {c["function"]: c for c in json.loads(p.stdout)["coroutines"]
           if c["module"] == "asyncawait.py"}
    assert set(got) == set(SPANS), sorted(got)
    for f, c in got.items():
        for side in ("base", "new"):
            x = c[side]
            assert x["calls"] == SPANS[f] and x["open"] == 0, (f, x)
            assert x["exec_ns"] + x["await_child_ns"] + x["await_other_ns"] == x["wall_ns"], (f, x)
            if f in ONLY_CHILD:
                assert x["await_other_ns"] == 0 and x["await_child_ns"] > 0, (f, x)
            if f in ONLY_OTHER:
                assert x["await_child_ns"] == 0 and x["await_other_ns"] > 0, (f, x)
        # a ratio of nothing is none; of something on both sides, a number
        none = "await_other" if f in ONLY_CHILD else "await_child" if f in ONLY_OTHER else None
        for k in ("await_child", "await_other"):
            r = c[k + "_per_call_ratio"]
            assert (r is None) if k == none else (r > 0), (f, k, c)


def test_diff_pretty_columns(diffed):
    base, new = diffed
    p = run_bpfprof(["diff", "--top", "100000", base, new])
    assert p.returncode == 0, p.stderr
    table = p.stdout.split("Coroutines and generators")
    assert len(table) == 2, p.stdout
    lines = table[1].splitlines()
    assert "await child per inv." in lines[1] and "await other per inv." in lines[1], lines[:3]
    assert lines[2].split() == (["base", "new"] + ["base", "new", "ratio"] * 4
                                + ["function"]), lines[2]
    d = r"\S+ \S+"	# a duration: "1.23 us"
    trip = r"%s\s+%s\s+\S+" % (d, d)
    # the last two groups: await child, await other (none on both sides, no ratio)
    for f in ONLY_CHILD:
        assert re.search(r"\s%s\s+0 ns\s+0 ns\s+-\s+%s  \[asyncawait\.py\]$" % (trip, f),
                         p.stdout, re.M), f
    for f in ONLY_OTHER:
        assert re.search(r"\s0 ns\s+0 ns\s+-\s+%s\s+%s  \[asyncawait\.py\]$" % (trip, f),
                         p.stdout, re.M), f


def test_view_coroutine_split(rows, view):
    """`bpfprof view`: the Coroutines tab's await child / await other columns."""
    need_browser()
    import cdp

    got, arch = rows
    v = view(arch)
    with cdp.Browser() as b:
        b.navigate(v.url)
        assert b.wait_for("document.body && document.body.dataset.ready", timeout=30) == "1", \
            "\n".join(problems(b))
        head = b.evaluate("[...document.querySelectorAll('#ctable thead th')]"
                          ".map(c => c.textContent)")
        rows_ = b.evaluate("[...document.querySelectorAll('#ctable tbody tr')]"
                           ".map(r => [...r.cells].map(c => c.textContent))")
        assert not problems(b), problems(b)
    col = {h: i for i, h in enumerate(head)}
    assert "await child" in col and "await other" in col, head
    cells = {r[col["function"]]: r for r in rows_ if r[col["module"]] == "asyncawait.py"}
    assert set(cells) == set(SPANS), sorted(cells)
    for f in ONLY_CHILD:
        assert cells[f][col["await other"]] == "0 ns" != cells[f][col["await child"]], cells[f]
    for f in ONLY_OTHER:
        assert cells[f][col["await child"]] == "0 ns" != cells[f][col["await other"]], cells[f]
