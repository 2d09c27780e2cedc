# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Sampled stacks name the asyncio task running, and the tasks awaiting it
(tests/progs/py/asyncburn.py).

The script's task "burner" runs crunch(), which calls spin() on CPU; the
task "boss" awaits it and main's task (asyncio's "Task-1", as the script
prints) awaits boss.  warmup() runs before the event loop, in no task.  So
every sample in spin() is in task burner, awaited by boss, awaited by
main's task, whatever the sampler caught, and no sample in warmup() is in a
task: in the folded stacks (marker frames "[task NAME]", "[awaited by
NAME]" just outside the task's coroutine), speedscope's, pprof's labels
`task` and `awaited_by`, and Perfetto's sample annotations.  Sampling only,
and sampling beside the exact Python calls.  No sample counts asserted
beyond "spin() and warmup() were sampled".
"""

import json

import pytest

import perfetto_util
from conftest import record_python, run_bpfprof
from test_clients import go_env, pprof_samples  # noqa: F401 (go_env: a fixture)

pytestmark = pytest.mark.usefixtures("need_debian_python")

MODES = {"sample": ["--sample"], "exact": ["--sample", "-F", "py:*"]}


@pytest.fixture(scope="module", params=sorted(MODES))
def burn(request, tmp_path_factory):
    r = record_python(tmp_path_factory, "asyncburn.py", *MODES[request.param], pftrace=True)
    names = [ln.split()[1:] for ln in r.stdout.splitlines() if ln.startswith("names ")]
    assert len(names) == 1, r.stdout
    main, boss = names[0]
    outs = {}
    for ext in ("folded", "pb.gz", "speedscope.json"):
        outs[ext] = r.arch.with_suffix("." + ext)
        c = run_bpfprof(["convert", "-o", outs[ext], r.arch])
        assert c.returncode == 0, c.stderr
    # outermost first, as in a folded stack
    chain = ["[awaited by %s]" % main, "[awaited by %s]" % boss, "[task burner]", "crunch"]
    return r, outs, chain, (main, boss)


def stacks_with(stacks, fn):
    return [s for s in stacks if fn in s]


def check_stacks(stacks, chain):
    """Every stack through spin() has the chain just outside it; no warmup() stack a task."""
    spin = stacks_with(stacks, "spin")
    warm = stacks_with(stacks, "warmup")
    assert spin and warm, (len(spin), len(warm))
    for s in spin:
        i = s.index("spin")
        assert s[i - len(chain):i] == chain, s
    for s in warm:
        assert not any(f.startswith(("[task ", "[awaited by ")) for f in s), s


def test_folded_stacks_name_the_task(burn):
    r, outs, chain, _ = burn
    stacks = []
    for line in outs["folded"].read_text().splitlines():
        frames, _, n = line.rpartition(" ")
        assert int(n) > 0, line
        stacks.append(frames.split(";"))
    check_stacks(stacks, chain)


def test_speedscope_samples_name_the_task(burn):
    _, outs, chain, _ = burn
    doc = json.loads(outs["speedscope.json"].read_text())
    frames = [f["name"] for f in doc["shared"]["frames"]]
    stacks = [[frames[i] for i in st] for p in doc["profiles"] if p["type"] == "sampled"
              for st in p["samples"]]
    check_stacks(stacks, chain)
    marks = {f["file"] for f in doc["shared"]["frames"] if f["name"].startswith("[task ")}
    assert marks == {"[asyncio]"}, marks


def test_pprof_task_labels(burn, go_env):
    _, outs, _, (main, boss) = burn
    n = 0
    for frames, labels, block in pprof_samples(go_env, outs["pb.gz"]):
        if "spin" in frames:
            n += 1
            assert labels.get("task") == "burner", block
            assert labels.get("awaited_by") == "%s %s" % (boss, main), block
        if "warmup" in frames:
            assert "task" not in labels and "awaited_by" not in labels, block
    assert n, "no cpu sample of spin in the pprof profile"


def check_perfetto_tasks(pf, awaited_by):
    """Every sample in spin() of the .pftrace pf names the task burner and its
    awaiters (awaited_by, "boss <- MAIN"); every one in warmup() no task."""
    trace = perfetto_util.read(pf)
    ev = [e for e in trace["traceEvents"] if e.get("cat") == "sample"]
    spin = [e for e in ev if "spin" in e["args"]["stack"].split(";")]
    warm = [e for e in ev if "warmup" in e["args"]["stack"].split(";")]
    assert spin and warm
    for e in spin:
        assert e["args"].get("task") == "burner", e
        assert e["args"].get("awaited_by") == awaited_by, e
    for e in warm:
        assert "task" not in e["args"] and "awaited_by" not in e["args"], e


def test_perfetto_samples_name_the_task(burn):
    r, _, _, (main, boss) = burn
    check_perfetto_tasks(r.pf, "%s <- %s" % (boss, main))
