# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""bpfprof ends when its work is done, whatever the uprobes' grace periods
do (issue 26; user/capture/teardown.c, user/cost/calibrate.c).

Removing a uprobe link waits, in whoever closes its last descriptor, for a
grace period of the uprobes' SRCU.  A thread with a return probe pending
holds that grace period off, and every later return probe it hits renews
the hold (the kernel's lease timer is pushed back each time): tests/progs/busy
recorded by another bpfprof (main never returns, tick is called every
millisecond) holds every grace period off for as long as it runs.  No close
of bpfprof's may be the last one then: the probes' removal is left to
bpfprof-release (and the calibration's to its own child, base/away.c), and
bpfprof exits as soon as its output is written.
"""

import shutil
import signal
import subprocess
import uuid

from conftest import BPFPROF, TIMEOUT, load_trace, prog_path, read_until
from trace_util import counts, xevents


def test_record_ends_while_grace_periods_are_held_off(tmp_path):
    # a copy of bpfprof: another file, so its probe costs are measured anew
    # (calibrate.c keys its cache by the binary), Python probes included
    bp = tmp_path / "bpfprof"
    shutil.copy(BPFPROF, bp)  # not copy2: a new mtime, so a new key
    load = subprocess.Popen([str(BPFPROF), "record", "-q", "-o", str(tmp_path / "load.json"), "--",
                             str(prog_path("busy")), "0", "bpfprof-e2e-%s" % uuid.uuid4().hex],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0, start_new_session=True)
    try:
        read_until(load.stdout, r"^busy: pid=\d+$", TIMEOUT, "the load's stdout")
        out = tmp_path / "t.json"
        try:
            r = subprocess.run([str(bp), "record", "-o", str(out), "--", str(prog_path("calltree"))],
                               capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired as e:
            raise AssertionError("bpfprof did not end within %d s while the load runs "
                                 "(it waits for a probe's removal); its stderr: %s"
                                 % (TIMEOUT, e.stderr)) from None
        assert r.returncode == 0, r.stderr
        assert "wrote %s" % out in r.stderr, r.stderr
        # calltree.c's facts: the recording is whole
        c = counts(xevents(load_trace(out)))
        assert (c["main"], c["run"], c["parse"], c["compute"], c["leaf_add"], c["leaf_mul"],
                c["fib"], c["slow_io"]) == (1, 1, 3, 5, 20, 10, 177, 1), c
        # the grace periods were held off the whole time: the load still runs
        assert load.poll() is None, load.stderr.read()
    finally:
        if load.poll() is None:
            load.send_signal(signal.SIGINT)
        try:
            load.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            load.kill()
            load.wait()
        load.stdout.close()
        load.stderr.close()
