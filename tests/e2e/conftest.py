# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Fixtures for the end-to-end tests: real tracing of tests/progs/* as root.

Run from the repository root:  /usr/bin/python3 -m pytest -q tests/e2e
(`make e2e` builds ./bpfprof and the programs first).
"""

import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

import trace_util

REPO = Path(__file__).resolve().parents[2]
# BPFPROF_BIN=path runs the suite against another build (default: ./bpfprof).
BPFPROF = Path(os.environ.get("BPFPROF_BIN") or REPO / "bpfprof").resolve()
PROGS = REPO / "tests" / "progs"
# An ASan+UBSan build (make SANITIZE=1)?  Its memory use is the sanitizer's
# (redzones, shadow, freed memory held in quarantine), not bpfprof's.
SANITIZED = BPFPROF.is_file() and b"__asan_init" in BPFPROF.read_bytes()
# view finds speedscope beside its binary (a source tree's tests/clients); another
# build (the ASan one, .output-san/bpfprof) is told where the tests' copy is.
SPEEDSCOPE = REPO / "tests" / "clients" / "node_modules" / "speedscope" / "dist" / "release"
if BPFPROF.parent != REPO and SPEEDSCOPE.is_dir():
    os.environ.setdefault("BPFPROF_SPEEDSCOPE", str(SPEEDSCOPE))
TIMEOUT = 60  # seconds per bpfprof run
REPEAT = REPO / ".output" / "bench" / "repeat_archive"


def pytest_collection_modifyitems(config, items):
    """Skips every e2e test, with the reason, when not root."""
    if os.geteuid() == 0:
        return
    skip = pytest.mark.skip(
        reason="end-to-end tests attach uprobes and need root: "
               "sudo /usr/bin/python3 -m pytest -q tests/e2e (or sudo make e2e)")
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The skipped tests and why, loudly, in the last lines: a machine that
    lacks something runs fewer tests and must say which.  With
    BPFPROF_SKIPPED=FILE the same lines are appended to FILE (make test
    prints it after its last run)."""
    reasons = {}
    for rep in terminalreporter.stats.get("skipped", []):
        why = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        reasons.setdefault(why.removeprefix("Skipped: "), []).append(rep.nodeid)
    if not reasons:
        return
    n = sum(len(ids) for ids in reasons.values())
    lines = []
    for why, ids in reasons.items():
        lines.append("%d skipped: %s" % (len(ids), why))
        lines += ["    %s" % i for i in ids[:10]]
        if len(ids) > 10:
            lines.append("    ... and %d more" % (len(ids) - 10))
    tw = terminalreporter
    tw.write_sep("!", "%d test%s SKIPPED (%s): not run here" % (n, "s" if n > 1 else "", BPFPROF.name),
                 red=True, bold=True)
    for l in lines:
        tw.write_line(l, yellow=True, bold=not l.startswith(" "))
    path = os.environ.get("BPFPROF_SKIPPED")
    if path:
        with open(path, "a") as f:
            f.write("e2e with %s:\n" % BPFPROF)
            f.writelines("  %s\n" % l for l in lines)


@pytest.fixture(scope="session")
def repo():
    """The repository root (bpfprof runs with it as working directory)."""
    return REPO


@pytest.fixture(scope="session", autouse=True)
def _built():
    if not os.access(BPFPROF, os.X_OK):
        pytest.fail("%s is not built: run `make` (or `make e2e`)" % BPFPROF, pytrace=False)


def prog_path(name):
    """tests/progs/NAME, failing clearly when it is not built."""
    p = PROGS / name
    if not os.access(p, os.X_OK):
        pytest.fail("%s is not built: run `make progs`" % p, pytrace=False)
    return p


@pytest.fixture
def prog():
    return prog_path


@dataclass
class Run:
    proc: subprocess.CompletedProcess  # args, returncode, stdout, stderr (text)
    out: Optional[Path]                # the -o path, None when not given
    trace: Optional[dict]              # the parsed JSON, None when no file was written

    @property
    def rc(self):
        return self.proc.returncode

    @property
    def stderr_lines(self):
        return [l for l in self.proc.stderr.splitlines() if l.strip()]

    def describe(self):
        """For assertion messages."""
        return "command: %s\nexit: %s\n--- stdout\n%s--- stderr\n%s" % (
            " ".join(map(str, self.proc.args)), self.rc,
            self.proc.stdout[-3000:], self.proc.stderr[-3000:])


def assert_ok(r, rc=0):
    """A record Run exited with rc and wrote its trace."""
    assert r.rc == rc, "bpfprof exit status %s, want %s\n%s" % (r.rc, rc, r.describe())
    assert r.trace is not None, "no trace written at %s\n%s" % (r.out, r.describe())


def read_until(stream, pattern, timeout, what="output"):
    """Reads the binary pipe `stream` until `pattern` (a regex, ^ and $ per
    line) matches; returns (match, bytes read).  Fails the test when the pipe
    ends first, or after `timeout` seconds."""
    buf = b""
    fd = stream.fileno()
    deadline = time.monotonic() + timeout
    rx = re.compile(pattern.encode(), re.M)
    while True:
        m = rx.search(buf)
        if m:
            return m, buf
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail("no %r in %s within %ss; got %r" % (pattern, what, timeout, buf[-2000:]))
        rd, _, _ = select.select([fd], [], [], left)
        if rd:
            chunk = os.read(fd, 65536)
            if not chunk:
                pytest.fail("%s closed before %r; got %r" % (what, pattern, buf[-2000:]))
            buf += chunk


def proc_stat(pid):
    """The fields of /proc/PID/stat after the command's name: [0] the state
    (R, S, T, t, Z, ...), [1] the parent's pid, ...  OSError when it is gone."""
    with open("/proc/%s/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()


def bpfprof_popen(args, **kw):
    """bpfprof started with `args` in a session of its own (its keeper or
    guard, and the command it launches, are in it or in their own)."""
    return subprocess.Popen([str(BPFPROF)] + list(args), cwd=REPO, stdin=subprocess.DEVNULL,
                            bufsize=0, start_new_session=True, **kw)


def kill_group(b):
    """SIGKILL to the Popen `b`'s process group (what a failed test left), then reaps b."""
    try:
        os.killpg(b.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    b.wait()


def bpftrace_maps(p, done_re, timeout=60):
    """The maps of the bpftrace Popen `p` (its own session, stdout a pipe),
    printed on SIGUSR1 at once.  On SIGINT, bpftrace prints them only after
    removing every probe, one by one, each removal waiting for the uprobes'
    grace period: minutes while any traced program on the machine keeps a
    return probe pending (another bpfprof's busy target).  Returns what it
    printed after the signal, once done_re (multiline) matched and nothing
    more came for 0.5 s; then SIGKILLs its group without waiting for its
    end (the same removals)."""
    fd = p.stdout.fileno()
    out = b""
    os.kill(p.pid, signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rd, _, _ = select.select([fd], [], [], 0.5)
        if rd:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            out += chunk
        elif re.search(done_re, out.decode(errors="replace"), re.M):
            break
    with contextlib.suppress(ProcessLookupError):
        os.killpg(p.pid, signal.SIGKILL)
    return out.decode(errors="replace")


@contextlib.contextmanager
def bpfprof_running(args, wrap=(), **kw):
    """bpfprof_popen() (behind the command prefix `wrap`) for the with block;
    killed with its process group when it is still running at the end."""
    p = subprocess.Popen([str(a) for a in wrap] + [str(BPFPROF)] + [str(a) for a in args],
                         cwd=REPO, stdin=subprocess.DEVNULL, start_new_session=True, **kw)
    try:
        yield p
    finally:
        if p.poll() is None:
            kill_group(p)


def big_archive(d, prog_args, small, big, ncalls, timeout=600):
    """prog_args recorded into d/small, then repeated by bench/repeat_archive
    to at least ncalls calls into d/big: (path of big, path of small, copies, calls)."""
    if not REPEAT.exists():
        pytest.fail("%s not built: make all" % REPEAT)
    small, big = d / small, d / big
    r = run_bpfprof(["record", "-q", "-o", small, "--"] + list(prog_args), timeout=timeout)
    assert r.returncode == 0, r.stderr
    p = subprocess.run([str(REPEAT), "-o", str(big), "-n", str(ncalls), str(small)],
                       capture_output=True, text=True, timeout=2 * timeout)
    assert p.returncode == 0, p.stderr
    m = re.search(r"copies=(\d+) calls=(\d+)", p.stderr)
    assert m, p.stderr
    return big, small, int(m.group(1)), int(m.group(2))


def kill_bpfprof_during_a_hold(b, held, what, timeout=60, wait=True):
    """bpfprof (the Popen `b`) is stopped, then SIGKILLed once `held()` is
    true (a traced process waits for it): the hold is certain to be pending
    when bpfprof dies.  With wait, bpfprof is reaped too."""
    os.kill(b.pid, signal.SIGSTOP)
    deadline = time.monotonic() + timeout
    while not held():
        assert time.monotonic() < deadline, "%s never waited for bpfprof" % what
        time.sleep(0.01)
    os.kill(b.pid, signal.SIGKILL)
    if wait:
        b.wait()


NOBODY = 65534


@contextlib.contextmanager
def nobody_dir(prefix="bpfprof-nobody-"):
    """A new directory (mode 0755) under /tmp holding a copy of bpfprof
    (0755), for the tests of commands that need no privileges: they run it as
    nobody, who cannot reach the one in the clone when the clone is under a
    closed directory (/root is 0700 on Debian).  Yields (directory, copy)."""
    d = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    try:
        os.chmod(d, 0o755)
        copy = os.path.join(d, "bpfprof")
        shutil.copyfile(BPFPROF, copy)
        os.chmod(copy, 0o755)
        yield d, copy
    finally:
        shutil.rmtree(d, ignore_errors=True)


def as_nobody():
    """preexec_fn: the child runs as nobody, with no groups."""
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


# Prepended to a script that checks struct offsets against a live interpreter:
# at(obj, target, size) lists the offsets in obj's first size bytes that hold
# a pointer to target.
PY_OFFSET_SCAN = """import ctypes
def at(obj, target, size):
    raw = ctypes.string_at(id(obj), size)
    want = id(target).to_bytes(8, "little")
    return [i for i in range(0, size, 8) if raw[i:i + 8] == want]
"""

DEBIAN_PYTHON = "/usr/bin/python3.11"


def debian_python():
    """Debian's python3.11; skips the test when it is missing."""
    if not os.access(DEBIAN_PYTHON, os.X_OK):
        pytest.skip("%s missing (Debian python3.11)" % DEBIAN_PYTHON)
    return DEBIAN_PYTHON


@pytest.fixture
def need_debian_python():
    """Skips the test when Debian's python3.11 is missing (pytestmark = usefixtures(...))."""
    return debian_python()


@dataclass
class PyRecording:
    arch: Path              # the archive
    trace: dict             # its Chrome JSON, parsed
    stdout: str             # what the program (and bpfprof) printed
    pf: Optional[Path]      # its .pftrace, when asked


def record_python(tmp_path_factory, script, *opts, pftrace=False):
    """One `record OPTS -- python3.11 tests/progs/py/SCRIPT` into an archive,
    converted to Chrome JSON (and to a .pftrace with pftrace=True); skips the
    test without Debian's python3.11.  For module-scoped fixtures."""
    python = debian_python()
    d = tmp_path_factory.mktemp(Path(script).stem)
    arch, js = d / "a.bpfprof", d / "a.json"
    r = run_bpfprof(["record", "-o", arch, *opts, "--", python, PROGS / "py" / script])
    assert r.returncode == 0, r.stderr
    outs = [js] + ([d / "a.pftrace"] if pftrace else [])
    for out in outs:
        c = run_bpfprof(["convert", "-o", out, arch])
        assert c.returncode == 0, c.stderr
    return PyRecording(arch, load_trace(js), r.stdout, outs[1] if pftrace else None)


def attach_to_loop(python, tmp_path, *opts):
    """Runs tests/progs/py/loop.py under `python`, runs `bpfprof attach --pid
    PID OPTS` on it once it is ready, then lets it finish.  Returns the
    attach's CompletedProcess; fails the test unless the program was still
    running after bpfprof and ended with its right checksum."""
    stop = tmp_path / "stop"
    target = subprocess.Popen([python, str(PROGS / "py" / "loop.py"), str(stop)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert target.stdout.readline().strip() == "ready"
        p = run_bpfprof(["attach", "--max-overhead", "off", "--pid", target.pid] + list(opts))
        assert target.poll() is None, p.stderr
        stop.write_text("")
        line = target.stdout.readline().split()
        assert target.wait(timeout=30) == 0
    finally:
        if target.poll() is None:
            target.kill()
            target.wait()
    assert line[0] == "ok", line
    return p


def go_build(d, out, *flags):
    """tests/progs/gocalls.go built into `out` by the Debian Go toolchain with
    `flags` (its caches in the directory d); skips the test without go."""
    go = shutil.which("go")
    if not go:
        pytest.skip("go missing: apt-get install golang-go (scripts/setup.sh --test)")
    env = dict(os.environ, HOME=str(d), GOCACHE=str(d / "cache"), GOPATH=str(d / "path"),
               GO111MODULE="off", CGO_ENABLED="0")
    p = subprocess.run([go, "build", *flags, "-o", str(out), str(PROGS / "gocalls.go")],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return out


def run_bpfprof(args, timeout=TIMEOUT, cwd=REPO, env=None):
    """Runs ./bpfprof ARGS from `cwd` (the repo root) with `env` (ours);
    returns CompletedProcess.

    bpfprof and everything it starts get their own session, so a run that
    hangs is killed as a whole (process group) at the timeout and the test
    fails instead of the suite hanging.
    """
    cmd = [str(BPFPROF)] + [str(a) for a in args]
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        pytest.fail("timed out after %ds: %s\n--- stderr\n%s" % (timeout, " ".join(cmd), err[-3000:]))
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)



def report_arg_counts(archive, spec, value_re):
    """`report --args SPEC ARCHIVE`: {value: calls} from its rows, a row
    being the count first and the value (matching value_re) last."""
    p = run_bpfprof(["report", "--args", spec, archive])
    assert p.returncode == 0, p.stderr
    got = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(\d+)\s+.*\s(%s)\s*$" % value_re, line)
        if m:
            got[m.group(2)] = int(m.group(1))
    return got, p.stdout

def describe(p):
    """A finished run_bpfprof(): its command, exit status and output's tails, for a failure."""
    return "command: %s\nexit: %s\n--- stdout\n%s--- stderr\n%s" % (
        " ".join(map(str, p.args)), p.returncode, p.stdout[-3000:], p.stderr[-3000:])


def run_ok(args, rc=0, timeout=TIMEOUT):
    """run_bpfprof(), which must exit with rc."""
    p = run_bpfprof(args, timeout=timeout)
    assert p.returncode == rc, describe(p)
    return p


def load_trace(path):
    """json.load of a trace; fails the test with the head of the file when it does not parse."""
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError as e:
        with open(path, errors="replace") as f:
            head = f.read(2000)
        pytest.fail("%s is not valid JSON (%s); it starts with:\n%s" % (path, e, head))


@pytest.fixture
def record(tmp_path):
    """record(PROG, *ARGS, opts=[...], out="trace.json", check=True) -> Run

    Runs `./bpfprof record -o TMP/out OPTS -- PROG ARGS`.  PROG is a name in
    tests/progs/ or any command (path or name looked up in PATH).  out=None
    leaves out -o.  When the output file exists it is parsed, and with
    check=True its format is checked against the contract (every event).
    """
    def _record(prog, *args, opts=(), out="trace.json", check=True, timeout=TIMEOUT):
        if "/" not in str(prog) and (PROGS / str(prog)).with_suffix(".c").exists():
            cmd = [prog_path(prog)]
        else:
            cmd = [prog]
        outp = tmp_path / out if out is not None else None
        argv = ["record"] + (["-o", outp] if outp is not None else []) + list(opts) + ["--"] + cmd + list(args)
        proc = run_bpfprof(argv, timeout=timeout)
        trace = None
        if outp is not None and outp.exists() and outp.suffix == ".json":
            trace = load_trace(outp)
        r = Run(proc, outp, trace)
        if check and trace is not None:
            probs = trace_util.format_problems(trace)
            assert not probs, "trace format:\n  " + "\n  ".join(probs[:30]) + "\n" + r.describe()
        return r

    return _record
