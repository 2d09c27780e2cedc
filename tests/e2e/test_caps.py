# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Unprivileged use: a copy of bpfprof given CAP_BPF and CAP_PERFMON by setcap
(file capabilities), run as nobody, records its own program with exact call
counts and attaches to its own process; another user's process is refused in
one line; without the capabilities the tracing commands say what they need and
the file commands (report) still work."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import nobody_dir, as_nobody, prog_path, REPO
from test_record import CALLTREE_COUNTS


def nobody(*cmd, cwd, timeout=120):
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=as_nobody, stdin=subprocess.DEVNULL)


@pytest.fixture
def capdir():
    if not shutil.which("setcap"):
        pytest.skip("setcap missing (libcap2-bin)")
    with nobody_dir("bpfprof-caps-") as (d, copy):
        os.chmod(d, 0o1777)
        shutil.copy(prog_path("calltree"), d)
        shutil.copy(prog_path("busy"), d)
        yield d, copy


def test_record_and_attach_with_capabilities(capdir):
    d, exe = capdir
    r = nobody(exe, "record", "-o", "ct.json", "--", "./calltree", cwd=d)
    assert r.returncode == 1 and "needs root (or CAP_BPF and CAP_PERFMON)" in r.stderr, r.stderr
    r = nobody(exe, "report", "ct.json", cwd=d)   # no recording: the error is about the file
    assert "needs root" not in r.stderr

    subprocess.run(["setcap", "cap_bpf,cap_perfmon+ep", exe], check=True)
    r = nobody(exe, "record", "-q", "-o", "ct.bpfprof", "--", "./calltree", cwd=d)
    assert r.returncode == 0, r.stderr
    r = nobody(exe, "report", "--format", "json", "ct.bpfprof", cwd=d)
    assert r.returncode == 0, r.stderr
    assert {f["name"]: f["calls"] for f in json.loads(r.stdout)["functions"]} == CALLTREE_COUNTS

    busy = subprocess.Popen(["./busy"], cwd=d, stdout=subprocess.PIPE, text=True,
                            preexec_fn=as_nobody)
    try:
        line = busy.stdout.readline()
        pid = int(line.split("pid=")[1].split()[0])
        r = nobody(exe, "attach", "-q", "-p", pid, "-d", "1s", "-o", "busy.bpfprof", cwd=d)
        assert r.returncode == 0, r.stderr
        r = nobody(exe, "report", "--format", "json", "busy.bpfprof", cwd=d)
        assert r.returncode == 0 and json.loads(r.stdout)["functions"], r.stderr
        # another user's process (init): refused, one line
        r = nobody(exe, "attach", "-p", "1", "-d", "1s", "-o", "init.json", cwd=d)
        assert r.returncode != 0
        assert r.stderr.strip().splitlines() == ["bpfprof: cannot attach to pid 1: Permission denied"], r.stderr
    finally:
        busy.kill()
        busy.wait()
