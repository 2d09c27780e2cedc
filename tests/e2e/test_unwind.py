# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""User stacks without frame pointers: --stack=fp|dwarf|auto.

tests/progs/nofp is built with -O2 -fomit-frame-pointer and spends its time
in main -> nofp_outer -> nofp_middle -> nofp_inner (own code), in libc's
qsort calling back nofp_by_key, and in libc's memcpy called by nofp_copy;
then it sleeps 100 ms in libc's nanosleep called by nofp_nap.  Debian's libc
has no frame pointers either: only DWARF unwinding (.eh_frame) can find the
callers, as `perf record --call-graph dwarf` does.

Comparing with perf: both sides' stacks become chains of function names,
outermost first, normalized the same way (documented in README, "Stacks"):
the program's own functions keep their names; every other frame (libc,
ld.so, the kernel, whether named from .dynsym, from libc6-dbg's symbols as
perf may do, or "[unknown]") becomes "*", and consecutive "*" merge into
one.  So "main;nofp_sort;*;nofp_by_key" is a qsort callback however many
libc frames (msort recursion, inlined or not) lie between.  Kernel frames
are left out on both sides (--no-kernel-stacks; perf's [kernel.kallsyms]).
"""

import collections
import re
import shutil
import subprocess

import pytest

from conftest import prog_path

PROG = {"main", "nofp_outer", "nofp_middle", "nofp_inner", "nofp_sort", "nofp_by_key",
        "nofp_copy", "nofp_nap"}
ROUNDS = "30"


def samples(trace, cat="sample"):
    return [e for e in trace["traceEvents"] if e.get("cat") == cat]


def norm(names):
    out = []
    for n in names:
        n = n if n in PROG else "*"
        if n == "*" and out and out[-1] == "*":
            continue
        out.append(n)
    return ";".join(out)


def perf_stacks(text):
    """perf script -F comm,tid,ip,sym,dso -> [[(sym, dso), ...] innermost first]"""
    stacks, cur = [], None
    for line in text.splitlines():
        if not line.strip():
            if cur is not None:
                stacks.append(cur)
            cur = None
        elif not line[0].isspace():
            cur = []            # a sample's header line
        elif cur is not None:
            m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)$", line)
            if m:
                cur.append((re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)), m.group(2)))
    if cur is not None:
        stacks.append(cur)
    return stacks


def frequent(counter, share):
    total = sum(counter.values())
    return {k for k, v in counter.items() if v >= share * total}


CHAINS = (["nofp_outer", "nofp_middle", "nofp_inner"], ["nofp_sort", "nofp_by_key"],
          ["nofp_copy"], ["nofp_nap"])


def check_whole(st):
    """A stack through nofp's functions is the right one, down to main and the C runtime."""
    assert st[0] in ("_start", "[truncated]") or st[0].startswith("[unknown] ld-linux"), st
    i = st.index("main")
    assert i >= 1, st          # main's callers: libc's start code (and _start)
    rest = st[i + 1:]
    mine = [n for n in rest if n in PROG]
    if not mine:
        return
    # the program's frames are a prefix of one of its call chains: a sample may
    # land in a caller's own code (nofp_outer after nofp_middle returned)
    assert rest[0] == mine[0], st
    assert any(mine == chain[:len(mine)] for chain in CHAINS), st
    if mine[:3] == ["nofp_outer", "nofp_middle", "nofp_inner"]:
        assert rest[:3] == mine[:3], st     # the spin is in their own code: no libc between
    if "nofp_by_key" in mine:
        # main -> nofp_sort -> qsort and libc's merge sort -> the callback
        assert rest.index("nofp_by_key") >= 2, st


def test_dwarf_stacks_are_complete(record):
    r = record("nofp", ROUNDS, opts=["--sample=999", "--stack=dwarf"])
    assert r.rc == 0, r.describe()
    ss = samples(r.trace)
    assert len(ss) > 200, r.describe()
    whole = [e for e in ss if not e["args"].get("truncated") and "main" in e["args"]["stack"]]
    # all but start-up (ld.so) samples reach main
    assert len(whole) >= 0.95 * len(ss), (len(whole), len(ss))
    for e in whole:
        check_whole(e["args"]["stack"])
    keys = collections.Counter(norm(e["args"]["stack"]) for e in whole)
    for chain in ("*;main;nofp_outer;nofp_middle;nofp_inner", "*;main;nofp_sort;*;nofp_by_key",
                  "*;main;nofp_copy;*"):
        assert any(k.startswith(chain) for k in keys), (chain, keys)


def test_fp_stacks_are_marked_truncated(record):
    """Frame pointers cannot walk this program: never a silently wrong stack."""
    r = record("nofp", ROUNDS, opts=["--sample=999", "--stack=fp"])
    assert r.rc == 0, r.describe()
    ss = [e for e in samples(r.trace) if any(n in PROG for n in e["args"]["stack"])]
    # nofp's fixed work is ~400 ms of CPU; a third of its stacks name one of its
    # functions (the others lie in libc, which the walk cannot leave)
    assert len(ss) > 20, r.describe()
    bad = [e["args"]["stack"] for e in ss if not e["args"].get("truncated")]
    assert not bad, bad[:5]
    assert all(e["args"]["stack"][0] == "[truncated]" for e in ss)


def test_auto_is_the_default_and_unwinds(record):
    r = record("nofp", ROUNDS, opts=["--sample=999"])
    assert r.rc == 0, r.describe()
    ss = samples(r.trace)
    whole = [e for e in ss if not e["args"].get("truncated") and "main" in e["args"]["stack"]]
    assert len(whole) >= 0.95 * len(ss), (len(whole), len(ss))


def test_small_stack_copy_truncates_never_lies(record):
    """A 512-byte copy cannot hold libc's merge sort frames: those stacks are cut, and marked."""
    r = record("nofp", ROUNDS, opts=["--sample=999", "--stack=dwarf", "--stack-size=512"])
    assert r.rc == 0, r.describe()
    ss = samples(r.trace)
    cut = [e for e in ss if e["args"].get("truncated")]
    assert any("nofp_by_key" in e["args"]["stack"] for e in cut), r.describe()
    for e in ss:
        st = e["args"]["stack"]
        if e["args"].get("truncated"):
            assert st[0] == "[truncated]", st
        elif "main" in st:
            check_whole(st)
    assert "try a larger --stack-size" in r.proc.stderr


def test_offcpu_through_libc(record):
    r = record("nofp", "2", opts=["--offcpu", "--stack=dwarf"])
    assert r.rc == 0, r.describe()
    naps = [e for e in samples(r.trace, "offcpu") if "nofp_nap" in e["args"]["stack"]]
    assert naps, r.describe()
    e = max(naps, key=lambda e: e["dur"])
    assert e["dur"] >= 95000, e     # a 100 ms sleep: however late it wakes, not shorter
    st = e["args"]["stack"]
    assert not e["args"].get("truncated"), st
    i = st.index("main")
    assert st[i + 1] == "nofp_nap", st
    # libc's nanosleep between nofp_nap and the kernel's part
    assert st[i + 2] not in PROG, st
    assert any(f in st for f in ("do_nanosleep", "hrtimer_nanosleep")), st


@pytest.mark.parametrize("opt", ["--stack=frames", "--stack-size=1m", "--stack-size=abc"])
def test_bad_stack_options(record, opt):
    r = record("nofp", "1", opts=["--sample", opt], check=False)
    assert r.rc != 0 and "bpfprof:" in r.proc.stderr and "--stack" in r.proc.stderr, r.describe()


def test_same_stacks_as_perf_dwarf(record, tmp_path):
    """The set of distinct stacks matches perf record --call-graph dwarf on the same workload."""
    if not shutil.which("perf"):
        pytest.skip("perf is not installed (scripts/setup.sh --test installs linux-perf)")
    data = tmp_path / "perf.data"
    p = subprocess.run(["perf", "record", "-q", "-F", "999", "-e", "cpu-clock", "--call-graph",
                        "dwarf", "-o", str(data), str(prog_path("nofp")), ROUNDS],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    p = subprocess.run(["perf", "script", "-i", str(data), "-F", "comm,tid,ip,sym,dso"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    theirs = collections.Counter()
    for st in perf_stacks(p.stdout):
        user = [sym for sym, dso in reversed(st) if "kernel" not in dso]
        if user:
            theirs[norm(user)] += 1

    r = record("nofp", ROUNDS, opts=["--sample=999", "--stack=dwarf", "--no-kernel-stacks"])
    assert r.rc == 0, r.describe()
    ours = collections.Counter(norm(e["args"]["stack"]) for e in samples(r.trace))

    assert sum(theirs.values()) > 200 and sum(ours.values()) > 200, (theirs, ours)
    # every stack that is 2% of either profile is in the other one
    missing_here = frequent(theirs, 0.02) - set(ours)
    missing_there = frequent(ours, 0.02) - set(theirs)
    assert not missing_here and not missing_there, (missing_here, missing_there, ours, theirs)
    # and both reach main as often
    share = lambda c: sum(v for k, v in c.items() if "main" in k.split(";")) / sum(c.values())
    assert share(ours) >= 0.95 and share(theirs) >= 0.95, (share(ours), share(theirs))
