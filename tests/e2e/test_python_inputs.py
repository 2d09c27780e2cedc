# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""CPython builds other than Debian's python3.11 (a non-PIE executable with
the interpreter linked in and USDT probes): the interpreter linked into a
program of another name, PIE (tests/progs/pyembed) and fully static
(tests/progs/pyembed_static); a PIE executable on a shared libpython
without USDT probes, as pyenv's builds are, in a version bpfprof has offsets
for (3.11: tests/progs/pyshared, Debian's libpython3.11.so with its probe
notes removed) and one it has for its samples only (3.12: pyenv's, where ~/.pyenv has it;
bookworm has no CPython 3.12, so elsewhere those tests skip, and make test's
last lines say so).  What is traced is traced exactly; what is not is said,
never a silent empty trace.  (Without USDT probes and no other option:
tests/e2e/test_python.py.)"""

import collections
import os

import pytest

from conftest import PROGS, REPO, attach_to_loop
from trace_util import nesting_problems, xevents

PY = REPO / "tests" / "progs" / "py"
PYENV = os.path.expanduser("~/.pyenv/versions")
EMBEDDED = ["pyembed", "pyembed_static"]


def need(path, why):
    if not os.access(path, os.X_OK):
        pytest.skip("%s missing (%s)" % (path, why))
    return str(path)


def embedded(name):
    return need(PROGS / name, "make progs: needs python3.11-dev")


def shared():
    """CPython 3.11, PIE, on a shared libpython without USDT probes."""
    return embedded("pyshared")


def pyenv(version, exe):
    return need(os.path.join(PYENV, version, "bin", exe),
                "no pyenv build of CPython %s here, and Debian bookworm has none" % version)


def python_stacks(folded):
    """{a/b: samples} of burn.py's hot functions; every such stack's Python
    frames must be exactly <module>, main, the function."""
    w = collections.Counter()
    for line in folded.read_text().splitlines():
        stack, weight = line.rsplit(" ", 1)
        frames = stack.split(";")
        hot = [f for f in frames if f in ("a", "b")]
        if not hot:
            continue
        # the Python frames, from the module's on (pyembed's C main() is below them)
        assert "<module>" in frames, stack
        py = frames[frames.index("<module>"):]
        assert [f for f in py if f in ("<module>", "main", "a", "b")] == \
            ["<module>", "main", hot[0]], stack
        w[hot[0]] += 1
    return w


@pytest.mark.parametrize("name", EMBEDDED)
def test_embedded_interpreter_exact_calls(record, name):
    """Recognised by its Py_Version (the name says nothing): fib(15)'s 1973 calls."""
    r = record(embedded(name), str(PY / "recurse.py"))
    assert r.rc == 0, r.describe()
    calls, probs = nesting_problems(xevents(r.trace), root_depth=None)
    assert not probs, probs[:5]
    n = collections.Counter(c.name for c in calls if c.ev["args"].get("module") == "recurse.py")
    assert n == {"fib": 1973, "main": 1, "<module>": 1}, n


@pytest.mark.parametrize("name", EMBEDDED)
def test_embedded_interpreter_python_frames_in_samples(record, name):
    r = record(embedded(name), str(PY / "burn.py"), "300", opts=["--sample=999"],
               out="cpu.folded", timeout=120)
    assert r.rc == 0, r.describe()
    assert sum(python_stacks(r.out).values()) > 0, r.out.read_text()[:2000]


def test_shared_libpython_samples_show_python_frames(record):
    """No USDT probes, a PIE executable on libpython3.11.so: --sample needs
    neither, and finds the interpreter in the shared library."""
    r = record(shared(), str(PY / "burn.py"), "300",
               opts=["--sample=999"], out="cpu.folded", timeout=120)
    assert r.rc == 0, r.describe()
    assert "USDT" not in r.proc.stderr   # nothing asked of the probes: nothing to say
    assert sum(python_stacks(r.out).values()) > 0, r.out.read_text()[:2000]


def test_shared_libpython_native_functions_traced_and_python_calls_said_not(record):
    r = record(shared(), str(PY / "recurse.py"),
               opts=["-F", "libc.so*:malloc"])
    assert r.rc == 0, r.describe()
    warn = [l for l in r.stderr_lines if "its Python calls are not traced" in l]
    assert len(warn) == 1 and "without USDT probes" in warn[0], r.describe()
    # the interpreter allocates from its first steps: the native selection is traced
    assert set(e["name"] for e in xevents(r.trace)) == {"malloc"}, r.describe()


def test_pyenv_312_exact_calls_refused_says_why(record):
    p = pyenv("3.12.1", "python3.12")
    r = record(p, str(PY / "recurse.py"))
    assert r.rc != 0 and r.out is not None and not r.out.exists(), r.describe()
    assert "(CPython 3.12): bpfprof reads only the sampled stacks of this CPython version" in \
        r.proc.stderr, r.describe()
    assert "--sample profiles it" in r.proc.stderr


def test_pyenv_312_samples_show_the_python_frames(record):
    """3.12's frame chain read at each sample (its C activations' entry shims in place of
    3.11's is_entry): every stack through a() or b() runs <module>;main;a (or b), the
    interpreter loop's C frames replaced, no shim shown."""
    r = record(pyenv("3.12.1", "python3.12"), str(PY / "burn.py"), "200",
               opts=["--sample=999"], out="cpu.folded", timeout=120)
    assert r.rc == 0, r.describe()
    assert not [l for l in r.stderr_lines if "no offsets for" in l], r.describe()
    stacks = [ln.rpartition(" ")[0].split(";") for ln in r.out.read_text().splitlines()]
    ab = [s for s in stacks if "a" in s or "b" in s]
    assert ab, stacks[:5]
    for s in ab:
        i = s.index("a") if "a" in s else s.index("b")
        assert s[i - 2:i] == ["<module>", "main"], s
        assert "_PyEval_EvalFrameDefault" not in s[:i], s
    assert not any(f.startswith("<") and "trampoline" in f or f == "<shim>"
                   for s in stacks for f in s), [s for s in stacks if "trampoline" in ";".join(s)][:3]


def test_pyenv_312_attach_refused_and_the_program_runs_on(tmp_path):
    """attach to a CPython whose calls cannot be traced: the reason, exit 1,
    no output, and the program goes on to its correct end."""
    out = tmp_path / "t.json"
    p = attach_to_loop(pyenv("3.12.1", "python3.12"), tmp_path, "--duration", "1s", "-o", out)
    assert p.returncode == 1 and not out.exists(), p.stderr
    assert "(CPython 3.12): bpfprof reads only the sampled stacks" in p.stderr, p.stderr
