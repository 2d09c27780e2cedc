# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The summary says when Python call tracing dominates the run time.

The probes' cost is estimated as calls x the Python probe path's measured
cost (calibrate.c, calibrate_py.c) against the target's CPU time.  A script
of hot, tiny functions spends nearly all its traced time in the probes (an
untraced call is ~50 ns, a probed one thousands); a script whose time is in
loops without calls spends a few percent.  The threshold (half) sits far
from both, so the machine's load cannot flip either outcome.
"""

from conftest import REPO, debian_python

PY = REPO / "tests" / "progs" / "py"


def test_hot_tiny_functions_warn_and_suggest_sampling(record):
    r = record(debian_python(), str(PY / "hot.py"), "100000", out="t.bpfprof", timeout=180)
    assert r.rc == 0, r.describe()
    assert r.proc.stdout.split() == ["100000"]   # the program computed what it computes
    warn = [l for l in r.stderr_lines if "slow probes" in l]
    assert len(warn) == 1, r.describe()
    assert "Python calls" in warn[0] and "--sample" in warn[0], warn[0]
    assert "tiny (" in warn[0] and "-N 'py:tiny'" in warn[0], warn[0]


def test_coarse_functions_do_not_warn(record):
    r = record(debian_python(), str(PY / "coarse.py"), "20", out="t.bpfprof", timeout=180)
    assert r.rc == 0, r.describe()
    assert "calls recorded" in r.proc.stderr, r.describe()
    assert "slow probes" not in r.proc.stderr, r.describe()
