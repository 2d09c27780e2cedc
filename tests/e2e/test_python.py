# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Python calls of Debian's python3.11, exact (tests/progs/py/*.py).

Every assertion is a fact the script guarantees: call counts, nesting,
threads, which frames an exception crosses, how often a generator or a
coroutine suspends.  Nothing depends on timing.
"""

import collections
import json
import os

import pytest

from conftest import REPO, attach_to_loop, load_trace, prog_path, run_bpfprof
from trace_util import chain, format_problems, nesting_problems, xevents

PYTHON = "/usr/bin/python3.11"
PY = REPO / "tests" / "progs" / "py"
FLAGS = ("suspended", "resumed", "raised", "began_before_recording", "unwound", "unfinished")


@pytest.fixture(autouse=True)
def _python():
    if not os.access(PYTHON, os.X_OK):
        pytest.skip("%s missing (Debian python3.11)" % PYTHON)


def record_py(record, script, opts=()):
    r = record(PYTHON, str(PY / script), opts=list(opts))
    assert r.rc == 0, r.describe()
    ev = xevents(r.trace)
    calls, probs = nesting_problems(ev, root_depth=None)
    assert not probs, probs[:5]
    return r, calls


def own(calls, script):
    """The calls of the script's own functions (module = its file name)."""
    return [c for c in calls if c.ev["args"].get("module") == script]


def flags(c):
    return tuple(k for k in FLAGS if c.ev["args"].get(k))


def edges(trace, kind):
    return [e for e in trace["traceEvents"]
            if e.get("cat") == "edge" and e.get("ph") == "s" and e.get("name") == kind]


def test_recursion_counts_and_nesting(record):
    r, calls = record_py(record, "recurse.py")
    mine = own(calls, "recurse.py")
    n = collections.Counter(c.name for c in mine)
    assert n == {"fib": 1973, "main": 1, "<module>": 1}, n
    assert all(not flags(c) for c in mine)
    fibs = [c for c in mine if c.name == "fib"]
    # every fib runs inside main, inside the module, with nothing native between
    for c in fibs:
        ch = chain(c)
        assert ch[ch.index("<module>"):ch.index("main") + 1] == ["<module>", "main"], ch
        assert set(ch[ch.index("main") + 1:]) == {"fib"}, ch
    assert max(chain(c).count("fib") for c in fibs) == 15
    assert "Python calls" in r.proc.stderr


def test_deep_recursion_is_exact(record, tmp_path):
    """Python calls end by USDT probes: 200 deep is exact, and diff times every call."""
    r, calls = record_py(record, "deep.py")
    mine = own(calls, "deep.py")
    n = collections.Counter(c.name for c in mine)
    assert n == {"down": 600, "main": 1, "<module>": 1}, n
    assert all(not flags(c) and not c.ev["args"].get("end_inferred") for c in mine)
    assert "too deep" not in r.proc.stderr, r.describe()
    for c in mine:
        if c.name == "down":
            assert c.parent.name in ("down", "main"), chain(c)
    depths = collections.Counter(chain(c).count("down") for c in mine if c.name == "down")
    assert depths == {k: 3 for k in range(1, 201)}, depths
    # every call of both recordings is timed, none left out as inexact
    arch = []
    for i in range(2):
        a = record(PYTHON, str(PY / "deep.py"), out="deep%d.bpfprof" % i)
        assert a.rc == 0, a.describe()
        arch.append(str(a.out))
    d = run_bpfprof(["diff", "--format", "json"] + arch)
    assert d.returncode in (0, 1), d.stderr
    row = [f for f in json.loads(d.stdout)["functions"] if f["function"] == "down"]
    assert len(row) == 1, d.stdout[:2000]
    for side in ("base", "new"):
        assert row[0][side]["calls"] == 600 and row[0][side]["timed_calls"] == 600, row


def test_threads_known_counts(record):
    r, calls = record_py(record, "threads.py")
    leaf = collections.Counter(c.tid for c in own(calls, "threads.py") if c.name == "leaf")
    main_tid = [c.tid for c in own(calls, "threads.py") if c.name == "<module>"]
    assert len(main_tid) == 1
    assert sorted(leaf.values()) == [7, 100, 250], leaf
    assert leaf[main_tid[0]] == 7
    for c in own(calls, "threads.py"):
        if c.name == "leaf":
            assert c.parent is not None and c.parent.name == "work", chain(c)


def test_exception_crosses_three_frames(record):
    r, calls = record_py(record, "raises.py")
    mine = {c.name: c for c in own(calls, "raises.py")}
    assert set(mine) == {"<module>", "top", "a", "b", "c"}
    assert [flags(mine[n]) for n in ("c", "b", "a")] == [("raised",)] * 3
    assert flags(mine["top"]) == () and flags(mine["<module>"]) == ()
    assert chain(mine["c"])[-5:] == ["<module>", "top", "a", "b", "c"]


def test_generator_slices_and_resume_edges(record):
    r, calls = record_py(record, "gen.py")
    g = sorted((c for c in own(calls, "gen.py") if c.name == "gen"), key=lambda c: c.ts)
    # 9 yields, then the return: 10 runs of one frame
    assert [flags(c) for c in g] == \
        [("suspended",)] + [("suspended", "resumed")] * 8 + [("resumed",)]
    assert all(c.parent is not None and c.parent.name == "consume" for c in g)
    ids = {c.ev["args"]["id"] for c in g}
    res = [e for e in edges(r.trace, "resume") if e["args"]["from"] == "gen"]
    assert len(res) == 9 and all(e["args"]["from_id"] in ids and e["args"]["to_id"] in ids
                                 for e in res)


def test_asyncio_two_tasks(record):
    r, calls = record_py(record, "tasks.py")
    w = [c for c in own(calls, "tasks.py") if c.name == "worker"]
    n = collections.Counter(flags(c) for c in w)
    # worker(3) and worker(5): a first run, an await each, then the return
    assert n == {("suspended",): 2, ("suspended", "resumed"): 6, ("resumed",): 2}, n
    res = [e for e in edges(r.trace, "resume") if e["args"]["from"] == "worker"]
    assert len(res) == 8 and all(e["args"]["to"] == "worker" for e in res)


def test_sqlite3_steps_nest_in_python(record):
    r, calls = record_py(record, "sql.py", opts=["-F", "libsqlite3.so*:sqlite3_step"])
    steps = [c for c in calls if c.name == "sqlite3_step"]
    assert steps
    for c in steps:
        py = [n for n in chain(c) if n != "sqlite3_step"]
        assert py[-1] in ("setup", "query"), chain(c)
    queries = [c for c in own(calls, "sql.py") if c.name == "query"]
    assert len(queries) == 5
    assert all(any(k.name == "sqlite3_step" for k in q.children) for q in queries)


def test_py_pattern_selects(record):
    r, calls = record_py(record, "recurse.py", opts=["-F", "py:fib"])
    assert collections.Counter(c.name for c in calls) == {"fib": 1973}
    r, calls = record_py(record, "recurse.py", opts=["-F", "py:recurse.py:*", "-N", "py:fib"])
    assert collections.Counter(c.name for c in calls) == {"main": 1, "<module>": 1}


def test_py_pattern_needs_python(record):
    r = record("calltree", opts=["-F", "py:main"])
    assert r.rc != 0 and "not a CPython interpreter" in r.proc.stderr, r.describe()


def test_python_without_usdt_says_so(record):
    """CPython 3.11 on a shared libpython without USDT probes (tests/progs/pyshared)."""
    r = record(prog_path("pyshared"), str(PY / "recurse.py"))
    assert r.rc != 0 and "without USDT probes" in r.proc.stderr, r.describe()
    assert r.out is None or not r.out.exists()


def shim(tmp_path, python):
    """A pyenv-like shim: a bash script (through env) that execs another bash
    script (through env), which execs `python` with the arguments."""
    libexec = tmp_path / "libexec-run"
    libexec.write_text('#!/usr/bin/env bash\nset -e\nexec "%s" "$@"\n' % python)
    sh = tmp_path / "python3"
    sh.write_text('#!/usr/bin/env bash\nset -e\nprogram="${0##*/}"\nexec "%s" "$@"\n' % libexec)
    for f in (libexec, sh):
        f.chmod(0o755)
    return sh


def test_through_a_shim_python_calls_traced(record, tmp_path):
    """`record -- python3 x.py` where python3 is a shim (two bash scripts
    exec'ing CPython, as pyenv's): the exec'd CPython is traced as Python,
    exactly as when run directly, and the shells that only exec'd it are
    followed through, not traced (every bash function was traced: 271k calls
    for pyenv's shim)."""
    r = record(shim(tmp_path, PYTHON), str(PY / "recurse.py"))
    assert r.rc == 0, r.describe()
    ev = xevents(r.trace)
    calls, probs = nesting_problems(ev, root_depth=None)
    assert not probs, probs[:5]
    n = collections.Counter(c.name for c in own(calls, "recurse.py"))
    assert n == {"fib": 1973, "main": 1, "<module>": 1}, n
    mods = collections.Counter(e["args"].get("module") for e in ev)
    assert not [m for m in mods if m in ("bash", "env")], mods


def test_through_a_shim_python_without_usdt_exit_1(record, tmp_path):
    """The same shim in front of pyenv's CPython (built without USDT probes):
    the line a direct run prints, and exit 1 (it was 0, with a warning)."""
    pyenv = os.path.expanduser("~/.pyenv/versions/3.11.7/bin/python3.11")
    if not os.access(pyenv, os.X_OK):
        pytest.skip("no pyenv build of python3.11 here")
    r = record(shim(tmp_path, pyenv), str(PY / "recurse.py"))
    assert r.rc == 1, r.describe()
    assert "bpfprof: cannot trace the Python calls of " in r.proc.stderr, r.describe()
    assert "without USDT probes" in r.proc.stderr, r.describe()
    if r.trace is not None:
        mods = collections.Counter(e["args"].get("module") for e in xevents(r.trace))
        assert "bash" not in mods, mods


def test_attach_and_detach_keeps_it_running(tmp_path):
    out = tmp_path / "trace.json"
    p = attach_to_loop(PYTHON, tmp_path, "--duration", "1s", "-o", out)
    assert p.returncode == 0, p.stderr
    trace = load_trace(out)
    assert not format_problems(trace)
    steps = [e for e in xevents(trace) if e["name"] == "step"]
    assert steps and all(e["args"]["module"] == "loop.py" for e in steps)


def test_sampling_python_frames_3_to_1(record):
    """burn.py's a() and b() run one loop body 3:1 times: their shares of
    the samples, at 4999 Hz over ~1.2 s of CPU (some 6000 samples: the
    share's standard error is ~0.6%), are within 5 points of 75/25, and
    every stack in them is rooted at <module> through main (Python frames
    in place of the interpreter's, native frames around them kept)."""
    r = record(PYTHON, str(PY / "burn.py"), "800", opts=["--sample=4999"], out="cpu.folded",
               timeout=180)
    assert r.rc == 0, r.describe()
    w = collections.Counter()
    for line in r.out.read_text().splitlines():
        stack, weight = line.rsplit(" ", 1)
        frames = stack.split(";")
        hot = [f for f in frames if f in ("a", "b")]
        if not hot:
            continue
        py = [f for f in frames if f in ("<module>", "main", "a", "b")]
        assert py == ["<module>", "main", hot[0]], stack
        # native frames stay: the interpreter's entry below (unless the native
        # stack was cut: a "[truncated]" root), C helpers above
        assert frames.index("<module>") > 0, stack
        assert frames[0] == "[truncated]" or "PyEval_EvalCode" in frames, stack
        w[hot[0]] += int(weight)
    total = w["a"] + w["b"]
    assert total >= 2000 * 200200, w  # at least ~2000 samples of 200.2 us
    assert abs(w["a"] / total - 0.75) < 0.05, w
