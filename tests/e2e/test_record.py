# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""`bpfprof record` end to end: trace tests/progs/* and check the exact facts
each program documents at the top of its source.

Every trace the `record` fixture parses is first checked against the format
contract (trace_util.format_problems): every X event has name, cat, ph, ts,
dur, pid, tid and args {depth, self_us, id, module}, ts/dur are numbers >= 0,
self_us <= dur, ids are unique.
"""

import os
import re
import shutil
import signal
import subprocess
import time
import uuid

import pytest

from conftest import (BPFPROF, NOBODY, REPO, Run, assert_ok, load_trace, nobody_dir, prog_path,
                      run_bpfprof)
from trace_util import (assert_nesting, chain, counts, format_problems, loss_events,
                        nesting_problems, process_names, thread_names, xevents)


def assert_error(r, out_path=None):
    """A failed run: non-zero exit, a `bpfprof: ` error line, no output file."""
    assert r.rc != 0, "bpfprof succeeded, want an error\n" + r.describe()
    assert r.rc > 0, "bpfprof died of signal %d\n%s" % (-r.rc, r.describe())
    assert any(l.startswith("bpfprof: ") for l in r.stderr_lines), \
        "no 'bpfprof: ' error line on stderr\n" + r.describe()
    if out_path is not None:
        assert not os.path.lexists(out_path), "%s was created by a failed run" % out_path


# --------------------------------------------------------------- calltree

CALLTREE_COUNTS = {"main": 1, "run": 1, "parse": 3, "compute": 5, "leaf_add": 20,
                   "leaf_mul": 10, "fib": 177, "slow_io": 1}


@pytest.fixture(scope="module")
def calltree_run(tmp_path_factory):
    """One traced run of calltree shared by the tests below (it is slow-ish)."""
    out = tmp_path_factory.mktemp("calltree") / "trace.json"
    proc = run_bpfprof(["record", "-o", out, "--", prog_path("calltree")])
    trace = load_trace(out) if out.exists() else None
    r = Run(proc, out, trace)
    assert_ok(r)
    probs = format_problems(trace)
    assert not probs, "trace format:\n  " + "\n  ".join(probs[:30])
    return r


def test_calltree_counts(calltree_run):
    """Every function of the source, exactly as often as it is called; nothing else
    (start-up glue such as _start/_init/frame_dummy is not traced by default)."""
    got = counts(xevents(calltree_run.trace))
    assert dict(got) == CALLTREE_COUNTS


def test_calltree_passes_stdout(calltree_run):
    assert "calltree: result=" in calltree_run.proc.stdout


def test_calltree_tree(calltree_run):
    ev = xevents(calltree_run.trace)
    calls = assert_nesting(ev, root_depth=0)
    by = {}
    for c in calls:
        by.setdefault(c.name, []).append(c)

    (main,) = by["main"]
    assert main.parent is None and main.depth == 0
    (run,) = by["run"]
    assert chain(run) == ["main", "run"] and run.depth == 1
    for name in ("parse", "compute", "slow_io"):
        for c in by[name]:
            assert chain(c) == ["main", "run", name], c
            assert c.depth == 2
    for name in ("leaf_add", "leaf_mul"):
        for c in by[name]:
            assert chain(c) == ["main", "run", "compute", name], c
            assert c.depth == 3
    for c in by["compute"]:
        assert counts(k.ev for k in c.children) == {"leaf_add": 4, "leaf_mul": 2}, c
    for c in by["parse"] + by["slow_io"] + by["leaf_add"] + by["leaf_mul"]:
        assert not c.children, "%r has children %r" % (c, c.children)

    # fib(10): one outermost call from run, the rest nested in fib; the
    # deepest chain is fib(10) .. fib(1): 10 frames, depths 2..11.
    outer = [c for c in by["fib"] if c.parent.name != "fib"]
    assert len(outer) == 1 and outer[0].parent is run and outer[0].depth == 2
    assert max(c.depth for c in by["fib"]) == 11
    assert all(len(c.children) in (0, 2) for c in by["fib"])

    # run's children in program order: parse x3, compute x5, fib, slow_io.
    order = [k.name for k in sorted(run.children, key=lambda k: k.ts)]
    assert order == ["parse"] * 3 + ["compute"] * 5 + ["fib", "slow_io"]


def test_calltree_durations(calltree_run):
    ev = xevents(calltree_run.trace)
    (slow,) = [e for e in ev if e["name"] == "slow_io"]
    assert 20000 <= slow["dur"] < 5e6, "slow_io sleeps 20 ms: dur %s us" % slow["dur"]
    (main,) = [e for e in ev if e["name"] == "main"]
    assert main["dur"] >= slow["dur"]
    for e in ev:
        assert e["args"]["self_us"] <= e["dur"] + 0.0025, e


def test_calltree_args(calltree_run):
    tr = calltree_run.trace
    ev = xevents(tr)
    assert not [e for e in ev if "unfinished" in e["args"]], "unfinished calls in a complete run"
    assert not loss_events(tr), "records lost on a 218-call run"
    assert {e["args"]["module"] for e in ev} == {"calltree"}
    pids = {e["pid"] for e in ev}
    assert len(pids) == 1
    (pid,) = pids
    assert {e["tid"] for e in ev} == {pid}, "calltree is single-threaded"
    assert pid in process_names(tr), "no process_name metadata for pid %d" % pid


def test_calltree_summary(calltree_run):
    """The summary goes to stderr: `bpfprof: ` lines (a table of functions may
    follow) with the number of calls and of lost records.  calltree itself
    writes nothing to stderr."""
    lines = [l for l in calltree_run.stderr_lines if l.startswith("bpfprof: ")]
    assert lines, "no 'bpfprof: ' summary on stderr\n" + calltree_run.proc.stderr
    assert any("lost" in l for l in lines), calltree_run.proc.stderr
    # 218 = sum(CALLTREE_COUNTS.values()): the summary reports the number of calls.
    assert any(re.search(r"\b218\b", l) for l in lines), calltree_run.proc.stderr


def test_quiet(record):
    """ASSUMPTION (lead may adapt): -q prints no summary, so with a target that
    writes nothing to stderr, stderr is empty."""
    r = record("calltree", opts=["-q"])
    assert_ok(r)
    assert r.proc.stderr == "", r.describe()
    assert len(xevents(r.trace)) == sum(CALLTREE_COUNTS.values())


# ---------------------------------------------------------------- selection

def test_select_include_exclude(record):
    r = record("calltree", opts=["-F", "leaf_*", "-N", "leaf_mul"])
    assert_ok(r)
    ev = xevents(r.trace)
    assert dict(counts(ev)) == {"leaf_add": 20}
    # Only traced functions count for depth: every leaf_add is a root.
    assert_nesting(ev, root_depth=0)


def test_select_several_includes(record):
    r = record("calltree", opts=["-F", "parse", "-F", "slow_io", "-F", "fib"])
    assert_ok(r)
    ev = xevents(r.trace)
    assert dict(counts(ev)) == {"parse": 3, "slow_io": 1, "fib": 177}
    calls = assert_nesting(ev, root_depth=0)
    assert max(c.depth for c in calls if c.name == "fib") == 9


# ------------------------------------------------------------------ recurse

@pytest.mark.parametrize("depth", [None, 20, 60])
def test_recurse(record, depth):
    """down() recursing D deep (default 50).  All depths here stay under the
    kernel's limit of 64 nested uretprobes per task (MAX_URETPROBE_DEPTH),
    counting main: beyond it the kernel silently skips the return probes."""
    d = depth or 50
    r = record("recurse", *([str(depth)] if depth else []))
    assert_ok(r)
    assert "recurse: depth=%d sum=%d" % (d, d * (d - 1) // 2) in r.proc.stdout
    ev = xevents(r.trace)
    assert dict(counts(ev)) == {"main": 1, "down": d}
    assert not [e for e in ev if "unfinished" in e["args"]]
    calls = assert_nesting(ev, root_depth=0)
    downs = sorted((c for c in calls if c.name == "down"), key=lambda c: c.depth)
    outer = downs[0]
    assert outer.parent is not None and outer.parent.name == "main"
    assert outer.depth == 1
    # one chain: each down has exactly one down inside it, except the innermost
    assert [c.depth for c in downs] == list(range(outer.depth, outer.depth + d))
    for a, b in zip(downs, downs[1:]):
        assert b.parent is a
    assert not downs[-1].children


def test_recurse_beyond_uretprobe_limit(record):
    """200 deep: past the kernel's 64 nested uretprobes the returns of the inner
    frames are never reported.  The target must still run correctly, every entry
    must be recorded, and the trace must stay valid (how the missing returns are
    closed is the tool's choice: flagged unfinished or closed at an outer return)."""
    r = record("recurse", "200")
    assert_ok(r)
    assert "recurse: depth=200 sum=19900" in r.proc.stdout
    ev = xevents(r.trace)
    assert dict(counts(ev)) == {"main": 1, "down": 200}
    # every entry was seen, so the depths are exact whatever closed the frames
    calls = assert_nesting(ev, root_depth=0)
    assert max(c.depth for c in calls) == 200


# ------------------------------------------------------------------ threads

def test_threads(record):
    r = record("threads")
    assert_ok(r)
    m = re.search(r"^threads: pid=(\d+)$", r.proc.stdout, re.M)
    assert m, r.describe()
    pid = int(m.group(1))
    workers = {int(t): (int(i), int(n)) for i, t, n in
               re.findall(r"^worker-(\d) tid=(\d+) ticks=(\d+)$", r.proc.stdout, re.M)}
    assert sorted(workers.values()) == [(0, 100), (1, 200), (2, 300), (3, 400)], r.proc.stdout

    ev = xevents(r.trace)
    assert {e["pid"] for e in ev} == {pid}, "every call belongs to process %d" % pid
    assert {e["tid"] for e in ev} == {pid} | set(workers)

    names = thread_names(r.trace)
    for tid, (i, n) in workers.items():
        assert names.get(tid) == "worker-%d" % i, "thread_name of %d: %r" % (tid, names.get(tid))
        mine = [e for e in ev if e["tid"] == tid]
        assert dict(counts(mine)) == {"worker": 1, "tick": n}, "tid %d (worker-%d)" % (tid, i)
    assert dict(counts(e for e in ev if e["tid"] == pid)) == {"main": 1}

    calls = assert_nesting(ev, root_depth=0)
    for c in calls:
        if c.name == "tick":
            assert chain(c) == ["worker", "tick"] and c.depth == 1
        elif c.name == "worker":
            assert c.parent is None and c.depth == 0
    assert not [e for e in ev if "unfinished" in e["args"]]
    assert not loss_events(r.trace)


def test_self_tail_call(record):
    """A function jumping back to its own entry (what `jmp f@plt` at the end
    of an exported library function does): every entry is a call, nested in
    the one before, all ending at the one return; nothing flagged."""
    r = record("tailcall")
    assert_ok(r)
    assert "tailcall: entries=20" in r.proc.stdout
    ev = xevents(r.trace)
    assert dict(counts(ev)) == {"main": 1, "run": 1, "countdown": 20}
    assert not [e for e in ev if set(e["args"]) & {"unwound", "began_before_recording",
                                                   "unfinished"}]
    calls = assert_nesting(ev, root_depth=0)
    outer = [c for c in calls if c.name == "countdown" and c.parent.name == "run"]
    assert len(outer) == 5
    for c in outer:
        chain_ = [c]
        while chain_[-1].children:
            assert len(chain_[-1].children) == 1
            chain_.append(chain_[-1].children[0])
        assert [x.name for x in chain_] == ["countdown"] * 4
        # one return for all four: their return events come back to back
        assert max(x.end for x in chain_) - min(x.end for x in chain_) < 1000


def test_threads_moving_between_cpus(record):
    """Call records are sent per CPU in batches; threads that move to another
    CPU in the middle of calls (thousands of times) still nest exactly."""
    r = record("migrate")
    assert_ok(r)
    m = re.search(r"^migrate: pid=(\d+) cpus=(\d+)$", r.proc.stdout, re.M)
    assert m, r.describe()
    pid, ncpus = int(m.group(1)), int(m.group(2))
    workers = {int(t): int(mv) for t, mv in
               re.findall(r"^worker-\d tid=(\d+) moves=(\d+)$", r.proc.stdout, re.M)}
    assert len(workers) == 3, r.proc.stdout
    if ncpus >= 2:
        assert all(mv >= 399 for mv in workers.values()), r.proc.stdout

    ev = xevents(r.trace)
    assert {e["tid"] for e in ev} == {pid} | set(workers)
    for tid in workers:
        mine = [e for e in ev if e["tid"] == tid]
        assert dict(counts(mine)) == {"worker": 1, "outer": 400, "inner": 800, "hop": 400,
                                     "leaf": 800}, tid
    calls = assert_nesting(ev, root_depth=0)
    for c in calls:
        want = {"worker": [], "outer": ["worker"], "inner": ["worker", "outer"],
                "hop": ["worker", "outer"], "leaf": ["worker", "outer", "inner"],
                "main": []}[c.name]
        assert chain(c)[:-1] == want, (c.name, chain(c))
    # inner, hop, inner: one after the other inside each outer()
    for c in calls:
        if c.name == "outer":
            kids = sorted(c.children, key=lambda k: k.ts)
            assert [k.name for k in kids] == ["inner", "hop", "inner"]
            assert kids[0].end <= kids[1].ts and kids[1].end <= kids[2].ts
    assert not [e for e in ev if "unfinished" in e["args"]]
    assert not loss_events(r.trace)


def test_launcher_calls_not_recorded(record):
    """bpfprof forks, holds and then execs the command; what its launcher
    calls in between (prctl, execv/execve in libc) is not the command's and
    is not in the trace: recording starts at the exec.  exitcode calls none
    of these functions, so the trace has no calls at all."""
    r = record("exitcode", opts=["-F", "libc.so*:execv*", "-F", "libc.so*:prctl",
                                 "-F", "libc.so*:read"])
    assert_ok(r, rc=7)
    assert dict(counts(xevents(r.trace))) == {}
    # and with the command's own functions, the command's first call is main
    r = record("exitcode")
    assert_ok(r, rc=7)
    assert dict(counts(xevents(r.trace))) == {"main": 1, "f": 1}


# ------------------------------------------------------------ exit status

def test_exit_status(record):
    r = record("exitcode")
    assert_ok(r, rc=7)
    assert dict(counts(xevents(r.trace))) == {"main": 1, "f": 1}


# ------------------------------------------------------- nothing silently lost

def test_many_calls_counted_or_loss_marked(record):
    """spin calls small() N times.  Either every call is in the trace, or
    records were lost and the trace says so with loss events."""
    n = 200000
    r = record("spin", str(n), opts=["-F", "small"], timeout=120)
    assert_ok(r)
    got = counts(xevents(r.trace))["small"]
    if not loss_events(r.trace):
        assert got == n, "%d of %d calls and no loss marker" % (got, n)
    else:
        assert got < n
        assert any("lost" in l for l in r.stderr_lines)


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("cmd", ["/nonexistent/bpfprof-no-such-command",
                                 "bpfprof-e2e-no-such-command"])
def test_command_not_found(record, cmd):
    r = record(cmd)
    assert_error(r, r.out)
    assert len(r.stderr_lines) == 1, "want exactly one error line\n" + r.describe()


def test_pattern_matches_nothing(record):
    r = record("calltree", opts=["-F", "nomatch_*"])
    assert_error(r, r.out)
    assert "nomatch_*" in r.proc.stderr, "the error names the pattern\n" + r.describe()


def test_output_dir_missing(tmp_path):
    out = "/nonexistent/dir/t.json"
    r = run_bpfprof(["record", "-o", out, "--", prog_path("calltree")])
    assert r.returncode != 0 and r.returncode > 0, r
    assert any(l.startswith("bpfprof: ") for l in r.stderr.splitlines()), r.stderr
    assert not os.path.lexists("/nonexistent/dir")


def test_output_parent_is_a_file(tmp_path):
    f = tmp_path / "afile"
    f.write_text("keep\n")
    r = run_bpfprof(["record", "-o", f / "t.json", "--", prog_path("calltree")])
    assert r.returncode > 0, r
    assert any(l.startswith("bpfprof: ") for l in r.stderr.splitlines()), r.stderr
    assert f.read_text() == "keep\n"


@pytest.mark.parametrize("fmt", [None, "chrome"])
def test_output_is_a_directory(tmp_path, fmt):
    """-o DIR: one line saying it is a directory (it said "cannot tell the
    format" from the name), with or without --format; the directory is left
    as it was."""
    opts = ["--format", fmt] if fmt else []
    r = run_bpfprof(["record", "-o", tmp_path] + opts + ["--", prog_path("calltree")])
    assert r.returncode == 1, r
    assert r.stderr.strip().splitlines() == [
        "bpfprof: cannot write '%s': is a directory" % tmp_path], r.stderr
    assert os.listdir(tmp_path) == []
    r = run_bpfprof(["convert", "-o", tmp_path, "--format", "chrome", "/nonexistent.bpfprof"])
    assert "is a directory" in r.stderr and r.returncode > 0, r.stderr


def test_process_named_as_started(tmp_path):
    """A command that is a symbolic link (redis-server -> redis-check-rdb) is
    exec'd as named: the process (its comm, and the trace's process and
    thread names) is the link's name, by path and through PATH; the functions'
    module stays the file's name.  It was named after the link's target."""
    d = tmp_path / "bin"
    d.mkdir()
    (d / "myserver").symlink_to(prog_path("calltree"))
    for how in ("path", "PATH"):
        out = tmp_path / ("%s.json" % how)
        argv = ["record", "-q", "-o", out, "--", d / "myserver" if how == "path" else "myserver"]
        if how == "path":
            p = run_bpfprof(argv)
        else:
            env = dict(os.environ, PATH="%s:%s" % (d, os.environ.get("PATH", "")))
            p = subprocess.run([str(BPFPROF)] + [str(a) for a in argv], cwd=REPO, env=env,
                               capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        t = load_trace(out)
        assert set(process_names(t).values()) == {"myserver"}, process_names(t)
        assert set(thread_names(t).values()) == {"myserver"}, thread_names(t)
        assert {e["args"]["module"] for e in xevents(t)} == {"calltree"}


def defined_dynamic_functions(path):
    """Function symbols `nm -D --defined-only` lists for `path`."""
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True,
                         text=True, check=True).stdout
    return [l.split()[-1] for l in out.splitlines() if len(l.split()) == 3
            and l.split()[1] in "TtWwi"]


def test_binary_without_symbols(record):
    """nosyms is linked with -s: no .symtab, and .dynsym holds only undefined
    imports (checked here with nm -D).  Its functions are still found, by
    their .eh_frame FDEs, and named nosyms+0xADDR: helper() 3 calls, main 1."""
    path = prog_path("nosyms")
    assert not defined_dynamic_functions(path)
    r = record("nosyms")
    assert_ok(r)
    c = counts(xevents(r.trace))
    assert all(n.startswith("nosyms+0x") for n in c), c
    assert sorted(c.values()) == [1, 3], c


def test_not_root():
    """Without root (nobody, no capabilities) record fails with one clear line."""
    with nobody_dir() as (d, exe):
        cmd = os.path.join(d, "exitcode")
        shutil.copy(prog_path("exitcode"), cmd)
        out = os.path.join(d, "t.json")
        os.chmod(d, 0o777)   # nobody could write the output: only privileges are missing
        p = subprocess.run(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                            "--clear-groups", "--inh-caps=-all", exe, "record", "-o", out,
                            "--", cmd],
                           cwd=d, capture_output=True, text=True, timeout=60)
        assert p.returncode != 0, p
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        assert lines and lines[0].startswith("bpfprof: "), p.stderr
        assert not os.path.exists(out)


def test_sudo_user_with_library_patterns(tmp_path, monkeypatch):
    """Under sudo the command runs as the invoking user, and with -F LIB:GLOB
    (dlopen following) too.  The user's groups are looked up before the fork:
    the child's initgroups() dlopened NSS modules and was held at the dynamic
    linker's hook while bpfprof still waited for the launch, for ever."""
    monkeypatch.setenv("SUDO_UID", str(NOBODY))
    monkeypatch.setenv("SUDO_GID", str(NOBODY))
    out = tmp_path / "t.json"
    p = run_bpfprof(["record", "-o", out, "-F", "libc.so*:geteuid", "--", "/usr/bin/id", "-u"])
    assert p.returncode == 0, p.stderr
    assert p.stdout == "%d\n" % NOBODY, p.stdout
    ev = xevents(load_trace(out))
    assert counts(ev)["geteuid"] >= 1, counts(ev)


# ----------------------------------------------------------------- Ctrl-C

def test_sigint_writes_trace(tmp_path):
    """Ctrl-C during a recording still writes a valid trace of what was captured.

    Behaviour tested (user/cmd/record.c, "like perf"): on SIGINT bpfprof ends
    the command with SIGTERM, records its exit, writes the file and exits
    128 + SIGINT = 130.  Only bpfprof gets the signal here, as with
    `kill -INT`; a terminal Ctrl-C would reach both.  Should the target
    survive anyway, the test kills it in `finally`.
    """
    token = "bpfprof-e2e-%s" % uuid.uuid4().hex
    forever = prog_path("forever")
    out = tmp_path / "trace.json"
    p = subprocess.Popen([str(BPFPROF), "record", "-o", str(out), "--", str(forever), token],
                         cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)

    def target_pids():
        # anchored: bpfprof's own command line contains the token too
        q = subprocess.run(["pgrep", "-f", "^%s %s$" % (re.escape(str(forever)), token)],
                           capture_output=True, text=True)
        return [int(x) for x in q.stdout.split() if int(x) != p.pid]

    try:
        deadline = time.monotonic() + 20
        while not target_pids():
            assert p.poll() is None, "bpfprof exited early: %s\n%s" % (p.returncode, p.communicate()[1])
            assert time.monotonic() < deadline, "forever never started"
            time.sleep(0.05)
        # until forever has looped a few times (a usleep, so a voluntary context
        # switch, per beat): calls to see, however busy the machine is
        (pid,) = target_pids()

        def switches():
            with open("/proc/%d/status" % pid) as f:
                return int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)$", f.read(), re.M).group(1))
        before = switches()
        while switches() - before < 5:
            assert time.monotonic() < deadline + 30, "forever made no progress"
            time.sleep(0.02)
        os.kill(p.pid, signal.SIGINT)
        try:
            _, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("bpfprof still running 30 s after SIGINT")
        assert p.returncode == 130, "exit %s after SIGINT, want 130\n%s" % (p.returncode, err)
        assert not target_pids(), "the command still runs after bpfprof exited"
        assert out.exists(), "no trace written after SIGINT\n" + err
        trace = load_trace(out)
        probs = format_problems(trace)
        assert not probs, "\n".join(probs[:30])
        ev = xevents(trace)
        c = counts(ev)
        assert c["beat"] >= 1, dict(c)
        assert set(c) <= {"main", "beat"}, dict(c)
        # main never returned: closed at the last seen time and flagged.
        unfinished = [e for e in ev if e["args"].get("unfinished")]
        assert "main" in {e["name"] for e in unfinished}, "main is still running: want it unfinished"
        assert {e["name"] for e in unfinished} <= {"main", "beat"}
        _, probs = nesting_problems(ev, root_depth=0)
        assert not probs, "\n".join(probs[:30])
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
        for pid in target_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
