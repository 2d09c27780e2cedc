# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Stack samples and dependency edges in the summarising formats, read by
their real clients.

tests/progs/cpusplit spends its cpu time 3:1 in heavy() and light() (both
through spin_units()), then sleeps 200 ms in nap().  It is recorded once with
--sample --offcpu into an archive, converted to pprof, folded stacks and
speedscope, and each output is checked twice: against the report of the
same archive (the exporters must carry the sampled weights exactly), and
against what cpusplit guarantees (3:1, one 200 ms sleep).  The 3:1 share is
measured by a sampler on a machine that may be busy, so it is allowed a few
points either way; the exact checks are the ones against the report.

tests/progs/pingpong cond 10 wakes its consumer exactly 10 times from
produce(): the DOT graph must draw one dashed wakeup edge produce -> consume
labelled 10, and Graphviz must render it.
"""

import json
import re
import shutil
import subprocess

import pytest

from conftest import prog_path, run_bpfprof
from test_clients import (ARTIFACTS, go_env, need, open_in_speedscope, pprof, pprof_top,  # noqa: F401
                          sandwich_rows, speedscope)

CPUSPLIT = {"main", "work", "heavy", "light", "spin_units", "nap"}
SHARE = (0.68, 0.82)          # heavy / (heavy + light): 3:1 is 0.75
NAP_NS = 190e6                # nap() sleeps 200 ms: at least that, however late it wakes


@pytest.fixture(scope="module")
def cpusplit(tmp_path_factory):
    """{name: path}: cpusplit recorded with --sample --offcpu, converted to each format."""
    d = tmp_path_factory.mktemp("sampled")
    arch = d / "cpusplit.bpfprof"
    r = run_bpfprof(["record", "-q", "--sample", "--offcpu", "-o", arch, "--",
                     prog_path("cpusplit"), "1500"])
    assert r.returncode == 0, "record: exit %s\n%s" % (r.returncode, r.stderr)
    out = {"archive": arch}
    for fmt, name in (("pprof", "cpusplit.pb.gz"), ("folded", "cpusplit.folded"),
                      ("speedscope", "cpusplit.speedscope.json")):
        p = d / name
        r = run_bpfprof(["convert", "-o", p, arch])
        assert r.returncode == 0, "convert -o %s: exit %s\n%s" % (name, r.returncode, r.stderr)
        out[fmt] = p
    r = run_bpfprof(["report", "--format", "json", arch])
    assert r.returncode == 0, r.stderr
    out["report"] = rep = json.loads(r.stdout)
    # Everything below compares numbers; with a handful of samples they mean nothing.
    assert rep["cpu_samples"] > 100 and rep["offcpu_ns"] > 0, \
        "cpusplit 1500 gave %d cpu samples (~1500 expected), %d ns off-cpu (~200 ms)" % (
            rep["cpu_samples"], rep["offcpu_ns"])
    return out


def totals(report, kind="samples"):
    """{function: total ns} of the report's cpu samples (or "offcpu")."""
    return {row["name"]: row["total_ns"] for row in report[kind]}


def share(heavy, light):
    return heavy / (heavy + light)


# ------------------------------------------------------------ pprof

def test_pprof_cpu_split(cpusplit, go_env):
    """A sampling-only recording opens as a CPU profile: cum of heavy ~3x light."""
    rows, head = pprof_top(go_env, cpusplit["pprof"], "-cum", "-unit=ns")
    assert any(l.startswith("Type: cpu") for l in head), head
    want = totals(cpusplit["report"])
    for fn in ("main", "work", "heavy", "light", "spin_units"):
        assert fn in rows, "%s missing: %s" % (fn, sorted(rows))
        assert rows[fn][1] == want[fn], (fn, rows[fn], want[fn])
    # the time is spin_units' own, reached through heavy or light (a sample
    # may land in their own loop between two calls: a few at most)
    assert rows["heavy"][0] <= 0.02 * rows["heavy"][1], rows
    assert rows["light"][0] <= 0.02 * rows["light"][1], rows
    # (cum: kernel frames on top of spin_units, interrupts, take a share that
    # depends on the machine, not on bpfprof)
    assert rows["spin_units"][1] >= 0.95 * (rows["heavy"][1] + rows["light"][1])
    s = share(rows["heavy"][1], rows["light"][1])
    assert SHARE[0] <= s <= SHARE[1], (s, rows["heavy"], rows["light"])
    # -sample_index=cpu says the same; samples counts them
    again, _ = pprof_top(go_env, cpusplit["pprof"], "-cum", "-unit=ns", "-sample_index=cpu")
    assert again["heavy"] == rows["heavy"]
    counts, _ = pprof_top(go_env, cpusplit["pprof"], "-sample_index=samples")
    n = {row["name"]: row["total_samples"] for row in cpusplit["report"]["samples"]}
    assert counts["spin_units"][1] == n["spin_units"] > 100, (counts["spin_units"], n)


def test_pprof_offcpu_nap(cpusplit, go_env):
    """-sample_index=offcpu: the 200 ms nap, down into the kernel's sleep."""
    rows, head = pprof_top(go_env, cpusplit["pprof"], "-unit=ns", "-sample_index=offcpu")
    assert any(l.startswith("Type: offcpu") for l in head), head
    assert rows["nap"][1] >= NAP_NS, rows["nap"]
    assert rows["nap"][1] == totals(cpusplit["report"], "offcpu")["nap"]
    assert "spin_units" not in rows and "heavy" not in rows, sorted(rows)
    # kernel frames are functions too
    assert any(f in rows for f in ("do_nanosleep", "hrtimer_nanosleep", "__x64_sys_nanosleep")), \
        sorted(rows)


def test_pprof_raw_samples(cpusplit, go_env):
    """Five values in every sample; the main binary, the kernel and unknown frames as mappings."""
    out = pprof(go_env, "-raw", cpusplit["pprof"])
    assert "calls/count wall/nanoseconds samples/count cpu/nanoseconds[dflt] offcpu/nanoseconds" \
        in out, out[:2000]
    assert "PeriodType: cpu nanoseconds" in out
    assert re.search(r"^Period: 1001001$", out, re.M), out[:2000]   # 999 Hz
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+): [\d ]+$", out, re.M)
    assert rows, out[:2000]
    assert all(c == "0" and w == "0" for c, w, _, _, _ in rows)     # no calls were traced
    assert any(int(o) > 0 for *_, o in rows) and any(int(n) > 0 for _, _, n, _, _ in rows)
    maps = re.findall(r"^\d+: 0x0/0x0/0x0 (\S+)\s+\[FN\]$", out, re.M)
    assert maps[0].endswith("tests/progs/cpusplit"), maps     # pprof's "File:"
    assert "[kernel]" in maps, maps
    # a location per function: kernel ones in [kernel]; frames with no symbol are
    # named by their file and offset, in that file's mapping
    locs = dict(re.findall(r"^\s+\d+: 0x0 M=\d+ (.+) (\S+):\d+ s=\d+$", out, re.M))
    assert locs.get("do_nanosleep") == "[kernel]", sorted(locs.items())[:20]
    # the function's file: its source file from DWARF (the program is built -g)
    assert locs.get("nap", "").endswith(("tests/progs/cpusplit.c", "tests/progs/cpusplit")), locs.get("nap")
    for name, file in locs.items():
        if name.startswith("[unknown] "):
            m = re.match(r"^\[unknown\] (\S+)\+0x[0-9a-f]+$", name)
            assert m, name
            assert file.startswith("[") or file.endswith("/" + m.group(1)), (name, file)


def test_pprof_calls_and_samples(tmp_path, go_env):
    """Traced calls beside samples: wall is the default, cpu still has the stacks."""
    out = tmp_path / "mixed.pb.gz"
    r = run_bpfprof(["record", "-q", "--sample", "-F", "work", "-F", "heavy", "-F", "light",
                     "-o", out, "--", prog_path("cpusplit"), "400"])
    assert r.returncode == 0, r.stderr
    rows, head = pprof_top(go_env, out, "-unit=ns")
    assert any(l.startswith("Type: wall") for l in head), head
    assert set(rows) == {"work", "heavy", "light"}, sorted(rows)
    calls, _ = pprof_top(go_env, out, "-sample_index=calls")
    assert int(calls["heavy"][0]) == int(calls["light"][0]) > 0, calls
    cpu, _ = pprof_top(go_env, out, "-cum", "-unit=ns", "-sample_index=cpu")
    assert "spin_units" in cpu and cpu["heavy"][1] > cpu["light"][1], cpu


# ------------------------------------------------------------ folded

def folded(path):
    stacks = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^(\S(?:.*\S)?) (\d+)$", line)
        assert m, "not a folded line: %r" % line
        assert m.group(1) not in stacks, "duplicate stack %r" % m.group(1)
        stacks[m.group(1)] = int(m.group(2))
    return stacks


def test_folded_samples(cpusplit):
    """Values are sampled ns: heavy's stacks weigh ~3x light's; off-cpu stacks end in [off-cpu]."""
    stacks = folded(cpusplit["folded"])
    cpu = {s: v for s, v in stacks.items() if not s.endswith(";[off-cpu]")}
    off = {s[:-len(";[off-cpu]")]: v for s, v in stacks.items() if s.endswith(";[off-cpu]")}
    heavy = sum(v for s, v in cpu.items() if "heavy" in s.split(";"))
    light = sum(v for s, v in cpu.items() if "light" in s.split(";"))
    want = totals(cpusplit["report"])
    assert (heavy, light) == (want["heavy"], want["light"])
    assert SHARE[0] <= share(heavy, light) <= SHARE[1], (heavy, light)
    assert sum(cpu.values()) == cpusplit["report"]["cpu_samples"] * 1001001
    assert any(s.endswith(";main;work;heavy;spin_units") for s in cpu), sorted(cpu)
    naps = [(s, v) for s, v in off.items() if ";main;nap;" in s]
    assert len(naps) == 1, off
    assert naps[0][1] >= NAP_NS, naps
    assert sum(off.values()) == cpusplit["report"]["offcpu_ns"]


# ------------------------------------------------------------ speedscope

def test_speedscope_sampled_file(cpusplit):
    """One sampled profile per kind for cpusplit's thread, opened on the cpu samples."""
    doc = json.loads(cpusplit["speedscope"].read_text())
    frames = [f["name"] for f in doc["shared"]["frames"]]
    profs = doc["profiles"]
    assert [p["type"] for p in profs] == ["sampled", "sampled"], [p["name"] for p in profs]
    cpu, off = profs
    assert re.match(r"^cpusplit \(pid \d+, tid \d+\) \(cpu samples\)$", cpu["name"]), cpu["name"]
    assert off["name"] == cpu["name"].replace("(cpu samples)", "(off-cpu)")
    assert doc["activeProfileIndex"] == 0
    for p in profs:
        assert p["unit"] == "nanoseconds" and len(p["samples"]) == len(p["weights"])
        assert p["endValue"] - p["startValue"] == sum(p["weights"])
        assert all(0 <= i < len(frames) for st in p["samples"] for i in st)
    by = {}
    for st, w in zip(cpu["samples"], cpu["weights"]):
        names = [frames[i] for i in st]
        for fn in ("heavy", "light"):
            if fn in names:
                by[fn] = by.get(fn, 0) + w
                # a sample inside the dynamic linker (a first call's lazy
                # binding: no frame pointers there) may miss the outer frames
                if any(n.startswith("[unknown] ld-linux") for n in names):
                    continue
                # a stack the unwinder could not take to a root is flagged
                if names[0] == "[truncated]":
                    continue
                # outermost first; then spin_units, or nothing of cpusplit's
                # when the sample is in fn's own code between two calls
                i = names.index("main")
                assert names[i:i + 3] == ["main", "work", fn], names
                assert [n for n in names[i + 3:] if n in CPUSPLIT] in ([], ["spin_units"]), names
    want = totals(cpusplit["report"])
    assert by == {"heavy": want["heavy"], "light": want["light"]}
    assert len(cpu["samples"]) == cpusplit["report"]["cpu_samples"]
    assert sum(off["weights"]) == cpusplit["report"]["offcpu_ns"]


def test_speedscope_sampled_loads(cpusplit, speedscope):
    # kernel frames (interrupts, the clock's system call) make many rows: all in view
    text, b = open_in_speedscope(speedscope, "sampled", cpusplit["speedscope"], tall=True)
    problems = ["console %s: %s" % (lvl, t) for lvl, t in b.console if lvl == "error"]
    problems += ["exception: " + e for e in b.exceptions]
    problems += ["alert: " + d for d in b.dialogs]
    detail = "\n".join(problems) + "\n--- console\n" + "\n".join("%s: %s" % c for c in b.console)
    assert not problems, "speedscope reported problems:\n" + detail
    assert isinstance(text, str) and "Something went wrong" not in text, \
        "speedscope did not show the profile (got %r)\n%s" % (text, detail)
    assert any("Importing as speedscope json file" in t for _, t in b.console), detail
    rows = sandwich_rows(text)
    for fn in ("heavy", "light", "spin_units", "work", "main"):
        assert fn in rows, "speedscope does not list %s: %s\n%s" % (fn, sorted(rows), text)


def test_speedscope_calls_and_samples(tmp_path):
    """Traced calls and samples of one thread: its evented profile, then its sampled one."""
    out = tmp_path / "mixed.speedscope.json"
    r = run_bpfprof(["record", "-q", "--sample", "-F", "work", "-F", "heavy", "-F", "light",
                     "-o", out, "--", prog_path("cpusplit"), "300"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    profs = doc["profiles"]
    assert [p["type"] for p in profs] == ["evented", "sampled"], [p["name"] for p in profs]
    assert profs[1]["name"] == profs[0]["name"] + " (cpu samples)"
    assert doc["activeProfileIndex"] == 0
    frames = [f["name"] for f in doc["shared"]["frames"]]
    opened = {frames[e["frame"]] for e in profs[0]["events"] if e["type"] == "O"}
    assert opened == {"work", "heavy", "light"}, opened
    assert any(frames[st[-1]] == "spin_units" for st in profs[1]["samples"])


# ------------------------------------------------------------ DOT

@pytest.fixture(scope="module")
def pingpong_dot(tmp_path_factory):
    p = tmp_path_factory.mktemp("edges") / "pingpong.dot"
    r = run_bpfprof(["record", "-q", "-o", p, "--", prog_path("pingpong"), "cond", "10"])
    assert r.returncode == 0, "record: exit %s\n%s" % (r.returncode, r.stderr)
    return p


def dep_edges(text):
    """[(kind, source, target, count, attributes)] of the dashed edges of bpfprof's DOT."""
    nodes = {m.group(1): m.group(2) for m in
             re.finditer(r'^\t(f\d+) \[label="([^"\\]+)\\n', text, re.M)}
    return [(m.group(3), nodes[m.group(1)], nodes[m.group(2)], int(m.group(4)), m.group(5))
            for m in re.finditer(r'^\t(f\d+) -> (f\d+) \[label="(\w+) (\d+)"(.*)\];$', text, re.M)]


def test_dot_dependency_edges(pingpong_dot):
    text = pingpong_dot.read_text()
    edges = dep_edges(text)
    wake = [e for e in edges if e[0] == "wakeup"]
    assert [(k, s, t, n) for k, s, t, n, _ in wake] == [("wakeup", "produce", "consume", 10)], edges
    assert "style=dashed" in wake[0][4] and "constraint=false" in wake[0][4]
    fork = [e for e in edges if e[0] == "fork"]
    assert [(s, t, n) for _, s, t, n, _ in fork] == [("start_consumer", "consumer_thread", 1)], edges
    colors = {k: re.search(r'color="(#[0-9a-f]{6})"', a).group(1) for k, _, _, _, a in edges}
    assert len(set(colors.values())) == len(colors), colors   # one colour per kind
    # the call graph is still drawn: main calls produce 10 times
    assert re.search(r'label="produce\\n10 calls\\n', text)
    assert "11 dependency edges" in text


def test_dot_edges_render(pingpong_dot, tmp_path):
    need("/usr/bin/dot", "Graphviz dot")
    svg = tmp_path / "pingpong.svg"
    p = subprocess.run(["/usr/bin/dot", "-Tsvg", "-o", svg, pingpong_dot], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, "dot failed: %s" % p.stderr
    assert not p.stderr.strip(), "dot complained: %s" % p.stderr
    text = svg.read_text()
    assert ">wakeup 10</text>" in text and ">fork 1</text>" in text
    assert 'stroke-dasharray' in text    # dashed
    for fn in ("produce", "consume", "main"):
        assert ">%s</text>" % fn in text, "%s not drawn" % fn
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(svg, ARTIFACTS / "pingpong-edges.svg")
