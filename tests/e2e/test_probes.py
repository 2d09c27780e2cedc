# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Probe placement: the instruction a probe sits on (tests/progs/insns: naked
functions whose first instruction is known), probing after endbr64, and the
functions the kernel refuses to probe."""

import pytest

from conftest import prog_path, run_bpfprof
import trace_util

N = 1000


@pytest.mark.parametrize("func", ["f_push", "f_nop", "f_nop5", "f_endbr_push", "f_endbr_ret",
                                  "f_riprel", "f_sub", "f_mov_push", "f_xor_push", "f_test_je"])
@pytest.mark.parametrize("skip", [True, False])
def test_exact_calls_on_every_probe_path(record, func, skip):
    opts = ["-F", func] + ([] if skip else ["--no-skip-endbr"])
    r = record(str(prog_path("insns")), func, str(N), opts=opts)
    assert r.rc == 0, r.describe()
    xs = trace_util.xevents(r.trace)
    # every call seen, each returning normally: entry and return probes exact
    assert trace_util.counts(xs) == {func: N}, trace_util.counts(xs)
    assert not [e for e in xs if set(e["args"]) & {"unfinished", "unwound", "began_before_recording"}]
    # calls are sequential: no call nested in another
    assert all(e["args"]["depth"] == 0 for e in xs)


def test_list_shows_probe_paths():
    r = run_bpfprof(["list", str(prog_path("insns")), "f_*"])
    assert r.returncode == 0, r.stderr
    rows = {l.split()[-1]: l.split()[2:5] for l in r.stdout.splitlines()[1:] if l.startswith("0x")}
    entry = {f: row[0] for f, row in rows.items()}
    assert entry["f_push"] == "push" and entry["f_nop5"] == "nop5"
    # probed past endbr64, on the push the kernel emulates; nothing to skip to after "endbr64; ret"
    assert entry["f_endbr_push"] == "+4:push" and entry["f_endbr_ret"] == "endbr64"
    assert entry["f_lock"] == "refused"
    # the path column, and why a probe stays on a single-stepped instruction
    assert rows["f_endbr_push"][1:] == ["emulated", "-"]
    assert rows["f_endbr_ret"][1:] == ["single-step", "branch"]
    assert rows["f_riprel"][1:] == ["single-step", "mem-write"]
    assert rows["f_sub"][1:] == ["single-step", "rsp"]


def test_refused_function_is_named_not_silently_missing(record):
    r = record(str(prog_path("insns")), "f_lock", "10", opts=["-F", "f_*"])
    assert r.rc == 0, r.describe()
    assert "cannot probe" in r.proc.stderr and "f_lock" in r.proc.stderr, r.proc.stderr
    assert "f_lock 10 calls" in r.proc.stdout     # the program ran, unharmed
    assert "f_lock" not in trace_util.counts(trace_util.xevents(r.trace))
    r = record(str(prog_path("insns")), "f_lock", "10", opts=["-F", "f_lock"])
    assert r.rc != 0 and "f_lock" in r.proc.stderr
