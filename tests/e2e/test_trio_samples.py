# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Sampled stacks name the trio task running and the tasks awaiting it
(tests/progs/py/trioburn.py, Debian's python3-trio under python3.11).

The script's task "burner" (nursery.start_soon(..., name="burner")) runs
crunch(), which calls spin() on CPU between checkpoints; it was started in
the nursery of task "boss", and boss in the nursery of main's task
("__main__.main", trio's default name), and both wait in their nursery's
__aexit__ from before burner first runs until it is done.  warmup() runs
before trio.run, in no task.  So every sample in spin() has exactly the
markers "[awaited by __main__.main];[awaited by boss];[task burner]"
(module "[trio]") just outside crunch, and no sample in warmup() has a
marker: in the folded stacks, speedscope's, pprof's labels `task` and
`awaited_by` and Perfetto's sample annotations.  Sampling only, and beside
the exact Python calls.  No sample counts asserted beyond "spin() and
warmup() were sampled".
"""

import json
import os

import pytest

from conftest import record_python, run_bpfprof
from test_async_samples import check_perfetto_tasks, check_stacks
from test_clients import go_env, pprof_samples  # noqa: F401 (go_env: a fixture)

pytestmark = pytest.mark.usefixtures("need_debian_python")

MODES = {"sample": ["--sample"], "exact": ["--sample", "-F", "py:*"]}
MAIN = "__main__.main"
# outermost first, as in a folded stack
CHAIN = ["[awaited by %s]" % MAIN, "[awaited by boss]", "[task burner]", "crunch"]


@pytest.fixture(scope="module", params=sorted(MODES))
def burn(request, tmp_path_factory):
    if os.system("/usr/bin/python3.11 -c 'import trio' 2>/dev/null"):
        pytest.skip("python3-trio missing: run scripts/setup.sh --test")
    r = record_python(tmp_path_factory, "trioburn.py", *MODES[request.param], pftrace=True)
    assert r.stdout.startswith("ok "), r.stdout
    outs = {}
    for ext in ("folded", "pb.gz", "speedscope.json"):
        outs[ext] = r.arch.with_suffix("." + ext)
        c = run_bpfprof(["convert", "-o", outs[ext], r.arch])
        assert c.returncode == 0, c.stderr
    return r, outs


def check_trio(stacks):
    check_stacks(stacks, CHAIN)
    for s in stacks:
        marks = [f for f in s if f.startswith(("[task ", "[awaited by "))]
        assert marks == (CHAIN[:3] if "spin" in s else marks), s
        if "crunch" in s:
            assert s[s.index("crunch") - 1] == "[task burner]", s


def test_folded_stacks_name_the_task(burn):
    _, outs = burn
    stacks = []
    for line in outs["folded"].read_text().splitlines():
        frames, _, n = line.rpartition(" ")
        assert int(n) > 0, line
        stacks.append(frames.split(";"))
    check_trio(stacks)


def test_speedscope_samples_name_the_task(burn):
    _, outs = burn
    doc = json.loads(outs["speedscope.json"].read_text())
    frames = [f["name"] for f in doc["shared"]["frames"]]
    stacks = [[frames[i] for i in st] for p in doc["profiles"] if p["type"] == "sampled"
              for st in p["samples"]]
    check_trio(stacks)
    marks = {f["file"] for f in doc["shared"]["frames"]
             if f["name"].startswith(("[task ", "[awaited by "))}
    assert marks == {"[trio]"}, marks


def test_pprof_task_label(burn, go_env):
    _, outs = burn
    n = 0
    for frames, labels, block in pprof_samples(go_env, outs["pb.gz"]):
        if "spin" in frames:
            n += 1
            assert labels.get("task") == "burner", block
            assert labels.get("awaited_by") == "boss %s" % MAIN, block
        if "warmup" in frames:
            assert "task" not in labels and "awaited_by" not in labels, block
    assert n, "no cpu sample of spin in the pprof profile"


def test_perfetto_samples_name_the_task(burn):
    r, _ = burn
    check_perfetto_tasks(r.pf, "boss <- %s" % MAIN)
