# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""What a local user can make a root bpfprof do (issue 27, items 1, 2, 6, 7).

The user is `nobody` (uid 65534), owner of a directory in /tmp, acting
through setpriv; bpfprof runs as root, as it does under sudo.  Each test
plants what the issue found and checks the fact that matters: a device's
bytes unchanged, a FIFO neither blocking nor read, a device never opened
(inotify's IN_OPEN on a device node of our own), a stopped process that got
a dead target's pid left stopped.
"""

import ctypes
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import (bpfprof_popen, kill_group, proc_stat,
                      prog_path, read_until, run_bpfprof)

USER = 65534    # nobody
AS_USER = ["setpriv", "--reuid=%d" % USER, "--regid=%d" % USER, "--clear-groups"]


def one_error(p, *words):
    """A non-zero exit and one `bpfprof: ` line naming every word."""
    lines = [l for l in p.stderr.splitlines() if l.startswith("bpfprof: ")]
    assert p.returncode != 0, p
    assert lines and all(any(w in l for l in lines) for w in words), p.stderr


def as_user(*cmd):
    subprocess.run(AS_USER + [str(c) for c in cmd], check=True, timeout=30)


@pytest.fixture
def userdir():
    """A directory of the user's in /tmp (pytest's own are root's and 0700)."""
    if not shutil.which("setpriv"):
        pytest.skip("setpriv missing (util-linux)")
    d = Path(tempfile.mkdtemp(prefix="bpfprof-user-"))
    os.chmod(d, 0o755)
    os.chown(d, USER, USER)
    yield d
    shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------------ outputs (items 1, 2)

@pytest.fixture
def loopdev(tmp_path):
    """A block device of root's, backed by 1 MiB of zeros."""
    img = tmp_path / "disk.img"
    img.write_bytes(bytes(1 << 20))
    p = subprocess.run(["losetup", "-f", "--show", str(img)], capture_output=True, text=True)
    if p.returncode:
        pytest.skip("no loop device: %s" % p.stderr.strip())
    dev = p.stdout.strip()
    yield dev
    subprocess.run(["losetup", "-d", dev])


def test_output_symlink_to_a_device(userdir, loopdev):
    """The user plants out.json -> /dev/loopN in its directory: root's -o
    DIR/out.json is refused, the device keeps its zeros, the link stays."""
    out = userdir / "out.json"
    as_user("ln", "-s", loopdev, out)
    p = run_bpfprof(["record", "-o", out, "--", prog_path("calltree")])
    with open(loopdev, "rb") as f:
        assert f.read(1 << 16) == bytes(1 << 16), "bpfprof wrote on %s" % loopdev
    one_error(p, str(out), "symbolic link")
    assert os.path.islink(out)


def test_output_through_a_users_directory_link(userdir, tmp_path):
    """A link the user owns in the middle of the path (DIR/sub -> a directory
    of root's the user cannot write): nothing is written there."""
    victim = tmp_path / "victim"
    victim.mkdir()
    as_user("ln", "-s", victim, userdir / "sub")
    p = run_bpfprof(["record", "-o", userdir / "sub" / "out.json", "--", prog_path("calltree")])
    assert os.listdir(victim) == []
    one_error(p, "out.json", "symbolic link")


def test_output_links_of_roots_are_followed(tmp_path):
    """Links root owns are followed (/dev/stdout, a root's link to a directory)."""
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "link")
    p = run_bpfprof(["record", "-q", "-o", tmp_path / "link" / "t.json", "--",
                     prog_path("calltree")])
    assert p.returncode == 0, p.stderr
    assert os.listdir(real) == ["t.json"]
    p = run_bpfprof(["record", "-q", "--format", "folded", "-o", "/dev/stdout", "--",
                     prog_path("calltree")])
    assert p.returncode == 0, p.stderr
    assert "main;" in p.stdout


def blocked_in_open(pid):
    """Is pid inside openat(2) (x86-64 syscall 257), e.g. waiting for a FIFO's other end?"""
    try:
        with open("/proc/%d/syscall" % pid) as f:
            return f.read().split()[0] == "257"
    except (OSError, IndexError):
        return False


@pytest.mark.parametrize("reader", [False, True], ids=["no-reader", "user-reading"])
def test_output_fifo_planted(userdir, reader):
    """The user plants a FIFO at root's output path.  Without a reader root
    must not wait for one; with the user reading it, the user must not get
    root's trace.  Refused either way, at once."""
    fifo = userdir / "out.json"
    got = userdir / "got"
    as_user("mkfifo", fifo)
    r = None
    try:
        if reader:
            r = subprocess.Popen(AS_USER + ["dd", "if=%s" % fifo, "of=%s" % got, "status=none"])
            deadline = time.monotonic() + 30
            while not blocked_in_open(r.pid):
                assert time.monotonic() < deadline and r.poll() is None, "the reader never opened"
                time.sleep(0.01)
        p = run_bpfprof(["record", "-o", fifo, "--", prog_path("calltree")], timeout=30)
        one_error(p, str(fifo), "not a regular file")
    finally:
        if r:
            try:    # an end-of-file for the reader still waiting (ENXIO: it is gone)
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
            r.wait(timeout=30)
    if reader:
        assert got.read_bytes() == b""
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


# ------------------------------------------------------------------ devices as binaries (item 7)

class Opens:
    """IN_OPEN events of one file (inotify): did anyone open it?"""

    def __init__(self, path):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0
        assert self.libc.inotify_add_watch(self.fd, str(path).encode(), 0x20) >= 0  # IN_OPEN

    def count(self):
        n = 0
        while True:
            try:
                n += len(os.read(self.fd, 4096)) // 16   # struct inotify_event, no name
            except BlockingIOError:
                return n

    def close(self):
        os.close(self.fd)


@pytest.fixture
def device_link(userdir, tmp_path):
    """userdir/libdev.so -> a character device node of root's (1,5: zero),
    watched: any open of it, through any name, is seen."""
    node = tmp_path / "zero"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 5))
    os.chmod(tmp_path, 0o755)   # the user's link resolves for root only; no matter
    link = userdir / "libdev.so"
    as_user("ln", "-s", node, link)
    w = Opens(node)
    yield link, w
    w.close()


@pytest.mark.parametrize("how", ["list", "record -F", "debug-dir"])
def test_device_never_opened_as_a_binary(device_link, userdir, tmp_path, how):
    """A binary, library or debug file that is a link to a device: root
    refuses it without opening the device (which could be a watchdog)."""
    link, w = device_link
    out = tmp_path / "t.json"
    if how == "list":
        p = run_bpfprof(["list", link])
        one_error(p, "not a regular file")
    elif how == "record -F":
        p = run_bpfprof(["record", "-F", "%s:*" % link, "-o", out, "--", prog_path("calltree")])
        one_error(p, "not a regular file")
    else:
        # every DIR/.build-id/xx/yyyy.debug the sampled stacks' unwinder looks for
        ids = subprocess.run(["sh", "-c", "for f in \"$@\"; do readelf -n \"$f\"; done", "sh",
                              prog_path("calltree"), "/lib/x86_64-linux-gnu/libc.so.6"],
                             capture_output=True, text=True).stdout
        for line in ids.splitlines():
            if "Build ID:" in line:
                bid = line.split()[-1]
                as_user("mkdir", "-p", userdir / ".build-id" / bid[:2])
                as_user("ln", "-sf", link, userdir / ".build-id" / bid[:2] / (bid[2:] + ".debug"))
        p = run_bpfprof(["record", "--sample=999", "--debug-dir", userdir, "-o", out, "--",
                         prog_path("calltree")])
        assert p.returncode == 0, p.stderr
    assert w.count() == 0, "root opened the device (%s)" % how


# ------------------------------------------------------------------ signals by pidfd (item 6)

PATTERN = "libplug_*:plug_*"


def reuse_pid(pid, tries=200):
    """A stopped `sleep` of root's with the number `pid` (ns_last_pid; other
    processes of the machine may take it first: retried).  None if never."""
    for _ in range(tries):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        s = subprocess.Popen(["sleep", "600"])
        if s.pid == pid:
            os.kill(s.pid, signal.SIGSTOP)
            while proc_stat(s.pid)[0] != "T":
                time.sleep(0.01)
            return s
        s.kill()
        s.wait()
    return None


def test_sigcont_never_reaches_the_next_owner_of_a_pid(tmp_path):
    """The user's process, held at a dlopen by root's bpfprof, is killed by
    the user; its pid goes to a stopped root `sleep`; bpfprof, going on,
    must not continue that sleep (it signals a pidfd, not a number).
    bpfprof is stopped while this happens, so that the hold is certain to
    be pending."""
    script = "%s loop 1000000; echo shell-done" % prog_path("plugins")
    b = bpfprof_popen(["record", "-F", PATTERN, "-o", str(tmp_path / "t.json"), "--",
                       "/bin/sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sleeper = None
    try:
        m, _ = read_until(b.stderr, r"^bpfprof: pid (\d+) loaded ", 60, "bpfprof's stderr")
        pid = int(m.group(1))
        assert int(proc_stat(pid)[1]) != b.pid      # the shell's child: the shell reaps it
        os.kill(b.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 60
        while proc_stat(pid)[0] not in ("T", "t"):
            assert time.monotonic() < deadline, "pid %d never waited at a dlopen" % pid
            time.sleep(0.01)
        os.kill(pid, signal.SIGKILL)                 # its user kills it
        while os.path.exists("/proc/%d" % pid):
            assert time.monotonic() < deadline, "pid %d not reaped" % pid
            time.sleep(0.01)
        sleeper = reuse_pid(pid)
        if not sleeper:
            pytest.skip("pid %d never came back (a busy machine)" % pid)
        os.kill(b.pid, signal.SIGCONT)
        read_until(b.stdout, r"^shell-done$", 60, "the shell's stdout")
        b.wait(timeout=60)
        assert proc_stat(sleeper.pid)[0] == "T", "bpfprof continued the new pid %d" % pid
    finally:
        kill_group(b)
        if sleeper:
            sleeper.kill()
            sleeper.wait()
