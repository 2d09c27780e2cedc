# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--args: float and double arguments and return values (issue #32).

A uprobe's BPF program sees pt_regs, which hold no xmm register.  bpfprof
reads a float/double where DWARF and the code say it is also in memory or
an integer register: a parameter after the prologue (an -O0 build spills it
to the frame), the return value at the move into xmm0 just before `ret`.
tests/progs/argdouble is such a build; its header says what round i passes
and gets back.  Every value must be the exact double the program computed
(Python computes the same IEEE operations), in Chrome JSON, Perfetto (the
tests' own protobuf reader), CSV and `report --args`.  Where the code keeps
the value in xmm registers only (f_scale's return: `addss; pop; ret`), it
is said to be unavailable, never a wrong number.
"""

import csv
import re
import struct

import pytest

import perfetto_util
from conftest import load_trace, prog_path, report_arg_counts, run_bpfprof

N = 4
UNAVAIL_XMM = "unavailable (xmm register)"


def f32(x):
    """x rounded to a C float, as a double."""
    return struct.unpack("f", struct.pack("f", x))[0]


def expected(i):
    """function -> (params, return) of round i (floats as Python computes them)."""
    x, y = i + 0.25, -1.0 / (i + 1)
    return {
        "d_half": ({"d": i + 0.5}, (i + 0.5) / 2),
        "d_third": ({"i": i}, i / 3.0),
        "f_scale": ({"f": f32(1.25 * i)}, UNAVAIL_XMM),
        # a + x + b + y, left to right in double as C does
        "d_mixed": ({"a": i, "x": x, "b": -i, "y": y, "s": "r%d" % i}, ((i + x) + -i) + y),
    }


def text(v):
    """A value as the "call" line writes it (C's %.17g for a double)."""
    if isinstance(v, float):
        t = "%.17g" % v
        return t if "." in t or "e" in t else t + ".0"
    if isinstance(v, str) and v.startswith("r"):
        return '"%s"' % v
    return str(v)


def call_line(name, params, ret):
    return "%s(%s) = %s" % (name, ", ".join("%s=%s" % (k, text(v)) for k, v in params.items()),
                            text(ret))


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    d = tmp_path_factory.mktemp("dbl")
    arch = d / "t.bpfprof"
    p = run_bpfprof(["record", "--args", "-F", "d_*", "-F", "f_*", "-o", arch, "--",
                     prog_path("argdouble"), str(N)])
    assert p.returncode == 0, p.stderr
    outs = {"arch": arch}
    for ext in ("json", "pftrace", "csv"):
        out = d / ("t." + ext)
        c = run_bpfprof(["convert", "-o", out, arch])
        assert c.returncode == 0, c.stderr
        outs[ext] = out
    return outs


def by_function(events, key):
    by = {}
    for e in sorted(events, key=lambda e: e["ts"]):
        by.setdefault(e["name"], []).append(key(e))
    return by


def each_call(trace):
    """(function, i, its args, expected params, expected return) of each call
    of the trace, after checking that every function has its N calls."""
    calls = by_function([e for e in trace["traceEvents"] if e.get("ph") == "X"],
                        lambda e: e["args"])
    assert sorted(calls) == sorted(expected(0))
    for name, got in calls.items():
        assert len(got) == N, (name, got)
        for i, a in enumerate(got):
            params, ret = expected(i)[name]
            yield name, i, a, params, ret


def test_chrome_json_doubles_exact(recording):
    for name, i, a, params, ret in each_call(load_trace(recording["json"])):
        assert a["params"] == params, (name, i, a)
        for k, v in params.items():
            assert type(a["params"][k]) is type(v), (name, k, a["params"][k])
        assert a["return"] == ret and type(a["return"]) is type(ret), (name, i, a)
        assert a["call"] == call_line(name, params, ret), (name, a["call"])


def test_perfetto_double_annotations(recording):
    tr = perfetto_util.read(recording["pftrace"], types=True)
    for name, i, a, params, ret in each_call(tr):
        want = {}
        for k, v in list(params.items()) + [("", ret)]:
            key = "arg." + k if k else "return"
            kind = ("double_value" if isinstance(v, float) else
                    "int_value" if isinstance(v, int) else "string_value")
            want[key] = (v, kind)
        have = {k: (a[k], a["_types"][k]) for k in a["_types"]
                if k.startswith("arg.") or k == "return"}
        assert have == want, (name, i, have)


def test_csv_doubles_exact(recording):
    with open(recording["csv"], newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["function"]]
    calls = by_function([dict(r, ts=int(r["start_ns"]), name=r["function"]) for r in rows],
                        lambda r: (r["args"], r["return"]))
    assert sorted(calls) == sorted(expected(0))
    for name, got in calls.items():
        assert len(got) == N, (name, got)
        for i, (args, ret) in enumerate(got):
            params, r = expected(i)[name]
            assert "%s(%s) = %s" % (name, args, ret) == call_line(name, params, r)
            # the digits give back the very double
            for k, v in params.items():
                if isinstance(v, float):
                    m = re.search(r"\b%s=([-0-9.e+]+)" % k, args)
                    assert m and float(m.group(1)) == v, (name, k, args)


def test_report_groups_calls_by_double(recording):
    """report --args d_half:d: one row per value, each called once."""
    got, out = report_arg_counts(recording["arch"], "d_half:d", r"[-0-9.e+]+")
    assert {float(v): n for v, n in got.items()} == {i + 0.5: 1 for i in range(N)}, out
