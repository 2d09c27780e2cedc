# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--compensate (user/decode/compensate.c): what holds whatever the machine's
timing -- no compensated duration below the floor, every call inside its
parent and a parent at least as long as its children together, and the
archive says which probe costs were taken out: the calibration's and those
measured in the recording for the traced process itself.  (How close the
compensated times come to the untraced ones is measured by
bench/comp_children.py and test_overhead.py, not asserted here.)"""

import re

import trace_util
from conftest import run_bpfprof, load_trace

ROUNDS, LEAVES = 30, 10


def test_compensated_calls_nest_and_the_archive_says_how(record, tmp_path):
    # compcost: parent called ROUNDS times from main, LEAVES empty leaves from each parent
    a = record("compcost", str(ROUNDS), "nort", str(LEAVES), "8000",
               opts=["-F", "parent", "-F", "leaf", "--compensate"], out="c.bpfprof")
    assert a.rc == 0, a.describe()
    c = run_bpfprof(["convert", "-o", str(tmp_path / "c.json"), str(a.out)])
    assert c.returncode == 0, c.stderr
    trace = load_trace(tmp_path / "c.json")
    xs = trace_util.xevents(trace)
    assert trace_util.counts(xs) == {"parent": ROUNDS, "leaf": ROUNDS * LEAVES}
    pid = {e["pid"] for e in xs}
    assert len(pid) == 1
    pid = pid.pop()
    # never negative: every call lasts at least the floor (10 ns between a thread's events)
    assert min(e["dur"] for e in xs) >= 0.010, min(e["dur"] for e in xs)
    parents = sorted((e for e in xs if e["name"] == "parent"), key=lambda e: e["ts"])
    leaves = sorted((e for e in xs if e["name"] == "leaf"), key=lambda e: e["ts"])
    for i, p in enumerate(parents):
        kids = leaves[i * LEAVES:(i + 1) * LEAVES]
        # each parent's own leaves within it, one after the other; parents one after the other
        assert all(p["ts"] < k["ts"] and k["ts"] + k["dur"] < p["ts"] + p["dur"] for k in kids), (p, kids)
        assert all(x["ts"] + x["dur"] < y["ts"] for x, y in zip(kids, kids[1:])), kids
        assert i == 0 or parents[i - 1]["ts"] + parents[i - 1]["dur"] < p["ts"]
        # a parent lasts at least its children together (the 1 ns of the JSON's rounding apart)
        assert p["dur"] + 0.001 >= sum(k["dur"] for k in kids), (p, kids)
        assert abs(p["args"]["self_us"] - (p["dur"] - sum(k["dur"] for k in kids))) < 0.002 * (LEAVES + 1), p
    # the archive's note: the calibration's figures, then this process's own
    # (every kind of interval came more than 16 times: LEAVES per parent)
    note = trace["bpfprofTiming"]
    m = re.match(r"compensated: per call (\d+) ns inside, (\d+) ns per traced child \(emulated\); "
                 r"\d+ / \d+ \(single-step\); \d+ / \d+ \(nop5\); return probe (\d+) ns \(calibrated\); "
                 r"measured in the recording \(pid (\d+)\): (\d+) / (\d+) \(emulated\); "
                 r"return probe (\d+) ns(?:; batch flush (\d+) ns)?"
                 r"(?:; (\d+) stalls in the probes taken out \(\d+ us\))?$", note)
    assert m, note
    cal_in, cal_total, cal_ret, npid, in_, total, ret, flush, stalls = (int(x or 0) for x in m.groups())
    assert npid == pid, (note, pid)
    # the parts of a call's cost fit in it, measured or calibrated; measured, no
    # more than COMP_ADAPT_CAP (1.5) x the calibrated figure
    assert 0 < cal_in < cal_total and 0 < cal_ret < cal_total, note
    assert 0 < in_ < total and 0 < ret < total, note
    assert in_ <= 1.5 * cal_in + 1 and total <= 1.5 * cal_total + 2 and ret <= 1.5 * cal_ret + 1, note
    # a batch flush (one hit in 64 sends the batch) costs at most the calibrated inside part
    assert flush <= cal_in + 1, note
    # stalls are taken out of the intervals between two events of a thread, at most one each
    assert stalls <= ROUNDS * (2 * LEAVES + 2), note
    # report and the JSON written directly say the same
    rep = run_bpfprof(["report", str(a.out)])
    assert rep.returncode == 0, rep.stderr
    assert rep.stdout.splitlines()[1] == "durations " + note, rep.stdout
    assert "durations " + note in a.proc.stderr, a.proc.stderr


def test_raw_clock_measures_nothing(record):
    # without --compensate nothing is measured nor taken out: the note says so
    r = record("compcost", str(ROUNDS), "nort", str(LEAVES), "8000", opts=["-F", "parent", "-F", "leaf"])
    assert r.rc == 0, r.describe()
    assert r.trace["bpfprofTiming"] == "raw clock"
    assert "measured in the recording" not in r.proc.stderr
