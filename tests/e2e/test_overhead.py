# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The probe cost estimate (user/capture/overhead.c, calibrate.c): measured on
this machine, weighted by calls, and the slow-probe warning that names the
costliest functions and says what to do."""

import re

import trace_util


def test_single_stepped_hot_function_is_named_with_the_fix(record):
    # f_riprel is single-stepped (rip-relative, nothing to move to) and does
    # nothing else: the probes are nearly all of the program's CPU time, far
    # past the warning's half whatever the calibration's error
    r = record("insns", "f_riprel", "20000", opts=["-F", "f_riprel"])
    assert r.rc == 0, r.describe()
    assert trace_util.counts(trace_util.xevents(r.trace)) == {"f_riprel": 20000}
    warn = [l for l in r.stderr_lines if "slow probes:" in l]
    assert len(warn) == 1, r.proc.stderr
    w = warn[0]
    # weighted by calls: every call single-stepped
    assert "100% of them single-stepped" in w, w
    assert re.search(r"single-stepped at \d+ ns per call, emulated \d+ ns, measured here", w), w
    assert "the costliest: f_riprel (100%, single-step)" in w, w
    assert "-N 'f_riprel'" in w, w


def test_cheap_recording_stays_quiet(record):
    # ten emulated calls: a few tens of microseconds of probes in a process
    # that takes milliseconds to start and exit
    r = record("insns", "f_push", "10", opts=["-F", "f_push"])
    assert r.rc == 0, r.describe()
    assert trace_util.counts(trace_util.xevents(r.trace)) == {"f_push": 10}
    assert "slow probes" not in r.proc.stderr, r.proc.stderr
