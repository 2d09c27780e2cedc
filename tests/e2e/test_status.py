# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The live status line (issue 31): on a terminal, record/attach/serve show one
line rewritten in place ("\\r", the text, clear to the end of the line) while
they trace, erased before the summary; view/convert/report/merge show how far
they have read a big archive.  Nothing of it when stderr is a pipe or with -q.

stderr is a pseudo-terminal (os.openpty) here; the traced program is
tests/progs/busy, which runs a set time (1.5 s: several redraws at about three
a second, whatever the load).  Only the line's fixed parts are checked, never
its figures' values or how often it is drawn.
"""

import os
import re
import select
import signal
import subprocess
import time

import pytest

from conftest import big_archive, bpfprof_running, prog_path, run_bpfprof

ESC_CLEAR = "\x1b[K"
# one drawing of record's line: \r, elapsed, calls with their rate, lost, then clear-to-EOL
STATUS = re.compile(r"\rbpfprof: \d+\.\d s, [\d.]+[kMG]? calls \([\d.]+[kMG]?/s\), \d+ lost"
                    r"[^\r\n\x1b]*\x1b\[K")
READING = re.compile(r"\rbpfprof: reading big\.bpfprof: \d+% \(\d+ of \d+ MB\), [\d.]+ M events\x1b\[K")


def run_pty(args, timeout=120, until=None):
    """Runs bpfprof ARGS with stderr on a pseudo-terminal (stdout a pipe):
    (exit status, stderr as the terminal got it, stdout).  With until (a
    regex), sends SIGINT once stderr matches it."""
    master, slave = os.openpty()
    out, deadline, sent = b"", time.monotonic() + timeout, False
    try:
        with bpfprof_running(args, stdout=subprocess.PIPE, stderr=slave) as p:
            os.close(slave)
            while time.monotonic() < deadline:
                if until and not sent and re.search(until, out.decode(errors="replace")):
                    p.send_signal(signal.SIGINT)
                    sent = True
                if not select.select([master], [], [], 1)[0]:
                    if p.poll() is not None:
                        break
                    continue
                try:
                    chunk = os.read(master, 65536)
                except OSError:		# EIO: the last writer closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            else:
                pytest.fail("timed out: %s\n%r" % (args, out[-3000:]))
            stdout = p.stdout.read()
            rc = p.wait(timeout=60)
    finally:
        os.close(master)
    return rc, out.decode(errors="replace"), stdout.decode(errors="replace")


def assert_erased_before(err, summary):
    """Status lines were drawn; the last one was erased ("\\r\\x1b[K") before
    `summary`, none drawn after it; every other message starts a line of its own."""
    draws = list(STATUS.finditer(err))
    assert draws, "no status line on the terminal:\n%r" % err[-3000:]
    at = err.index(summary)
    assert draws[-1].end() < at, "a status line after %r:\n%r" % (summary, err[-3000:])
    assert "\r" + ESC_CLEAR in err[draws[-1].end():at], \
        "the status line was not erased before %r:\n%r" % (summary, err[-3000:])
    # what the terminal shows in the end: no line holds a status line's text
    for line in err.replace("\r\n", "\n").split("\n"):
        shown = line.split("\r")[-1]
        assert not re.search(r"calls \([\d.]+[kMG]?/s\)", shown), "a status line left on screen: %r" % line


def test_record_status_line(tmp_path):
    """record on a terminal: the line while busy runs 1.5 s, erased before the summary."""
    rc, err, _ = run_pty(["record", "-o", tmp_path / "b.bpfprof", "--", prog_path("busy"), "1.5"])
    assert rc == 0, err[-3000:]
    assert_erased_before(err, "calls recorded in")


def test_record_status_line_not_on_a_pipe_nor_with_q(tmp_path):
    """The same recording with stderr a pipe, and with -q on a terminal: none of it."""
    p = run_bpfprof(["record", "-o", tmp_path / "b.bpfprof", "--", prog_path("busy"), "1.5"])
    assert p.returncode == 0, p.stderr
    assert "calls recorded in" in p.stderr
    assert "\r" not in p.stderr and ESC_CLEAR not in p.stderr, p.stderr[-3000:]
    rc, err, _ = run_pty(["record", "-q", "-o", tmp_path / "q.bpfprof", "--", prog_path("busy"), "1.5"])
    assert rc == 0, err
    assert not STATUS.search(err) and ESC_CLEAR not in err, err[-3000:]


def test_attach_status_line(tmp_path):
    """attach on a terminal: the line until --duration ends, erased before the summary."""
    busy = subprocess.Popen([str(prog_path("busy")), "20"], stdout=subprocess.PIPE, text=True)
    try:
        assert busy.stdout.readline().startswith("busy: pid=")
        rc, err, _ = run_pty(["attach", "-p", busy.pid, "--duration", "1.5",
                              "-o", tmp_path / "a.bpfprof"])
        assert rc == 0, err[-3000:]
        assert_erased_before(err, "calls recorded in")
    finally:
        busy.kill()
        busy.wait()


def test_serve_status_line():
    """serve on a terminal: the line while it serves, erased when Ctrl-C ends it."""
    busy = subprocess.Popen([str(prog_path("busy")), "20"], stdout=subprocess.PIPE, text=True)
    try:
        assert busy.stdout.readline().startswith("busy: pid=")
        rc, err, out = run_pty(["serve", "-p", busy.pid, "-l", "127.0.0.1:0"], until=STATUS.pattern)
        assert rc == 0 or rc == 128 + signal.SIGINT, err[-3000:]
        assert out.startswith("http://127.0.0.1:"), out
        draws = list(STATUS.finditer(err))
        assert draws, err[-3000:]
        assert "\r" + ESC_CLEAR in err[draws[-1].end():], err[-3000:]
    finally:
        busy.kill()
        busy.wait()


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """calltree recorded once (218 calls), repeated to 8 M calls: seconds to read."""
    out, small, _, _ = big_archive(tmp_path_factory.mktemp("status"), [prog_path("calltree")],
                                   "small.bpfprof", "big.bpfprof", 8_000_000)
    return out, small


def test_read_progress_report(big):
    """report of a big archive: how far it has read, erased before the table; a
    small one (read in no time) and a pipe: nothing."""
    path, small = big
    rc, err, out = run_pty(["report", path])
    assert rc == 0, err[-3000:]
    assert READING.search(err), err[-3000:]
    assert err.endswith("\r" + ESC_CLEAR), err[-3000:]	# erased; the table is on stdout
    assert re.search(r"^\s+\d+ .*\bcompute$", out, re.M), out[:2000]
    p = run_bpfprof(["report", path])
    assert p.returncode == 0 and p.stderr == "", p.stderr[-3000:]
    rc, err, _ = run_pty(["report", small])
    assert rc == 0 and err == "", err
    rc, err, _ = run_pty(["-q", "report", path])
    assert rc == 0 and not READING.search(err), err[-3000:]


def test_read_progress_convert(big, tmp_path):
    """convert of a big archive: the progress, erased before "wrote"; a pipe: none."""
    path, _ = big
    rc, err, _ = run_pty(["convert", "-o", tmp_path / "big.pb.gz", path])
    assert rc == 0, err[-3000:]
    reading = list(READING.finditer(err))
    assert reading, err[-3000:]
    at = err.index("bpfprof: wrote ")
    assert reading[-1].end() < at and "\r" + ESC_CLEAR in err[reading[-1].end():at], err[-3000:]
    p = run_bpfprof(["convert", "-o", tmp_path / "big2.pb.gz", path])
    assert p.returncode == 0, p.stderr
    assert "reading" not in p.stderr and "\r" not in p.stderr, p.stderr[-3000:]


def test_read_progress_view(big):
    """view of a big archive says how far it has read before its URL."""
    path, _ = big
    rc, err, out = run_pty(["view", path], until=r"showing .* at http")
    reading = list(READING.finditer(err))
    assert reading, err[-3000:]
    assert err.index("bpfprof: read big.bpfprof: ") > reading[-1].end(), err[-3000:]
    assert re.search(r"bpfprof: showing .*big\.bpfprof at http", err), err[-3000:]
