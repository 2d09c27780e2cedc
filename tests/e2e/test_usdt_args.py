# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""-U probes: LIB matches the main executable's file name too, and
"(str,int,...)" after the probe's name shows string arguments as strings,
read in user space when the BPF side could not (README "Annotations").
"""

import os

import pytest

from conftest import load_trace, run_bpfprof
from trace_util import counts, xevents

PYTHON = "/usr/bin/python3.11"   # Debian's: built with its USDT probes

# function__entry fires only while a profile function is set (README "Python")
SCRIPT = """import sys
def alpha_fn():
    pass
def beta_fn():
    pass
sys.setprofile(lambda *a: None)
for i in range(3):
    alpha_fn()
beta_fn()
sys.setprofile(None)
print("usdtargs: ok")
"""


def usdt(trace):
    return [e for e in (trace["traceEvents"] if isinstance(trace, dict) else trace)
            if e.get("cat") == "usdt"]


def test_lib_glob_matches_the_executable(record):
    """-F 'calltree*:leaf_*' (LIB the executable's own file name) selects what -F 'leaf_*' does."""
    r = record("calltree", opts=["-F", "calltree*:leaf_*"])
    assert r.rc == 0, r.describe()
    assert dict(counts(xevents(r.trace))) == {"leaf_add": 20, "leaf_mul": 10}


@pytest.mark.skipif(not os.path.exists(PYTHON), reason="needs Debian's python3.11")
def test_python_function_entry_strings(record, tmp_path):
    """The README's -U 'python3*:python:function__entry' (LIB matching the
    executable) with (str,str,int): each call of the script's functions with
    its file name, function name and line, exactly."""
    script = tmp_path / "usdtargs.py"
    script.write_text(SCRIPT)
    r = record(PYTHON, str(script),
               opts=["-U", "python3*:python:function__entry(str,str,int)"])
    assert r.rc == 0 and "usdtargs: ok" in r.proc.stdout, r.describe()
    name = str(script)[:63]   # strings are read up to 63 bytes
    got = [tuple(e["args"]["args"]) for e in usdt(r.trace)
           if e["name"] == "python:function__entry" and e["args"]["args"][0] == name]
    assert got == [(name, "alpha_fn", 2)] * 3 + [(name, "beta_fn", 4)], got
    assert all(isinstance(e["args"]["args"][0], str) and e["args"]["args"][0] and
               isinstance(e["args"]["args"][1], str) and e["args"]["args"][1]
               for e in usdt(r.trace)), usdt(r.trace)


@pytest.mark.skipif(not os.path.exists(PYTHON), reason="needs Debian's python3.11")
def test_without_types_arguments_stay_integers(record, tmp_path):
    script = tmp_path / "usdtargs.py"
    script.write_text(SCRIPT)
    r = record(PYTHON, str(script), opts=["-U", "python3*:python:function__entry"])
    assert r.rc == 0, r.describe()
    ev = [e for e in usdt(r.trace) if e["name"] == "python:function__entry"]
    assert len(ev) >= 4 and all(all(isinstance(a, int) for a in e["args"]["args"]) for e in ev)
    assert [e["args"]["args"][2] for e in ev if e["args"]["args"][2] in (2, 4)][-4:] == \
        [2, 2, 2, 4]


def test_strings_on_pages_never_touched(record):
    """coldlabels' strings lie on a page the program never maps (it checks):
    the BPF read fails and the -U strings are read from the file."""
    r = record("coldlabels", opts=["-U", "bpfprof:info_str(str,str)",
                                    "-U", "bpfprof:event(str,int)"])
    assert r.rc == 0 and "coldlabels: ok" in r.proc.stdout, r.describe()
    assert "coldlabels: labels not mapped" in r.proc.stdout, r.proc.stdout
    assert [(e["name"], e["args"]["args"]) for e in usdt(r.trace)] == [
        ("bpfprof:info_str", ["cold-who", "cold-value"]),
        ("bpfprof:event", ["cold-event", 5])]


@pytest.mark.parametrize("spec", ["bpfprof:event(str,float)", "bpfprof:event(str,str,str)",
                                  "bpfprof:event(str", "bpfprof:event(int,int,int,int,int,int,int)"])
def test_bad_argument_types(record, spec):
    r = record("coldlabels", opts=["-U", spec], check=False)
    lines = [l for l in r.proc.stderr.splitlines() if l.startswith("bpfprof: ")]
    assert r.rc != 0 and lines == [
        "bpfprof: invalid -U '%s': argument types are (TYPE,...), TYPE str or int, at most "
        "six, at most 2 str" % spec], r.describe()


def test_strings_through_the_archive(record, tmp_path):
    """The archive keeps them: convert gives the same string arguments."""
    r = record("coldlabels", opts=["-U", "bpfprof:info_str(str,str)"], out="c.bpfprof",
               check=False)
    assert r.rc == 0, r.describe()
    out = tmp_path / "c.json"
    p = run_bpfprof(["convert", "-o", out, tmp_path / "c.bpfprof"])
    assert p.returncode == 0, p.stderr
    assert [(e["name"], e["args"]["args"]) for e in usdt(load_trace(out))] == [
        ("bpfprof:info_str", ["cold-who", "cold-value"])]
