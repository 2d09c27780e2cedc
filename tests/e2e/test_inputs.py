# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Inputs and outputs that are not what they seem, and errors that must not
pass as success: outputs that are devices or FIFOs, the umask, descriptors
leaking into the traced command, binaries that are FIFOs, kernel threads,
pids absent from a recording, libraries without the execute bit, libraries
matched by file name (issue 14, items 7 and 8)."""

import json
import os
import stat
import subprocess
import threading

import pytest

from conftest import BPFPROF, REPO, prog_path, run_bpfprof


def one_error(p, *words):
    """A non-zero exit and one `bpfprof: ` line naming every word."""
    lines = [l for l in p.stderr.splitlines() if l.startswith("bpfprof: ")]
    assert p.returncode != 0, p
    assert lines and all(any(w in l for l in lines) for w in words), p.stderr


# ------------------------------------------------------------------ outputs

def test_output_dev_full_fails():
    """-o /dev/full: every write fails with ENOSPC; that is an error, not 'wrote'."""
    for fmt in ("chrome", "archive", "pprof", "folded"):
        p = run_bpfprof(["record", "-o", "/dev/full", "--format", fmt, "--",
                         prog_path("calltree")])
        one_error(p, "/dev/full", "No space left on device")
        assert "wrote" not in p.stderr
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_output_device_written_in_place(tmp_path):
    """A device node as the output is written, never replaced by a regular file
    (the temporary file + rename path did that: as root, in /dev too)."""
    dev = tmp_path / "null"
    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    p = run_bpfprof(["record", "-o", dev, "--format", "chrome", "--", prog_path("calltree")])
    assert p.returncode == 0, p.stderr
    assert stat.S_ISCHR(os.stat(dev).st_mode)
    assert os.listdir(tmp_path) == ["null"]


def test_output_fifo(tmp_path):
    """A FIFO as the output: the reader gets the whole trace, the FIFO stays."""
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    got = {}

    def reader():
        with open(fifo, "rb") as f:
            got["data"] = f.read()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    p = run_bpfprof(["record", "-o", fifo, "--", prog_path("calltree")])
    t.join(timeout=10)
    if t.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # nobody wrote: let the reader go
        t.join()
    assert p.returncode == 0, p.stderr
    trace = json.loads(got["data"])
    assert sum(1 for e in trace["traceEvents"] if e.get("name") == "leaf_mul") == 10
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("mask,mode", [(0o077, 0o600), (0o022, 0o644), (0o002, 0o664)])
def test_output_mode_follows_umask(tmp_path, mask, mode):
    out = tmp_path / "t.json"
    p = subprocess.run([str(BPFPROF), "record", "-q", "-o", str(out), "--",
                        str(prog_path("calltree"))], cwd=REPO, capture_output=True, text=True,
                       timeout=60, preexec_fn=lambda: os.umask(mask))
    assert p.returncode == 0, p.stderr
    assert stat.S_IMODE(os.stat(out).st_mode) == mode


def test_output_not_inherited_by_the_command(tmp_path):
    """The temporary output file is not an open descriptor of the traced command."""
    out = tmp_path / "t.json"
    p = run_bpfprof(["record", "-q", "-F", "libc.so*:readlink", "-o", out, "--", "/bin/sh", "-c",
                     'for f in /proc/$$/fd/*; do readlink "$f"; done; exit 0'])
    assert p.returncode == 0, p.stderr
    fds = p.stdout.splitlines()
    assert fds and not [f for f in fds if str(tmp_path) in f], fds


# ------------------------------------------------------------------ inputs

@pytest.fixture
def fifo_binary(tmp_path):
    """A FIFO with execute bits where a binary is expected: opening it for
    reading would block until a writer comes."""
    p = tmp_path / "prog"
    os.mkfifo(p)
    os.chmod(p, 0o755)
    return p


def test_fifo_as_binary_refused(fifo_binary):
    for args in (["list", fifo_binary],
                 ["record", "-o", fifo_binary.parent / "t.json", "--", fifo_binary],
                 ["record", "-F", "%s:*" % fifo_binary, "-o", fifo_binary.parent / "t.json",
                  "--", prog_path("calltree")]):
        p = run_bpfprof(args, timeout=30)
        one_error(p, "not a regular file")


def test_list_library_without_execute_bit(tmp_path):
    """A shared library is read, never run: no execute bit needed, even as root."""
    lib = tmp_path / "libz.so.1"
    with open("/lib/x86_64-linux-gnu/libz.so.1", "rb") as src:
        lib.write_bytes(src.read())
    os.chmod(lib, 0o644)
    p = run_bpfprof(["list", lib, "deflateEnd"])
    assert p.returncode == 0, p.stderr
    assert [l.split()[-1] for l in p.stdout.splitlines()[1:]] == ["deflateEnd"]


@pytest.mark.parametrize("content,why", [(b"hello\n", "not an ELF file"), (None, "truncated ELF file")])
def test_list_not_an_elf_names_the_file(tmp_path, content, why):
    """A text file, an ELF cut short: the error names the file given, not the
    /proc/self/fd/N bpfprof reads it through."""
    f = tmp_path / "notelf"
    if content is None:
        with open(prog_path("calltree"), "rb") as src:
            content = src.read(3000)
    f.write_bytes(content)
    p = run_bpfprof(["list", f])
    one_error(p, why)
    assert p.stderr.splitlines() == ["bpfprof: %s: %s" % (f, why)], p.stderr


@pytest.mark.parametrize("cmd", [["list", "--debug-dir", "DIR", "PROG"],
                                 ["record", "--debug-dir", "DIR", "--", "PROG"],
                                 ["symbolize", "--debug-dir", "DIR", "-o", "OUT", "ARCHIVE"]])
def test_debug_dir_missing_or_a_file(tmp_path, cmd):
    """A --debug-dir that is no directory is a usage error naming it (it was
    taken silently: a typo showed only as names missing from the output)."""
    archive = tmp_path / "t.bpfprof"
    p = run_bpfprof(["record", "-q", "-o", archive, "--", prog_path("calltree")])
    assert p.returncode == 0, p.stderr
    afile = tmp_path / "afile"
    afile.write_text("x\n")
    for d, why in ((tmp_path / "missing", "No such file or directory"),
                   (afile, "not a directory")):
        sub = {"DIR": d, "PROG": prog_path("calltree"), "OUT": tmp_path / "o.bpfprof",
               "ARCHIVE": archive}
        p = run_bpfprof([sub.get(a, a) for a in cmd])
        assert p.returncode == 2, p.stderr
        assert p.stderr.splitlines() == ["bpfprof: invalid --debug-dir '%s': %s" % (d, why)], \
            p.stderr
    assert not (tmp_path / "o.bpfprof").exists()


def test_attach_kernel_thread():
    p = run_bpfprof(["attach", "--pid", "2", "-d", "1s"])
    one_error(p, "pid 2", "kernel thread")


def test_convert_pid_not_in_recording(tmp_path):
    arch = tmp_path / "a.bpfprof"
    p = run_bpfprof(["record", "-q", "-o", arch, "--", prog_path("calltree")])
    assert p.returncode == 0, p.stderr
    out = tmp_path / "c.json"
    p = run_bpfprof(["convert", "--pid", "1", "-o", out, arch])
    one_error(p, "pid 1 is not in")
    assert not out.exists() and os.listdir(tmp_path) == ["a.bpfprof"]
    p = run_bpfprof(["convert", "--tid", "1", "-o", out, arch])
    one_error(p, "thread 1 is not in")
    # the recording's own pid converts
    pid = json.loads(run_bpfprof(["convert", "--format", "chrome", "-o", "-", arch]).stdout)
    pids = {e["pid"] for e in pid["traceEvents"] if e.get("ph") == "X"}
    assert len(pids) == 1
    p = run_bpfprof(["convert", "--pid", str(pids.pop()), "-o", out, arch])
    assert p.returncode == 0 and out.exists(), p.stderr
