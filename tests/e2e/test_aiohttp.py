# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A real async application from Debian: an aiohttp server (python3-aiohttp,
tests/progs/py/aioserver.py) on 127.0.0.1 under a bounded load, N GET
/hello from an untraced Python client in 4 threads
(tests/progs/py/aioclient.py).  The handler hello() awaits asyncio.sleep(0)
once: each request is one span of exactly two slices, so the handler's span
count is the number of requests served, in `record`/`report`, in the
Chrome trace and in `serve`'s /metrics.  No timing is asserted beyond
exec <= wall.
"""

import collections
import json
import os
import re
import subprocess
import time

import pytest

from conftest import REPO, run_bpfprof
from test_async_python import EPS_US, spans_of
from test_serve import http_get, procs, read_line, start_serve, stop  # noqa: F401 (fixture)
from trace_util import xevents

PYTHON = "/usr/bin/python3.11"
PY = REPO / "tests" / "progs" / "py"
N = 60


@pytest.fixture(autouse=True)
def _aiohttp():
    if not os.access(PYTHON, os.X_OK):
        pytest.skip("%s missing (Debian python3.11)" % PYTHON)
    if os.system("%s -c 'import aiohttp' 2>/dev/null" % PYTHON):
        pytest.skip("python3-aiohttp missing: run scripts/setup.sh --test")


def client(portfile):
    return subprocess.Popen([PYTHON, str(PY / "aioclient.py"), str(portfile), str(N)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def client_done(c):
    out, err = c.communicate(timeout=300)
    assert c.returncode == 0 and "aioclient: ok=%d " % N in out, (out, err)


def test_handler_span_per_request(tmp_path):
    arch, js, port = tmp_path / "a.bpfprof", tmp_path / "a.json", tmp_path / "port"
    c = client(port)
    try:
        r = run_bpfprof(["record", "-o", str(arch), "--", PYTHON, str(PY / "aioserver.py"),
                         str(N), str(port)])
    finally:
        if c.poll() is None and not port.exists():
            c.kill()
    client_done(c)
    assert r.returncode == 0, r.stderr
    assert "aioserver: served=%d" % N in r.stdout, r.stdout
    p = run_bpfprof(["report", "--format", "json", str(arch)])
    assert p.returncode == 0, p.stderr
    rows = {(w["function"], w["module"]): w for w in json.loads(p.stdout)["coroutines"]}
    hello = rows[("hello", "aioserver.py")]
    assert (hello["calls"], hello["slices"], hello["raised"], hello["open"], hello["kind"]) == \
        (N, 2 * N, 0, 0, "coroutine"), hello
    assert 0 < hello["max_exec_ns"] <= hello["exec_ns"] <= hello["wall_ns"], hello
    # aiohttp's own per-request coroutine (Debian's 3.8): one invocation per request too
    handle = rows[("RequestHandler._handle_request", "web_protocol.py")]
    assert (handle["calls"], handle["open"]) == (N, 0), handle

    assert run_bpfprof(["convert", "-o", str(js), str(arch)]).returncode == 0
    with open(js) as f:
        trace = json.load(f)
    module = {x["args"]["id"]: (x["name"], x["args"].get("module")) for x in xevents(trace)}
    spans = []
    for evs in spans_of(trace).values():
        ids = [x["args"]["call_id"] for x in evs if "call_id" in x["args"] and x["ph"] == "b"]
        if ids and module.get(ids[0]) == ("hello", "aioserver.py"):
            end = [e for e in evs if e["args"].get("span") and e["ph"] == "e"]
            assert len(end) == 1 and end[0]["args"]["slices"] == len(ids) == 2, evs
            assert end[0]["args"]["exec_us"] <= end[0]["args"]["wall_us"] + EPS_US, end
            spans.append(tuple(ids))
    assert len(spans) == N and len(set(spans)) == N, len(spans)


def test_serve_metrics_count_requests(procs, tmp_path):
    port = tmp_path / "port"
    s_proc = procs.start([PYTHON, PY / "aioserver.py", N, port, "stay"], stdin=subprocess.PIPE,
                         text=True)
    pid = int(re.search(r"pid=(\d+)", read_line(s_proc, r"^aioserver: pid=")).group(1))
    s, base = start_serve(procs, pid, "--top", "0")
    c = client(port)
    client_done(c)
    read_line(s_proc, r"^aioserver: served=%d, staying" % N, timeout=120)
    deadline = time.monotonic() + 60
    pat = re.compile(r'^bpfprof_coroutine_calls_total\{function="hello",module="aioserver.py",'
                     r'pid="%d"\} (\d+)$' % pid, re.M)
    while True:
        text = http_get(base + "/metrics")[2].decode()
        m = pat.search(text)
        if m and int(m.group(1)) >= N:
            break
        assert time.monotonic() < deadline, text[-3000:]
        time.sleep(0.2)
    assert int(m.group(1)) == N
    ex = re.search(r'^bpfprof_coroutine_exec_seconds_total\{function="hello".*\} (\S+)$', text, re.M)
    wall = re.search(r'^bpfprof_coroutine_wall_seconds_total\{function="hello".*\} (\S+)$', text, re.M)
    assert 0 < float(ex.group(1)) <= float(wall.group(1))
    s_proc.stdin.close()
    assert s_proc.wait(timeout=60) == 0
    assert stop(s) == 0
