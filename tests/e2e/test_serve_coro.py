# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""`bpfprof serve`'s coroutine metrics (user/web/metrics_coro.c), scraped by a
REAL Prometheus server (Debian `prometheus`).

tests/progs/py/asyncserve.py under Debian's python3.11 waits for "go", then
main() gathers N=7 invocations of child() (each awaits asyncio.sleep(0) K=3
times, so it is 4 slices but one invocation) and awaits failing(), which
raises through an await.  Prometheus must see exactly those invocations
(calls, not resumptions), the one that raised, exec <= wall, and --top
keeping the functions with the most exec time.  Nothing depends on timing.
"""

import json
import os
import re
import subprocess
import time

import pytest

from conftest import REPO
from test_serve import (http_get, procs, prom_query, read_line, start_prometheus,  # noqa: F401
                        start_serve, stop)

PYTHON = "/usr/bin/python3.11"
SCRIPT = REPO / "tests" / "progs" / "py" / "asyncserve.py"
MODULE = "asyncserve.py"
N = 7


@pytest.fixture(autouse=True)
def _python():
    if not os.access(PYTHON, os.X_OK):
        pytest.skip("%s missing (Debian python3.11)" % PYTHON)


def run_program(procs, *serve_opts):
    c = procs.start([PYTHON, SCRIPT], stdin=subprocess.PIPE, text=True)
    pid = int(read_line(c, r"^asyncserve: pid=(\d+)").split("=")[1])
    s, base = start_serve(procs, pid, *serve_opts)
    return c, pid, s, base


def go(c):
    c.stdin.write("go\n")
    c.stdin.flush()
    read_line(c, r"^asyncserve: done total=%d$" % sum(range(N)), timeout=120)


def test_prometheus_scrapes_coroutine_invocations(procs, tmp_path):
    c, pid, s, base = run_program(procs)
    prom = start_prometheus(procs, tmp_path, base[len("http://"):])
    go(c)

    def series(name):
        q = '%s{module="%s"}' % (name, MODULE)
        return {r["metric"]["function"]: r for r in prom_query(prom, q)}

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        calls = series("bpfprof_coroutine_calls_total")
        if calls.get("failing") and calls.get("main"):
            break
        time.sleep(0.5)
    got = {f: r["value"][1] for f, r in calls.items()}
    # the generator expression given to gather is a generator invocation too
    assert got == {"main": "1", "child": str(N), "failing": "1",
                   "main.<locals>.<genexpr>": "1"}, got
    assert all(r["metric"]["pid"] == str(pid) and r["metric"]["job"] == "bpfprof"
               for r in calls.values())
    raised = {f: r["value"][1] for f, r in series("bpfprof_coroutine_raised_total").items()}
    assert raised == {"main": "0", "child": "0", "failing": "1",
                      "main.<locals>.<genexpr>": "0"}, raised
    ex = {f: float(r["value"][1]) for f, r in series("bpfprof_coroutine_exec_seconds_total").items()}
    wall = {f: float(r["value"][1]) for f, r in series("bpfprof_coroutine_wall_seconds_total").items()}
    mx = {f: float(r["value"][1]) for f, r in series("bpfprof_coroutine_max_exec_seconds").items()}
    mw = {f: float(r["value"][1]) for f, r in series("bpfprof_coroutine_max_wall_seconds").items()}
    for f in got:
        assert 0 < ex[f] <= wall[f] and 0 < mx[f] <= ex[f] and mx[f] <= mw[f] <= wall[f], f
    # the suspended time split: child and failing suspend only in sleep(0), a child
    # coroutine; main in the gather (a future) and in failing() (a child)
    ach = {f: float(r["value"][1])
           for f, r in series("bpfprof_coroutine_await_child_seconds_total").items()}
    aot = {f: float(r["value"][1])
           for f, r in series("bpfprof_coroutine_await_other_seconds_total").items()}
    for f in ("child", "failing"):
        assert ach[f] > 0 and aot[f] == 0, (f, ach, aot)
    assert ach["main"] > 0 and aot["main"] > 0, (ach, aot)
    for f in got:
        assert abs(ex[f] + ach[f] + aot[f] - wall[f]) < 1e-8, (f, ex, ach, aot, wall)
    # main ran while every child ran: its wall spans theirs
    assert mw["main"] >= mw["child"]
    st, _, body = http_get(prom + "/api/v1/targets", timeout=10)
    t = json.loads(body)["data"]["activeTargets"]
    assert t and t[0]["health"] == "up" and not t[0]["lastError"], t
    c.stdin.close()
    assert c.wait(timeout=30) == 0
    stop(s)


def test_coroutine_top_k_by_exec(procs):
    """--top 2: the two coroutine functions with the most exec time, in that order."""
    c, pid, s, base = run_program(procs, "--top", "2")
    go(c)
    deadline = time.monotonic() + 30
    while True:
        text = http_get(base + "/metrics")[2].decode()
        if len(re.findall(r"^bpfprof_coroutine_calls_total\{", text, re.M)) == 2:
            break
        assert time.monotonic() < deadline, text
        time.sleep(0.2)
    assert "# TYPE bpfprof_coroutine_exec_seconds_total counter" in text
    assert "# TYPE bpfprof_coroutine_max_wall_seconds gauge" in text
    assert "# TYPE bpfprof_coroutine_await_child_seconds_total counter" in text
    assert "# TYPE bpfprof_coroutine_await_other_seconds_total counter" in text
    rows = re.findall(r'^bpfprof_coroutine_exec_seconds_total\{function="([^"]*)",module="([^"]*)",'
                      r'pid="(\d+)"\} (\S+)$', text, re.M)
    assert len(rows) == 2, rows
    assert float(rows[0][3]) >= float(rows[1][3]) > 0, rows
    assert "\nbpfprof_coroutines_suspended " in text
    c.stdin.close()
    assert c.wait(timeout=30) == 0
    stop(s)
