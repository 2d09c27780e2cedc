# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""-F LIB:GLOB for files a process dlopens later from a directory found at
run time, named by file name only (user/capture/dlfollow.c): the process is
held at the dynamic linker's _dl_debug_state while the new file is probed.

tests/progs/plugins (see its facts) loads plugins.d/libplug_a.so, then
libplug_b.so, from beside its executable; neither is in the linker's
directories, so nothing matches 'libplug_*' when the recording starts.
"""

import os
import re
import shutil
import subprocess
import time
from collections import Counter

import pytest

from conftest import (BPFPROF, REPO, assert_ok, bpfprof_popen, kill_bpfprof_during_a_hold,
                      kill_group, load_trace, proc_stat, prog_path, read_until)
from trace_util import CALL_FLAGS, assert_nesting, chain, counts, xevents

OUTPUT = "plugins: a=45 b=42 worker=200010000\n"
PATTERN = "libplug_*:plug_*"
RESULTS = [3, 6, 9, 12, 15, 7, 14, 21]     # plug_work(k)'s k * M, in call order
WAITING = ("bpfprof: no file named 'libplug_*' is loaded or in the linker's directories yet: "
           "probed when the process loads one")


def by_module(ev):
    return dict(Counter((e["name"], e["args"]["module"]) for e in ev))


def check_plugins(trace, pid):
    """Every plug_ call of both plugins, exact, whole and nested, on the main
    thread; each constructor before its plugin's work."""
    ev = [e for e in xevents(trace) if e["name"].startswith("plug_")]
    assert by_module(ev) == {
        ("plug_ctor", "libplug_a.so"): 1, ("plug_init", "libplug_a.so"): 1,
        ("plug_work", "libplug_a.so"): 5, ("plug_leaf", "libplug_a.so"): 5,
        ("plug_ctor", "libplug_b.so"): 1, ("plug_init", "libplug_b.so"): 1,
        ("plug_work", "libplug_b.so"): 3, ("plug_leaf", "libplug_b.so"): 3,
    }, by_module(ev)
    for e in ev:
        assert (e["pid"], e["tid"]) == (pid, pid), e
        assert not any(e["args"].get(k) for k in CALL_FLAGS), e
    calls = assert_nesting(ev)
    for c in calls:
        want = {"plug_ctor": [], "plug_init": ["plug_ctor"], "plug_work": [],
                "plug_leaf": ["plug_work"]}[c.name]
        assert chain(c)[:-1] == want, (c, chain(c))
        if c.parent:
            assert c.parent.ev["args"]["module"] == c.ev["args"]["module"], c
    first = {}
    for c in sorted(calls, key=lambda c: c.ts):
        first.setdefault((c.name, c.ev["args"]["module"]), c)
    last_a_work = max(c.end for c in calls
                      if c.name == "plug_work" and c.ev["args"]["module"] == "libplug_a.so")
    assert first[("plug_ctor", "libplug_a.so")].end <= first[("plug_work", "libplug_a.so")].ts
    assert last_a_work <= first[("plug_ctor", "libplug_b.so")].ts
    assert first[("plug_ctor", "libplug_b.so")].end <= first[("plug_work", "libplug_b.so")].ts
    # the plugins' bpfprof.h probes came in with them: one event per plug_work, inside it
    works = sorted((c for c in calls if c.name == "plug_work"), key=lambda c: c.ts)
    marks = sorted((e for e in xevents_of(trace, "event") if e["ph"] == "i"), key=lambda e: e["ts"])
    assert [(e["name"], e["args"]["value"]) for e in marks] == \
        [("plug-result", v) for v in RESULTS], marks
    for e, w in zip(marks, works):
        assert e["tid"] == pid and w.ts <= e["ts"] <= w.end, (e, w)


def xevents_of(trace, cat):
    return [e for e in trace["traceEvents"] if e.get("cat") == cat]


def loaded_lines(stderr, pid=None):
    """bpfprof's "pid N loaded FILE: K functions traced" lines (of pid)."""
    rx = re.compile(r"^bpfprof: pid %s loaded " % (pid if pid else r"\d+"))
    return [l for l in stderr.splitlines() if rx.match(l)]


def test_plugins_by_file_name(record):
    """Only library patterns: the process is held at each dlopen; every call
    of each plugin is traced, its constructor's too."""
    r = record("plugins", opts=["-F", PATTERN])
    assert_ok(r)
    assert r.proc.stdout == OUTPUT, r.describe()
    pid = {e["pid"] for e in xevents(r.trace)}
    assert len(pid) == 1, pid
    pid = pid.pop()
    check_plugins(r.trace, pid)
    assert WAITING in r.stderr_lines, r.describe()
    # the summary tells the two plugins' functions of the same name apart
    rows = ["  ".join(l.rsplit("  ", 2)[1:]) for l in r.stderr_lines
            if re.match(r"^\s+\d+\s+\S", l)]
    assert sorted(rows) == sorted("%s  [libplug_%s.so]" % (f, p) for f in
                                  ("plug_ctor", "plug_init", "plug_work", "plug_leaf")
                                  for p in "ab"), r.describe()
    assert [l.rsplit("/", 1)[1] for l in loaded_lines(r.proc.stderr, pid)] == [
        "libplug_a.so: 4 functions traced", "libplug_b.so: 4 functions traced"], r.describe()


def test_plugins_by_file_name_with_keeper_and_threads(record):
    """With executable functions too (and the exception hooks, libstdc++
    being linked): the keeper holds only the dlopen'ing thread; the worker
    thread's 20000 calls stay exact across both loads."""
    r = record("plugins", opts=["-F", "before_load", "-F", "worker_step", "-F", PATTERN])
    assert_ok(r)
    assert r.proc.stdout == OUTPUT, r.describe()
    ev = xevents(r.trace)
    c = counts(ev)
    assert c["before_load"] == 1 and c["worker_step"] == 20000, dict(c)
    pid = next(e["pid"] for e in ev if e["name"] == "before_load")
    workers = {e["tid"] for e in ev if e["name"] == "worker_step"}
    assert len(workers) == 1 and pid not in workers, workers
    assert not [e for e in ev if e["name"] == "worker_step" and
                any(e["args"].get(k) for k in CALL_FLAGS)]
    check_plugins(r.trace, pid)


def test_usdt_by_file_name(record):
    """-U with a file name nothing matches yet: the probe goes into each
    plugin as it is loaded and fires once per plug_work, with its argument;
    a probe no loaded file has is warned of at the end."""
    r = record("plugins", opts=["-U", "libplug_*:plugin:work", "-U", "libplug_*:plugin:nosuch",
                                "-F", "before_load"])
    assert_ok(r)
    assert r.proc.stdout == OUTPUT, r.describe()
    pid = next(e["pid"] for e in xevents(r.trace) if e["name"] == "before_load")
    probes = sorted(xevents_of(r.trace, "usdt"), key=lambda e: e["ts"])
    assert [(e["name"], e["args"]["args"]) for e in probes] == \
        [("plugin:work", [v]) for v in RESULTS], probes
    assert {(e["pid"], e["tid"]) for e in probes} == {(pid, pid)}
    attached = [l for l in r.stderr_lines if l.endswith(": USDT probe plugin:work attached")]
    assert [re.sub(r".*/", "", l) for l in attached] == \
        ["libplug_a.so: USDT probe plugin:work attached",
         "libplug_b.so: USDT probe plugin:work attached"], r.describe()
    assert ("bpfprof: warning: no file with the probe of -U 'libplug_*:plugin:nosuch' was "
            "loaded: it never fired") in r.stderr_lines, r.describe()
    assert not [l for l in r.stderr_lines if "plugin:nosuch attached" in l], r.describe()


def test_plugins_excluded_by_file_name(record):
    """-N with a file name applies to the files found later as well."""
    r = record("plugins", opts=["-F", PATTERN, "-N", "libplug_b*:*", "-N", "libplug_*:plug_leaf"])
    assert_ok(r)
    assert r.proc.stdout == OUTPUT, r.describe()
    ev = xevents(r.trace)
    assert by_module(ev) == {
        ("plug_ctor", "libplug_a.so"): 1, ("plug_init", "libplug_a.so"): 1,
        ("plug_work", "libplug_a.so"): 5}, by_module(ev)


def test_name_never_loaded_warns(record):
    """A file name nothing loads: the program runs as usual, bpfprof says so
    at the start and, once more, at the end, and exits with its status."""
    r = record("plugins", opts=["-F", "libnomatch*:x"])
    assert_ok(r)
    assert r.proc.stdout == OUTPUT, r.describe()
    assert xevents(r.trace) == []
    assert ("bpfprof: no file named 'libnomatch*' is loaded or in the linker's directories "
            "yet: probed when the process loads one") in r.stderr_lines, r.describe()
    assert ("bpfprof: warning: no file matching -F 'libnomatch*:x' was loaded: nothing "
            "traced from it") in r.stderr_lines, r.describe()


def test_plugins_by_file_name_attach(tmp_path):
    """attach --pid to a process that loads its plugins afterwards."""
    out = tmp_path / "t.json"
    t = subprocess.Popen([str(prog_path("plugins")), "wait"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0,
                         start_new_session=True)
    b = None
    try:
        read_until(t.stdout, r"^plugins: ready$", 20, "plugins' stdout")
        b = subprocess.Popen([str(BPFPROF), "attach", "--max-overhead", "off", "--pid", str(t.pid), "-F", PATTERN,
                              "-o", str(out)], cwd=REPO, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, bufsize=0)
        # printed once the linker is hooked, before the attach lets the target go
        _, early = read_until(b.stderr, r"^bpfprof: no file named 'libplug_\*'", 60,
                              "bpfprof's stderr")
        t.stdin.write(b"go\n")
        t.stdin.close()
        t.wait(timeout=60)
        rest = t.stdout.read()
        assert t.returncode == 0 and rest.decode() == OUTPUT, (t.returncode, rest)
        _, err = b.communicate(timeout=60)
        err = (early + err).decode(errors="replace")
        assert b.returncode == 0, err
    finally:
        for p in (t, b):
            if p and p.poll() is None:
                p.kill()
                p.wait()
    check_plugins(load_trace(out), t.pid)
    assert len(loaded_lines(err, t.pid)) == 2, err


def test_plugins_loop_exact(record):
    """300 dlopen/dlclose rounds of the same file: probed once, every call
    of every round traced (12 per round: ctor, init, 5 work, 5 leaf)."""
    r = record("plugins", "loop", "300", opts=["-F", PATTERN])
    assert_ok(r)
    assert r.proc.stdout == "plugins: loops=300 sum=13500\n", r.describe()
    ev = xevents(r.trace)
    assert by_module(ev) == {("plug_ctor", "libplug_a.so"): 300, ("plug_init", "libplug_a.so"): 300,
                             ("plug_work", "libplug_a.so"): 1500,
                             ("plug_leaf", "libplug_a.so"): 1500}, by_module(ev)
    assert_nesting(ev)
    assert len(loaded_lines(r.proc.stderr)) == 1, r.describe()


def test_bpfprof_killed_while_following_dlopen(tmp_path):
    """bpfprof SIGKILLed while the target waits at a dlopen for it: bpfprof
    is stopped first, so that the target's next dlopen is certain to wait;
    once it does, bpfprof is killed.  The target is let go all the same
    (bpfprof's guard), finishes its 3000 rounds and prints its result."""
    b = bpfprof_popen(["record", "-F", PATTERN, "-o", str(tmp_path / "t.json"), "--",
                       str(prog_path("plugins")), "loop", "3000"],
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        m, _ = read_until(b.stderr, r"^bpfprof: pid (\d+) loaded ", 60, "bpfprof's stderr")
        pid = int(m.group(1))
        kill_bpfprof_during_a_hold(b, lambda: proc_stat(pid)[0] in ("T", "t"),
                                   "pid %d, at a dlopen," % pid)
        # the target shares bpfprof's stdout: its last line comes once it has run to the end
        read_until(b.stdout, r"^plugins: loops=3000 sum=135000$", 120, "the target's stdout")
        deadline = time.monotonic() + 60
        while os.path.exists("/proc/%d" % pid):
            assert time.monotonic() < deadline, "pid %d still there after its result" % pid
            time.sleep(0.05)
    finally:
        kill_group(b)   # the target too, if the test failed


# ------------------------------------------------------------------ real programs

PERL = "/usr/bin/perl"


def test_perl_xs_module_by_file_name(record):
    """Debian's perl (perl-base, always installed) dlopens an XS module from
    its own auto/ directory when a script uses it: `use POSIX` loads
    auto/POSIX/POSIX.so and calls its boot_POSIX exactly once."""
    r = record(PERL, "-MPOSIX", "-e", "print floor(2.5), qq(\\n)",
               opts=["-F", "POSIX.so:boot_POSIX"])
    assert_ok(r)
    assert r.proc.stdout == "2\n", r.describe()
    ev = xevents(r.trace)
    assert by_module(ev) == {("boot_POSIX", "POSIX.so"): 1}, by_module(ev)
    assert any(l.endswith("/auto/POSIX/POSIX.so: 1 function traced") for l in r.stderr_lines), \
        r.describe()


PYTHON = "/usr/bin/python3.11"
JSON_DIR = "/usr/lib/python3.11/lib-dynload"


@pytest.mark.skipif(not os.path.isdir(JSON_DIR), reason="needs Debian's python3.11")
def test_python_module_from_own_directory_by_file_name(record, tmp_path):
    """A copy of _json put first on sys.path: Python dlopens that copy, not
    the one in lib-dynload (probed at the start too); the copy is probed when
    it is mapped and its init function is seen exactly once."""
    src = next(f for f in os.listdir(JSON_DIR) if f.startswith("_json.cpython"))
    mine = tmp_path / "mods"
    mine.mkdir()
    shutil.copy(os.path.join(JSON_DIR, src), mine / src)
    code = ("import sys; sys.path.insert(0, %r); import _json, json; "
            "print(_json.__file__ == %r, json.dumps([1]))" % (str(mine), str(mine / src)))
    r = record(PYTHON, "-c", code, opts=["-F", "_json.cpython*:PyInit__json"])
    assert_ok(r)
    assert r.proc.stdout == "True [1]\n", r.describe()
    calls = [e for e in xevents(r.trace) if e["name"] == "PyInit__json"]
    assert len(calls) == 1, r.describe()
    assert loaded_lines(r.proc.stderr) == [
        "bpfprof: pid %d loaded %s: 1 function traced" % (calls[0]["pid"], mine / src)], \
        r.describe()
