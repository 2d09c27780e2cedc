# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""`bpfprof report` end to end: record tests/progs/calltree into an archive,
then check the report's numbers against the facts calltree.c documents.
"""

import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import urllib.request

import pytest

from conftest import BPFPROF, REPO, as_nobody, describe, nobody_dir, prog_path, run_bpfprof

CALLTREE_COUNTS = {"main": 1, "run": 1, "parse": 3, "compute": 5, "leaf_add": 20,
                   "leaf_mul": 10, "fib": 177, "slow_io": 1}



@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """calltree recorded once into an archive, shared by the tests below."""
    out = tmp_path_factory.mktemp("report") / "calltree.bpfprof"
    p = run_bpfprof(["record", "-q", "-o", out, "--", prog_path("calltree")])
    assert p.returncode == 0, describe(p)
    assert out.exists(), "no archive written\n" + describe(p)
    return out


def report(*args):
    p = run_bpfprof(["report"] + [str(a) for a in args])
    assert p.returncode == 0, describe(p)
    return p


def with_paths(tree):
    """The tree's nodes, each given its path: a node names its parent (listed before it)."""
    byid = {}
    for n in tree:
        assert n["parent"] == 0 or n["parent"] in byid, n
        n["path"] = (byid[n["parent"]]["path"] if n["parent"] else []) + [n["name"]]
        assert len(n["path"]) == n["depth"], n
        byid[n["id"]] = n
    return tree


@pytest.fixture(scope="module")
def rep(archive):
    """report --format json: (whole object, {name: function}, {"a>b": tree node})."""
    p = report("--format", "json", archive)
    try:
        d = json.loads(p.stdout)
    except ValueError as e:
        pytest.fail("report --format json is not JSON (%s):\n%s" % (e, p.stdout[:2000]))
    funcs = {f["name"]: f for f in d["functions"]}
    tree = {">".join(n["path"]): n for n in with_paths(d["tree"])}
    return d, funcs, tree


def test_json_shape(rep):
    d, funcs, tree = rep
    for k in ("command", "duration_ns", "functions", "tree", "lost"):
        assert k in d, "no %r in the report: %s" % (k, sorted(d))
    assert "calltree" in d["command"]
    assert d["duration_ns"] > 0 and d["lost"] == 0
    for f in d["functions"]:
        for k in ("name", "module", "calls", "total_ns", "self_ns", "avg_ns", "min_ns",
                  "max_ns", "p50_ns", "p99_ns", "pct_wall"):
            assert k in f, "function %s has no %r" % (f.get("name"), k)
        assert f["module"] == "calltree", f
        assert f["min_ns"] <= f["p50_ns"] <= f["p99_ns"] <= f["max_ns"], f
        assert f["min_ns"] <= f["avg_ns"] <= f["max_ns"], f
        assert f["self_ns"] <= f["avg_ns"] * f["calls"] + f["calls"], f
        assert 0 <= f["pct_wall"] <= 100.0 + 1e-9, f
    for n in d["tree"]:
        assert n["self_ns"] <= n["total_ns"], n


def test_exact_calls(rep):
    _, funcs, _ = rep
    got = {name: f["calls"] for name, f in funcs.items()}
    assert got == CALLTREE_COUNTS


def test_times(rep):
    d, funcs, _ = rep
    tot = {name: f["total_ns"] for name, f in funcs.items()}
    assert tot["slow_io"] >= 20_000_000, "slow_io sleeps 20 ms: %s" % funcs["slow_io"]
    # every function has a single caller, so a caller includes its callees' totals
    assert tot["main"] >= tot["run"]
    assert tot["run"] >= tot["parse"] + tot["compute"] + tot["fib"] + tot["slow_io"]
    assert tot["compute"] >= tot["leaf_add"] + tot["leaf_mul"]
    assert tot["main"] <= d["duration_ns"]
    for name, f in funcs.items():
        assert f["self_ns"] <= f["total_ns"], f
    # self times add up to main's total (everything runs inside main)
    assert sum(f["self_ns"] for f in funcs.values()) == tot["main"]


def test_recursion_counted_once(rep):
    """fib's flat total is the outermost fib call, not the sum over its 177 calls."""
    _, funcs, tree = rep
    fib = funcs["fib"]
    outer = tree["main>run>fib"]
    assert outer["calls"] == 1
    assert fib["total_ns"] == outer["total_ns"]
    assert fib["max_ns"] == outer["total_ns"]
    # the sum over all calls (avg is per call) is several times more
    assert fib["avg_ns"] * fib["calls"] > 2 * fib["total_ns"]
    # fib's self time is all of the outermost call: fib calls nothing else
    assert fib["self_ns"] == fib["total_ns"]


def test_tree(rep):
    _, funcs, tree = rep
    assert tree["main>run>compute>leaf_add"]["calls"] == 20
    assert tree["main>run>compute>leaf_mul"]["calls"] == 10
    assert tree["main>run>compute"]["calls"] == 5
    assert tree["main>run>parse"]["calls"] == 3
    assert tree["main>run>slow_io"]["total_ns"] >= 20_000_000
    assert tree["main"]["total_ns"] == funcs["main"]["total_ns"]
    # fib(10): one path per recursion level, 177 calls in all
    fibs = {k: n for k, n in tree.items() if k.startswith("main>run>fib")}
    assert sum(n["calls"] for n in fibs.values()) == 177
    assert max(k.count(">") for k in fibs) == 2 + 9  # fib(10) .. fib(1)
    assert set(tree) == {"main", "main>run", "main>run>parse", "main>run>compute",
                         "main>run>compute>leaf_add", "main>run>compute>leaf_mul",
                         "main>run>slow_io"} | set(fibs)


def test_options(archive, rep):
    d, funcs, _ = rep
    top = json.loads(report("--format", "json", "--sort", "calls", "--top", "2", archive).stdout)
    assert [f["name"] for f in top["functions"]] == ["fib", "leaf_add"]
    deep = json.loads(report("--format", "json", "--depth", "2", "--no-tree", archive).stdout)
    assert deep["tree"] == [] and len(deep["functions"]) == len(funcs)
    shallow = json.loads(report("--format", "json", "--depth", "2", "--tree-only", archive).stdout)
    assert [n["path"] for n in with_paths(shallow["tree"])] == [["main"], ["main", "run"]]
    assert shallow["functions"] == []


@pytest.mark.parametrize("opt,what", [("--pid", "pid"), ("--tid", "thread")])
def test_task_not_in_recording(archive, opt, what):
    """A pid or tid the recording does not have is an error naming it, as convert's
    (report printed an empty table and exited 0: a typo read as 'no calls')."""
    p = run_bpfprof(["report", opt, "2147483647", archive])
    assert p.returncode == 1, describe(p)
    assert len(p.stderr.splitlines()) == 1 and p.stdout == "", describe(p)
    assert p.stderr.startswith("bpfprof: %s 2147483647 is not in %s (" % (what, archive)), \
        describe(p)


def test_pretty(archive):
    out = report(archive).stdout
    lines = out.splitlines()
    assert lines[0].startswith("command: ") and "calltree" in lines[0], out
    assert "lost records: 0" in lines[0] and "calls: 218" in lines[0], out
    assert any(l.rstrip().endswith("leaf_add") for l in lines), out
    # the tree indents callees two spaces a level
    assert any(l.endswith("        leaf_add") for l in lines), out


def test_csv(archive):
    out = report("--format", "csv", archive).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["name"]: int(r["calls"]) for r in rows} == CALLTREE_COUNTS
    assert rows[0]["name"] == "main"  # sorted by total


def test_default_file_and_no_root(archive):
    """Without FILE, ./bpfprof.data; report needs no privileges (runs as nobody)."""
    # not under tmp_path: pytest's base directory is 0700, closed to nobody
    with nobody_dir("bpfprof-report-") as (d, exe):
        shutil.copy(archive, os.path.join(d, "bpfprof.data"))
        os.chmod(os.path.join(d, "bpfprof.data"), 0o644)
        p = subprocess.run([exe, "report", "--format", "json"], cwd=d, capture_output=True,
                           text=True, timeout=30, preexec_fn=as_nobody)
    assert p.returncode == 0, describe(p)
    assert {f["name"]: f["calls"] for f in json.loads(p.stdout)["functions"]} == CALLTREE_COUNTS


@pytest.mark.parametrize("args", [
    ["/nonexistent/x.bpfprof"],
    ["--sort", "bogus", "ARCHIVE"],
    ["--format", "xml", "ARCHIVE"],
    ["--top", "0", "ARCHIVE"],
    ["--depth", "0", "ARCHIVE"],
    ["--depth", "-1", "ARCHIVE"],
    ["--no-tree", "--tree-only", "ARCHIVE"],
    ["a", "b"],
    ["--bogus", "ARCHIVE"],
    ["ARCHIVE", "--sort"],
    [str(REPO / "README.md")],
])
def test_errors(args, archive):
    """Each a usage error of its own: the options' cases are given a real archive,
    so the error is not the missing ./bpfprof.data (--top 0 passed that way while
    report printed every function for it)."""
    p = run_bpfprof(["report"] + [str(archive) if a == "ARCHIVE" else a for a in args])
    assert p.returncode > 0, describe(p)
    errs = [l for l in p.stderr.splitlines() if l.startswith("bpfprof: ")]
    assert len(errs) == 1, "want one 'bpfprof: ' error line\n" + describe(p)
    assert p.stdout == "", describe(p)
    if "ARCHIVE" in args:
        assert p.returncode == 2 and "bpfprof.data" not in p.stderr, describe(p)


def test_truncated_archive(archive, tmp_path):
    cut = tmp_path / "cut.bpfprof"
    data = archive.read_bytes()
    cut.write_bytes(data[:len(data) // 2])
    p = run_bpfprof(["report", cut])
    assert p.returncode > 0, describe(p)
    assert any(l.startswith("bpfprof: ") for l in p.stderr.splitlines()), describe(p)
    assert p.stdout == "", "a report of half an archive was printed as complete\n" + describe(p)


@pytest.mark.parametrize("size", [8, 16, 64])
def test_partial_of_a_header(archive, tmp_path, size):
    """Cut inside the header: --partial has nothing to read, and its error says
    so (it advised --partial to a user who had just given it)."""
    cut = tmp_path / "cut.bpfprof"
    cut.write_bytes(archive.read_bytes()[:size])
    p = run_bpfprof(["report", "--partial", cut])
    assert p.returncode == 1 and p.stdout == "", describe(p)
    assert len(p.stderr.splitlines()) == 1, describe(p)
    assert p.stderr.startswith("bpfprof: %s: truncated archive (" % cut), describe(p)
    assert "--partial reads" not in p.stderr, describe(p)
    # without --partial, the advice stays
    p = run_bpfprof(["report", cut])
    assert p.returncode == 1 and "--partial reads its complete blocks" in p.stderr, describe(p)


def test_deep_recursion_bounded(tmp_path):
    """recurse 20000 deep: the report (pretty, JSON, CSV tree) stays linear in the
    depth (it grew with its square: 400 MB pretty, 1.2 GB JSON), and so does view."""
    depth = 20000
    arch = tmp_path / "deep.bpfprof"
    p = run_bpfprof(["record", "-q", "-o", arch, "--", prog_path("recurse"), str(depth)])
    assert p.returncode == 0, describe(p)
    for fmt in ("pretty", "json", "csv"):
        args = ["--tree-only"] if fmt == "csv" else []
        out = report("--format", fmt, *args, arch).stdout
        # one line per level (fewer when the kernel lost return probes past 64 deep:
        # those frames are still there, flagged), each of bounded length
        assert len(out) < depth * 200, (fmt, len(out))
        if fmt == "json":
            tree = json.loads(out)["tree"]
            assert max(n["depth"] for n in tree) == depth + 1  # main, then down x depth
            assert {n["name"] for n in tree} == {"main", "down"}
        if fmt == "pretty":
            assert re.search(r"\[%d\] down$" % (depth + 1), out, re.M), out[-500:]
    # view keeps the functions table only: its memory stays small
    v = subprocess.Popen([str(BPFPROF), "view", str(arch)], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        url = v.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), v.stderr.read()
        for path, most in (("report.json", 1 << 20), ("info.json", 1 << 20),
                           ("profile/profile.speedscope.json", 10 << 20)):
            with urllib.request.urlopen(url + path, timeout=60) as r:
                body = r.read()
            assert r.status == 200 and len(body) < most, (path, len(body))
        with open("/proc/%d/status" % v.pid) as f:
            hwm = int(re.search(r"^VmHWM:\s+(\d+) kB", f.read(), re.M).group(1))
        assert hwm < 200 * 1024, "view peak RSS %d kB" % hwm
    finally:
        v.send_signal(signal.SIGINT)
        assert v.wait(timeout=15) == 0
