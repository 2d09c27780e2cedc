# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The connections of `serve` and `view` against a local user who holds
them (issue 27, case 5): an unprivileged user (created here) keeps 80
connections to the server's loopback port open with half-sent requests,
one byte a second, while root's client asks for /metrics (serve) or the
page (view, with its token).  The server gives each local user at most 16
of its 64 connections, and shuts a connection whose request has not come
whole within 10 s (user/web/slots.h).

Before: the 64 slots were the attacker's, each byte restarted the 120 s
idle timeout, and /metrics went unanswered for as long as the attack ran.
The attack is bounded (its connections, its duration); the timeouts below
only bound a hang.
"""

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

from conftest import REPO, prog_path, run_bpfprof
from test_serve import procs, read_line, start_serve  # noqa: F401 (procs: a fixture)
from test_view import View

HOSTILE = "bpfprof-hostile"
ATTACK_S = 150          # the attack's bound: longer than every wait below


@pytest.fixture(scope="module")
def slowclients():
    """A copy of tests/e2e/slowclients.py the hostile user can read: the
    clone's may be closed to it (/root is 0700 on Debian)."""
    d = tempfile.mkdtemp(prefix="bpfprof-slowclients-", dir="/tmp")
    os.chmod(d, 0o755)
    copy = os.path.join(d, "slowclients.py")
    shutil.copyfile(REPO / "tests" / "e2e" / "slowclients.py", copy)
    os.chmod(copy, 0o644)
    yield copy
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def hostile_uid():
    """An unprivileged user of this machine, created if missing."""
    try:
        return pwd.getpwnam(HOSTILE).pw_uid
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                        "/usr/sbin/nologin", HOSTILE], check=True, capture_output=True)
        return pwd.getpwnam(HOSTILE).pw_uid


def as_user(uid):
    def drop():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    return drop


def attack(procs, slowclients, uid, port, nconn):
    """slowclients.py as `uid` against `port`, once its connections are open."""
    a = procs.start([sys.executable, slowclients, port, nconn, ATTACK_S], text=True,
                    preexec_fn=as_user(uid))
    read_line(a, r"^ready")
    time.sleep(2)       # let the server take them (accept) before root's client comes
    return a


def get_while_attacked(a, url):
    """GET url as root while the attack runs: the attack must still be running
    when the answer comes (the client's timeout is shorter than the attack)."""
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            status, body = r.status, r.read()
    except OSError as e:
        pytest.fail("%s unanswered while a local user held the server's connections: %r"
                    % (url, e))
    assert a.poll() is None, "the attack ended before the answer: it proves nothing"
    return status, body


def test_serve_metrics_answer_under_slow_clients(procs, slowclients, hostile_uid):
    c = procs.start([prog_path("counter"), 100], stdin=subprocess.PIPE, text=True)
    pid = int(read_line(c, r"^counter: pid=(\d+)").split("=")[1])
    s, base = start_serve(procs, pid, "-q")
    a = attack(procs, slowclients, hostile_uid, int(base.rsplit(":", 1)[1]), 80)
    for _ in range(3):
        status, body = get_while_attacked(a, base + "/metrics")
        assert status == 200 and b"bpfprof_" in body, body[:300]
    assert s.poll() is None


def test_view_page_answers_under_slow_clients(procs, slowclients, hostile_uid, tmp_path):
    rec = tmp_path / "calltree.bpfprof"
    r = run_bpfprof(["record", "-q", "-o", rec, "--", prog_path("calltree")])
    assert r.returncode == 0 and rec.exists(), r.stderr
    v = View(rec)
    try:
        port = int(v.url.split(":")[2].split("/")[0])
        a = attack(procs, slowclients, hostile_uid, port, 80)
        status, body = get_while_attacked(a, v.url)
        assert status == 200 and b"<html" in body.lower(), body[:300]
        status, body = get_while_attacked(a, v.url + "info.json")
        assert status == 200, body[:300]
    finally:
        v.kill()


def test_slow_request_is_cut(procs, slowclients, hostile_uid):
    """One connection dripping a byte a second is closed by the server (10 s
    after it opened), though it is never idle long enough for the idle
    timeout (120 s).  Before: it stayed open for the whole attack."""
    c = procs.start([prog_path("counter"), 100], stdin=subprocess.PIPE, text=True)
    pid = int(read_line(c, r"^counter: pid=(\d+)").split("=")[1])
    s, base = start_serve(procs, pid, "-q")
    a = procs.start([sys.executable, slowclients, int(base.rsplit(":", 1)[1]), 1, 60,
                     "--until-closed"], text=True, preexec_fn=as_user(hostile_uid))
    try:
        out, err = a.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("slowclients.py did not end")
    line = out.strip().splitlines()[-1]
    fields = line.split()
    closed, longest = int(fields[3]), float(fields[5])
    assert closed >= 1, "the server never closed a request that took 60 s to come: " + line
    assert longest < 60, line
