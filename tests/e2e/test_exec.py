# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""exec: the new image of a traced process is traced with the same patterns,
from its first instruction (the process is held at exec until probes are in)."""

import os
import stat

import trace_util
from conftest import prog_path

CALLTREE = {"main": 1, "run": 1, "parse": 3, "compute": 5, "leaf_add": 20,
            "leaf_mul": 10, "fib": 177, "slow_io": 1}


def test_exec_follows_new_image(record):
    r = record(str(prog_path("execer")), str(prog_path("calltree")))
    assert r.rc == 0, r.describe()
    xs = trace_util.xevents(r.trace)
    pids = {e["pid"] for e in xs}
    assert len(pids) == 1, pids   # exec keeps the pid
    before = [e for e in xs if e["name"] == "before_exec"]
    assert len(before) == 1 and before[0]["args"].get("unfinished"), before
    # calltree's image: every call, complete, starting after the exec
    ct = [e for e in xs if e["args"].get("module") == "calltree"]
    counts = trace_util.counts(ct)
    assert counts == CALLTREE, counts
    assert not any(e["args"].get("unfinished") for e in ct)
    assert min(e["ts"] for e in ct) >= before[0]["ts"] + before[0]["dur"] - 0.001


def test_script_traces_programs_it_runs(record, tmp_path):
    script = tmp_path / "run.sh"
    # exitcode first: the script's status is its last command's
    script.write_text("#!/bin/sh\n%s\n%s\n" % (prog_path("exitcode"), prog_path("calltree")))
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    r = record(str(script))
    assert r.rc == 0, r.describe()
    xs = trace_util.xevents(r.trace)
    ct = [e for e in xs if e["args"].get("module") == "calltree"]
    assert trace_util.counts(ct) == CALLTREE
    ex = [e for e in xs if e["args"].get("module") == "exitcode"]
    assert trace_util.counts(ex) == {"main": 1, "f": 1}, trace_util.counts(ex)
    # two processes forked by the shell, each with its own pid
    assert len({e["pid"] for e in ct}) == 1 and len({e["pid"] for e in ex}) == 1
    assert {e["pid"] for e in ct} != {e["pid"] for e in ex}
