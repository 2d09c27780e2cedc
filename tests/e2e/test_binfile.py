# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Root never places uprobes in a file other than the one the target maps
(README "Security"; user/symbols/binfile.c).

Scenario: a program runs with a copy of a library (or of its executable),
then another ELF file is renamed onto that path before `attach --pid`.  The
file at the path is no longer what the process runs.  bpfprof traces the
inode the process maps (through /proc/PID/map_files) and the other file
receives no probe: a second process running the other file is checked
byte for byte (its mapped text against the file) while bpfprof is attached,
and the first one is checked to have received the probes (so the check can
see a probe when there is one).  Without CAP_SYS_ADMIN (no map_files) the
replaced file is refused with one error line.
"""

import os
import shutil
import subprocess
from collections import Counter

import pytest

from conftest import BPFPROF, REPO, bpfprof_running, load_trace, prog_path, read_until
from trace_util import xevents

LIB_A = r"""
int work(int x) { return x + 1; }
"""
# another file: other code before work, so the offsets differ
LIB_B = r"""
volatile int pad_sink;
int pad1(int x) { for (int i = 0; i < x; i++) pad_sink += i * 3; return pad_sink; }
int pad2(int x) { for (int i = 0; i < x; i++) pad_sink ^= i * 7; return pad_sink; }
int work(int x) { return x * 3 + 7; }
"""
LOOP = r"""
#include <stdio.h>
#include <unistd.h>
extern int work(int);
volatile int sink;
int main(void)
{
	printf("loop: pid=%d\n", getpid());
	fflush(stdout);
	for (int i = 0;; i++) {
		sink += work(i);
		usleep(1000);
	}
}
"""


def gcc(tmp, name, src, *args):
    c = tmp / (name + ".c")
    c.write_text(src)
    subprocess.run(["gcc", "-O1", "-g", "-o", str(tmp / name), str(c)] + list(args), check=True)
    return tmp / name


def text_changes(pid, name):
    """Bytes of pid's executable mappings of a file named `name` (deleted or
    not) that differ from the file they map: where probes were placed."""
    diffs = 0
    with open("/proc/%d/maps" % pid) as f:
        maps = [l.split() for l in f]
    for m in maps:
        if len(m) < 6 or "x" not in m[1] or os.path.basename(m[5]) != name:
            continue
        start, end = (int(v, 16) for v in m[0].split("-"))
        with open("/proc/%d/map_files/%x-%x" % (pid, start, end), "rb") as f:
            f.seek(int(m[2], 16))
            want = f.read(end - start)
        with open("/proc/%d/mem" % pid, "rb") as f:
            f.seek(start)
            have = f.read(len(want))
        diffs += sum(1 for a, b in zip(want, have) if a != b)
        assert len(have) == len(want)
    return diffs


@pytest.fixture
def procs():
    started = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
        p.wait()
        p.stdout.close()


def swapped_library(tmp_path, procs):
    """X runs libswap.so A; B is renamed onto the path; Y runs B.  Returns (X, Y, dir)."""
    d = tmp_path / "lib"
    d.mkdir()
    gcc(d, "liba.so", LIB_A, "-shared", "-fPIC", "-Wl,-soname,libswap.so")
    gcc(d, "libb.so", LIB_B, "-shared", "-fPIC", "-Wl,-soname,libswap.so")
    os.link(d / "liba.so", d / "libswap.so")
    loop = gcc(tmp_path, "loop", LOOP, "-L" + str(d), "-lswap", "-Wl,-rpath," + str(d))
    x = subprocess.Popen([str(loop)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    procs.append(x)
    read_until(x.stdout, r"^loop: pid=%d$" % x.pid, 20)
    os.link(d / "libb.so", d / "libswap.so.new")
    os.rename(d / "libswap.so.new", d / "libswap.so")
    os.unlink(d / "liba.so")   # the inode X maps is now deleted: only X holds it
    y = subprocess.Popen([str(loop)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    procs.append(y)
    read_until(y.stdout, r"^loop: pid=%d$" % y.pid, 20)
    return x, y, d


def attach_and_check(args, x, y, name, tmp_path, wrap=()):
    """Runs attach; while its probes are in, checks which process got them."""
    out = tmp_path / "t.json"
    cmd = ["attach", "--max-overhead", "off", "--pid", x.pid, "-d", "4s", "-o", out]
    with bpfprof_running(cmd + list(args), wrap=wrap, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE) as p:
        m, err = read_until(p.stderr, r"^bpfprof: (traced \d+ functions.*|tracing Python calls.*|"
                                      r".*not attaching to it|cannot.*)$", 40)
        probed_x = text_changes(x.pid, name)
        probed_y = text_changes(y.pid, name)
        rest = p.stderr.read()
        rc = p.wait(timeout=40)
    return rc, (err + rest).decode(errors="replace"), probed_x, probed_y, out


@pytest.mark.parametrize("pattern", ["libswap.so:work", "{dir}/libswap.so:work"])
def test_replaced_library_traced_as_mapped(tmp_path, procs, pattern):
    """The library X maps was replaced on disk: by file name or by its path,
    -F traces the inode X runs (its work() calls are recorded) and the file
    now at the path, run by Y, receives no probe at all."""
    x, y, d = swapped_library(tmp_path, procs)
    rc, err, probed_x, probed_y, out = attach_and_check(
        ["-F", pattern.format(dir=d)], x, y, "libswap.so", tmp_path)
    assert rc == 0, err
    assert probed_y == 0, "the replacement file run by pid %d got %d changed bytes\n%s" % (
        y.pid, probed_y, err)
    assert probed_x > 0, "the check saw no probe in the traced process:\n" + err
    assert "replaced on disk" in err or pattern.startswith("libswap"), err
    ev = xevents(load_trace(out))
    assert ev and all(e["name"] == "work" for e in ev), err
    assert {e["pid"] for e in ev} == {x.pid}, err
    assert x.poll() is None and y.poll() is None


def test_replaced_library_refused_without_map_files(tmp_path, procs):
    """Without CAP_SYS_ADMIN the mapped inode cannot be opened through
    /proc/PID/map_files: the file at the path is not what X maps, so it is
    refused with one error line naming it, and nobody gets a probe."""
    x, y, d = swapped_library(tmp_path, procs)
    drop = ["capsh", "--drop=cap_sys_admin,cap_checkpoint_restore", "--", "-c", 'exec "$0" "$@"']
    rc, err, probed_x, probed_y, out = attach_and_check(
        ["-F", "%s/libswap.so:work" % d], x, y, "libswap.so", tmp_path, wrap=drop)
    assert rc != 0, err
    lines = [l for l in err.splitlines() if "not the file" in l]
    assert lines == ["bpfprof: %s/libswap.so is not the file pid %d maps (replaced on disk?): "
                     "not attaching to it" % (d, x.pid)], err
    assert probed_x == 0 and probed_y == 0, err
    assert not out.exists()
    assert x.poll() is None and y.poll() is None


def test_replaced_executable(tmp_path, procs):
    """X runs a copy of busy; forever's binary is renamed onto the path and run
    as Y.  attach --pid X traces busy's tick() from the inode X runs; Y's
    text is untouched."""
    exe = tmp_path / "copy"
    exe.write_bytes(prog_path("busy").read_bytes())
    exe.chmod(0o755)
    x = subprocess.Popen([str(exe)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    procs.append(x)
    read_until(x.stdout, r"^busy: pid=%d$" % x.pid, 20)
    new = tmp_path / "copy.new"
    new.write_bytes(prog_path("forever").read_bytes())
    new.chmod(0o755)
    os.rename(new, exe)
    y = subprocess.Popen([str(exe), "bpfprof-e2e-binfile"], stdout=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    procs.append(y)
    assert os.readlink("/proc/%d/exe" % y.pid) == str(exe)   # Popen returns after exec
    rc, err, probed_x, probed_y, out = attach_and_check([], x, y, "copy", tmp_path)
    assert rc == 0, err
    assert probed_y == 0, "forever (pid %d) got %d changed bytes\n%s" % (y.pid, probed_y, err)
    assert probed_x > 0, err
    ev = xevents(load_trace(out))
    assert ev and {e["name"] for e in ev} == {"tick"}, err
    assert {e["pid"] for e in ev} == {x.pid}


def in_own_mount_ns(path, real, args=()):
    """Runs `path` as the process sees it in a mount namespace of its own, where
    `real` is bind-mounted over it (bpfprof, in the first namespace, sees
    another file there)."""
    script = 'mount --bind "$1" "$2" && shift && exec "$@"'
    return subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                             "sh", str(real), str(path)] + [str(a) for a in args],
                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            start_new_session=True)


def test_executable_of_another_mount_namespace(tmp_path, procs):
    """X runs busy at PATH in its own mount namespace; at PATH bpfprof sees
    forever, which Y runs.  /proc/X/exe names PATH, yet the probes go to the
    inode X runs (busy's tick), none into forever."""
    exe, busy = tmp_path / "prog", tmp_path / "busy"
    for p, src in ((exe, "forever"), (busy, "busy")):
        p.write_bytes(prog_path(src).read_bytes())
        p.chmod(0o755)
    x = in_own_mount_ns(exe, busy)
    procs.append(x)
    m, _ = read_until(x.stdout, r"^busy: pid=(\d+)$", 20)
    assert int(m.group(1)) == x.pid   # unshare and sh exec'd: the same process
    assert os.readlink("/proc/%d/exe" % x.pid) == str(exe)
    y = subprocess.Popen([str(exe), "bpfprof-e2e-binfile"], stdout=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    procs.append(y)
    rc, err, probed_x, probed_y, out = attach_and_check([], x, y, "prog", tmp_path)
    assert rc == 0, err
    assert probed_y == 0, "forever (pid %d) got %d changed bytes\n%s" % (y.pid, probed_y, err)
    assert probed_x > 0, err
    ev = xevents(load_trace(out))
    assert ev and {e["name"] for e in ev} == {"tick"}, err


@pytest.mark.skipif(not os.path.exists("/usr/bin/python3.11"), reason="needs Debian's python3.11")
def test_python_of_another_mount_namespace(tmp_path, procs):
    """The same for a CPython target (its Python-call probes): X runs
    python3.11 at PATH in its own mount namespace, bpfprof sees busy there,
    which Y runs: Y gets no probe, X's Python calls are traced."""
    exe, py = tmp_path / "prog", tmp_path / "python3.11"
    exe.write_bytes(prog_path("busy").read_bytes())
    exe.chmod(0o755)
    py.write_bytes(open("/usr/bin/python3.11", "rb").read())
    py.chmod(0o755)
    script = tmp_path / "spin.py"
    script.write_text("import os, time\nprint('py: pid=%d' % os.getpid(), flush=True)\n"
                      "def step():\n    time.sleep(0.002)\nwhile True:\n    step()\n")
    x = in_own_mount_ns(exe, py, [script])
    procs.append(x)
    read_until(x.stdout, r"^py: pid=%d$" % x.pid, 20)
    y = subprocess.Popen([str(exe), "0", "bpfprof-e2e-binfile"], stdout=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    procs.append(y)
    read_until(y.stdout, r"^busy: pid=%d$" % y.pid, 20)
    rc, err, probed_x, probed_y, out = attach_and_check([], x, y, "prog", tmp_path)
    assert rc == 0, err
    assert probed_y == 0, "busy (pid %d) got %d changed bytes\n%s" % (y.pid, probed_y, err)
    assert probed_x > 0, err
    assert "step" in {e["name"] for e in xevents(load_trace(out))}, err


def test_files_not_selected_are_closed(tmp_path):
    """Every candidate a LIB glob names is opened once to be read; those
    nothing is selected from are closed again: 'lib*' (thousands of files
    here) fits in 256 descriptors, and adler32 in libz is traced."""
    out = tmp_path / "t.json"
    p = subprocess.run(["prlimit", "--nofile=256", str(BPFPROF), "record", "-F", "lib*:adler32",
                        "-o", str(out), "--", str(prog_path("libwork")), "50"],
                       cwd=REPO, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    ev = xevents(load_trace(out))
    assert ev and {e["name"] for e in ev} == {"adler32"}, p.stderr


def test_command_replaced_before_it_execs(tmp_path):
    """record -- PATH: the file at PATH is replaced after bpfprof has read
    it and before the command execs it (bpfprof is held by gdb at a
    breakpoint in between, so the order is certain).  The exec'd file is
    another image: it is probed when it is exec'd, and its calls are
    traced exactly (calltree's facts); the file first read gets no say."""
    prog = tmp_path / "prog"
    shutil.copy(prog_path("exitcode"), prog)
    new = tmp_path / "new"
    shutil.copy(prog_path("calltree"), new)
    out = tmp_path / "t.json"
    # the break: after the selection pinned and read PATH, before the tracer loads
    r = subprocess.run(
        ["gdb", "-q", "-batch", "-nx", "-ex", "set breakpoint pending on",
         "-ex", "break tracer__route_libbpf_log", "-ex", "run",
         "-ex", "shell mv %s %s" % (new, prog), "-ex", "delete", "-ex", "continue",
         "--args", str(BPFPROF), "record", "-o", str(out), "--", str(prog)],
        cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    text = r.stdout + r.stderr
    assert "Breakpoint 1, tracer__route_libbpf_log" in text, text
    assert "exited normally" in text, text       # bpfprof's own exit status: 0
    assert "calltree: result=437989" in text, text
    assert "has only 2 functions to trace (f, main)" in text, text     # what was read first
    c = Counter(e["name"] for e in xevents(load_trace(out)))
    assert c == {"main": 1, "run": 1, "parse": 3, "compute": 5, "leaf_add": 20,
                 "leaf_mul": 10, "fib": 177, "slow_io": 1}, c
