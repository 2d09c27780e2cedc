# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Entry probe placement past a harmless prefix (user/symbols/placement.c) on
tests/progs/prefixes: assembly functions with each prefix shape, placed or
refused as designed, with exact counts, nesting and return values."""

import pytest

from conftest import prog_path, run_bpfprof
import trace_util

N = 300

# function -> (probe column of `bpfprof list`, its path, its why column)
PLACED = {
    "p_riprel": ("+7:push", "emulated", "-"),
    "p_xor": ("+2:push", "emulated", "-"),
    "p_xor_arg": ("+2:push", "emulated", "-"),
    "p_test": ("+3:jump", "emulated", "-"),
    "p_sub": ("other", "single-step", "rsp"),
    "p_loop": ("other", "single-step", "branch-target"),
    "p_jtab": ("other", "single-step", "jump-table"),
    "p_sym": ("other", "single-step", "symbol"),
    "p_sym_inner": ("push", "emulated", "-"),
    "p_cfa": ("other", "single-step", "cfa"),
}


def listing(*opts):
    r = run_bpfprof(["list"] + list(opts) + [str(prog_path("prefixes")), "p_*"])
    assert r.returncode == 0, r.stderr
    out = {}
    for line in r.stdout.splitlines()[1:]:
        f = line.split()
        out[f[-1]] = (f[2], f[3], f[4])
    return out, r.stderr


def test_list_shows_placement_and_refusals():
    got, err = listing()
    for fn, want in PLACED.items():
        assert got[fn] == want, (fn, got[fn])
    assert ("probe paths: emulated 6 (55%: 2 at the entry, 0 of them on a jump; 0 past endbr64; "
            "4 past a longer prefix), nop5 0, single-step 5 (45%)") in err, err


def test_args_keep_argument_registers():
    got, _ = listing("--args")
    # xor %esi,%esi would hide the second argument from the entry probe
    assert got["p_xor_arg"] == ("other", "single-step", "arg-write")
    # writes rax only: still moved
    assert got["p_riprel"] == ("+7:push", "emulated", "-")


def expected_counts(n):
    c = {f: n for f in PLACED}
    c.update(p_nest=n, p_riprel=2 * n, p_test=2 * n, p_sym_inner=2 * n)
    return c


def check_run(r, n):
    assert r.rc == 0, r.describe()
    assert "prefixes: %d rounds" % n in r.proc.stdout
    xs = trace_util.xevents(r.trace)
    # one call per call: a probe moved past a loop head or table target would count more
    assert trace_util.counts(xs) == expected_counts(n), trace_util.counts(xs)
    assert not [e for e in xs if set(e["args"]) & {"unfinished", "unwound", "began_before_recording"}]
    calls, probs = trace_util.nesting_problems(xs)
    assert not probs, probs[:5]
    by = {}
    for c in calls:
        by.setdefault(c.name, []).append(c)
    # p_nest holds exactly its p_riprel and p_test; p_sym holds the p_sym_inner it falls into
    for c in by["p_nest"]:
        assert sorted(k.name for k in c.children) == ["p_riprel", "p_test"], c
    for c in by["p_sym"]:
        assert [k.name for k in c.children] == ["p_sym_inner"], c
    top = [c for c in calls if c.depth == 0]
    assert trace_util.counts([{"name": c.name} for c in top]) == {
        f: n for f in list(PLACED) + ["p_nest"]}
    return xs


def test_exact_calls_and_nesting(record):
    check_run(record("prefixes", str(N), opts=["-F", "p_*"]), N)


def test_exact_return_values_with_args(record):
    r = record("prefixes", str(N), opts=["-F", "p_*", "--args"])
    xs = check_run(r, N)
    want = {
        "p_riprel": lambda a: a[0] + 7,
        "p_xor": lambda a: 2 * a[0],
        "p_xor_arg": lambda a: a[0],
        "p_test": lambda a: a[0] if a[0] else -1,
        "p_sub": lambda a: a[0] + 1,
        "p_loop": lambda a: a[0],
        "p_jtab": lambda a: 100 if a[0] == 0 else 101,
        "p_sym": lambda a: a[0] + 3,
        "p_sym_inner": lambda a: a[0] + 3,
        "p_cfa": lambda a: a[0],
    }
    seen = set()
    for e in xs:
        if e["name"] not in want:
            continue
        a = [int(v, 16) for v in e["args"]["arg"]]
        ret = int(e["args"]["ret"], 16)
        if ret >= 1 << 63:
            ret -= 1 << 64
        assert ret == want[e["name"]](a), (e["name"], a[:2], ret)
        seen.add(e["name"])
        # the entry saw the arguments the caller passed (the probe of p_xor_arg stays first)
        if e["name"] == "p_xor_arg":
            assert a[1] == 5, a
        if e["name"] == "p_loop":
            assert a[0] == 3, a
    assert seen == set(want)
