# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--args typed from DWARF (issue #32, item 1).

tests/progs/argtypes calls, in each of N rounds, one function per kind of
argument and return value (its header says what round i passes and gets
back).  One recording to an archive, converted to Chrome JSON, Perfetto
(read by the tests' own protobuf reader) and CSV: every value is the one
the program passed or returned, with its parameter's name and its type.
Doubles travel in xmm registers, which a uprobe's pt_regs does not hold.
The program is recorded twice: as built for the tests (-O1: t_double keeps
its double in xmm0 throughout, so it must say "unavailable", never show a
wrong number) and built -O0 (argtypes0: the double is spilled to the frame
and returned through rax, where bpfprof reads it: exact).  Without DWARF
the six registers stay raw, and are said to be.
"""

import csv
import io
import json
import re
import shutil
import subprocess

import pytest

import perfetto_util
from conftest import load_trace, prog_path, report_arg_counts, run_bpfprof

N = 4
UNAVAIL_XMM = "unavailable (xmm register)"
COLORS = ["RED", "GREEN", "BLUE"]


def expected(i, this, ref, doubles=False):
    """function -> (params, return) of round i, as Chrome JSON gives them (None: void).
    doubles: t_double's values are read (the -O0 build)."""
    u = 4000000000 + i
    return {
        "t_int": ({"v": i - 1}, i - 2),
        "t_uint": ({"v": u}, (2 * u) % 2**32),
        "t_bool": ({"v": bool(i & 1)}, not (i & 1)),
        "t_enum": ({"c": COLORS[i % 3]}, "BLUE" if i % 3 == 0 else "RED"),
        "t_char": ({"c": chr(ord("a") + i)}, chr(ord("b") + i)),
        "t_str": ({"s": "name-%d" % i}, len("name-%d" % i)),
        "t_double": ({"d": i + 0.5}, (i + 0.5) * 2) if doubles else ({"d": UNAVAIL_XMM}, UNAVAIL_XMM),
        "t_pair": ({"p": {"x": i, "y": -10 * i}}, {"x": -10 * i, "y": i}),
        "t_eight": ({k: i + n + 1 for n, k in enumerate("abcdefgh")}, 8 * i + 36),
        "t_void": ({"v": i}, None),
        "Counter::add": ({"this": this, "v": ref}, sum(range(i + 1))),
    }


def call_line(name, params, ret):
    """The "call" field: f(a=0, s="x") = 1."""
    def c(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, dict):
            return "{" + ", ".join("%s=%s" % (k, c(x)) for k, x in v.items()) + "}"
        if isinstance(v, str) and len(v) == 1:
            return "'%s'" % v
        if isinstance(v, str) and v.startswith("name-"):
            return '"%s"' % v
        if isinstance(v, float):
            return "%.17g" % v if v != int(v) else "%d.0" % v
        return str(v)
    s = "%s(%s)" % (name, ", ".join("%s=%s" % (k, c(v)) for k, v in params.items()))
    return s if ret is None else s + " = " + c(ret)


@pytest.fixture(scope="module", params=["argtypes", "argtypes0"])
def recording(request, tmp_path_factory):
    d = tmp_path_factory.mktemp("args")
    arch = d / "t.bpfprof"
    p = run_bpfprof(["record", "--args", "-F", "t_*", "-F", "*::add*", "-N", "t_lit", "-o", arch, "--",
                     prog_path(request.param), str(N)])
    assert p.returncode == 0, p.stderr
    m = re.search(r"this (0x[0-9a-f]+) ref (0x[0-9a-f]+)", p.stdout)
    assert m, p.stdout
    outs = {}
    for ext in ("json", "pftrace", "csv"):
        out = d / ("t." + ext)
        c = run_bpfprof(["convert", "-o", out, arch])
        assert c.returncode == 0, c.stderr
        outs[ext] = out
    return {"arch": arch, "this": m.group(1), "ref": m.group(2), "doubles": request.param == "argtypes0",
            **outs}


def rounds(events, key):
    """function (without a C++ parameter list) -> its calls in time order."""
    by = {}
    for e in sorted(events, key=lambda e: e["ts"]):
        by.setdefault(re.sub(r"\(.*\)$", "", e["name"]), []).append(key(e))
    return by


def test_chrome_json_values_named_and_typed(recording):
    tr = load_trace(recording["json"])
    calls = rounds([e for e in tr["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "call"],
                   lambda e: e["args"])
    assert sorted(calls) == sorted(expected(0, "", ""))
    for name, got in calls.items():
        assert len(got) == N, (name, got)
        for i, a in enumerate(got):
            params, ret = expected(i, recording["this"], recording["ref"], recording["doubles"])[name]
            assert a["params"] == params, (name, i, a)
            # exact types: a JSON bool is not an int, an int not a string
            for k, v in params.items():
                assert type(a["params"][k]) is type(v), (name, k, a["params"][k])
            if ret is None:
                assert "return" not in a, (name, a)
            else:
                assert a["return"] == ret and type(a["return"]) is type(ret), (name, i, a)
            assert a["call"] == call_line(name, params, ret), (name, a["call"])


# the unsigned values (unsigned, size_t): uint_value whatever their size
UNSIGNED = {("t_uint", "arg.v"), ("t_uint", "return"), ("t_str", "return")}


def perfetto_expected(name, params, ret):
    """Chrome's values as the Perfetto annotations carry them, with the field of each."""
    out = {}

    def put(key, v):
        if isinstance(v, dict):
            for k, x in v.items():
                put(key + "." + k, x)
        elif isinstance(v, bool):
            out[key] = (v, "bool_value")
        elif isinstance(v, float):
            out[key] = (v, "double_value")
        elif isinstance(v, int):
            out[key] = (v, "uint_value" if (name, key) in UNSIGNED else "int_value")
        elif v.startswith("0x"):
            out[key] = (v, "pointer_value")
        else:
            out[key] = (v, "string_value")
    for k, v in params.items():
        put("arg." + k, v)
    if ret is not None:
        put("return", ret)
    return out


def test_perfetto_typed_debug_annotations(recording):
    tr = perfetto_util.read(recording["pftrace"], types=True)
    calls = rounds([e for e in tr["traceEvents"] if e.get("ph") == "X"], lambda e: e["args"])
    assert sorted(calls) == sorted(expected(0, "", ""))
    for name, got in calls.items():
        assert len(got) == N, (name, got)
        for i, a in enumerate(got):
            params, ret = expected(i, recording["this"], recording["ref"], recording["doubles"])[name]
            want = perfetto_expected(name, params, ret)
            have = {k: (a[k], a["_types"][k]) for k in a["_types"]
                    if k.startswith("arg.") or k.startswith("return")}
            assert have == want, (name, i)
            assert a["call"] == call_line(name, params, ret)


def test_csv_args_and_return_columns(recording):
    with open(recording["csv"], newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["function"]]
    calls = rounds([dict(r, ts=int(r["start_ns"]), name=r["function"]) for r in rows],
                   lambda r: (r["args"], r["return"]))
    for name, got in calls.items():
        assert len(got) == N, (name, got)
        for i, (args, ret) in enumerate(got):
            params, r = expected(i, recording["this"], recording["ref"], recording["doubles"])[name]
            line = call_line(name, params, r)
            assert "%s(%s)" % (name, args) + ("" if r is None else " = " + ret) == line


def test_report_groups_calls_by_argument(recording):
    """report --args FUNC:PARAM: one row per value, with its count."""
    got, out = report_arg_counts(recording["arch"], "t_enum:c", "RED|GREEN|BLUE")
    want = {}
    for i in range(N):
        want[COLORS[i % 3]] = want.get(COLORS[i % 3], 0) + 1
    assert got == want, out
    # the same groups in CSV and JSON (both printed the function table instead)
    p = run_bpfprof(["report", "--format", "csv", "--args", "t_enum:c", recording["arch"]])
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert {r["value"]: int(r["calls"]) for r in rows} == want, p.stdout
    p = run_bpfprof(["report", "--format", "json", "--args", "t_enum:c", recording["arch"]])
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)["args"]
    assert (a["function"], a["param"], a["calls"], a["without"]) == ("t_enum", "c", N, 0), a
    assert {v["value"]: v["calls"] for v in a["values"]} == want, a


def test_string_not_present_at_entry_is_read_by_the_loader(tmp_path):
    """A literal whose page is not present at entry (argtypes unmaps it just
    before t_lit): bpf_probe_read_user_str cannot fault it in; the loader
    reads it from the process, as for -U probes' strings."""
    out = tmp_path / "t.json"
    p = run_bpfprof(["record", "--args", "-F", "t_lit", "-o", out, "--", prog_path("argtypes"), "1"])
    assert p.returncode == 0, p.stderr
    ev = [e for e in load_trace(out)["traceEvents"] if e.get("name") == "t_lit"]
    assert len(ev) == 1
    assert ev[0]["args"]["params"] == {"s": "far-literal"}
    assert ev[0]["args"]["return"] == 11


def test_without_dwarf_registers_are_raw_and_said(tmp_path):
    exe = tmp_path / "argtypes"
    shutil.copy(prog_path("argtypes"), exe)
    subprocess.run(["strip", "--strip-debug", str(exe)], check=True)
    out = tmp_path / "t.json"
    p = run_bpfprof(["record", "--args", "-F", "t_eight", "-o", out, "--", exe, "2"])
    assert p.returncode == 0, p.stderr
    ev = [e for e in load_trace(out)["traceEvents"] if e.get("name") == "t_eight"]
    assert len(ev) == 2
    for i, e in enumerate(sorted(ev, key=lambda e: e["ts"])):
        a = e["args"]
        assert a["arg_regs"] == "raw (no DWARF)" and "params" not in a
        assert [int(v, 16) for v in a["arg"]] == [i + 1, i + 2, i + 3, i + 4, i + 5, i + 6]
        assert int(a["ret"], 16) == 8 * i + 36
