# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Sampling: cpu-clock stacks, off-cpu time, system-wide mode, symbols.

tests/progs/cpusplit spends its cpu time 3:1 in heavy() and light() (the
same loop, 3x the iterations), then sleeps 200 ms in nap(); libwork spends
its time in libz's adler32.  Both run for an amount of their own CPU time,
so a busy machine gives as many samples, later.  What the tests assert
about samples is what the programs guarantee: shares of CPU time (with a
tolerance of several standard deviations), whole call chains; never where
one sample lands inside a function that runs code of its own, nor how long
a sleep takes beyond its minimum.
"""

import subprocess
import time

import pytest

import trace_util
from conftest import debian_python, prog_path, run_bpfprof


CPUSPLIT = {"main", "work", "heavy", "light", "spin_units", "nap"}


def samples(trace):
    return [e for e in trace["traceEvents"] if e.get("cat") == "sample"]


def offcpu(trace):
    return [e for e in trace["traceEvents"] if e.get("cat") == "offcpu"]


def test_cpu_split_3_to_1(record):
    r = record(str(prog_path("cpusplit")), "1500", opts=["--sample=999"])
    assert r.rc == 0, r.describe()
    ss = samples(r.trace)
    heavy = sum(1 for e in ss if "heavy" in e["args"]["stack"])
    light = sum(1 for e in ss if "light" in e["args"]["stack"])
    assert heavy + light > 200, (heavy, light, r.describe())
    share = heavy / (heavy + light)
    # 3:1 of cpu time is 0.75; cpu-clock samples are taken per CPU, so other
    # load on a 2-vCPU machine moves the share a little (0.67 seen once)
    assert 0.60 <= share <= 0.88, (heavy, light, share)
    # the stacks are whole: main -> work -> heavy, outermost first, then
    # spin_units, or nothing of the program's (a sample in heavy's own code)
    for e in ss:
        st = e["args"]["stack"]
        if "heavy" in st:
            if e["args"].get("truncated"):
                # the unwinder could not reach main (rare on a loaded machine):
                # flagged, never shown as a whole stack
                assert st[0] == "[truncated]", st
                continue
            i = st.index("main")
            assert st[i:i + 3] == ["main", "work", "heavy"], st
            assert [f for f in st[i + 3:] if f in CPUSPLIT] in ([], ["spin_units"]), st
            assert not e["args"].get("truncated"), st
    # every sample stands for the period: 1/999 s
    assert all(abs(e["args"]["weight_us"] - 1001.001) < 0.01 for e in ss)
    assert "cpu samples" in r.proc.stderr


def test_sampling_only_has_no_call_events(record):
    r = record(str(prog_path("cpusplit")), "200", opts=["--sample"])
    assert r.rc == 0, r.describe()
    assert not [e for e in r.trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "call"]


def test_sample_with_function_tracing(record):
    r = record(str(prog_path("cpusplit")), "300", opts=["--sample", "-F", "work", "-F", "nap"])
    assert r.rc == 0, r.describe()
    calls = [e for e in r.trace["traceEvents"] if e.get("cat") == "call"]
    assert sorted(e["name"] for e in calls) == ["nap", "work"]
    work = [e for e in calls if e["name"] == "work"][0]
    ss = samples(r.trace)
    in_work = [e for e in ss if "work" in e["args"]["stack"]]
    def in_probe_trap(e):
        # taken while the kernel handled work()'s own entry or return probe
        # (int3 trap): at the boundary, on either side of the timestamps
        st = e["args"]["stack"]
        return "asm_exc_int3" in st or any(f.startswith("uprobe") for f in st)

    inside = [e for e in in_work
              if e["tid"] == work["tid"] and
              (work["ts"] <= e["ts"] <= work["ts"] + work["dur"] or
               (in_probe_trap(e) and work["ts"] - 1000 <= e["ts"] <= work["ts"] + work["dur"] + 1000))]
    # every sample whose stack holds work() falls inside the traced work() call
    # (how many there are depends on the machine's load, not on bpfprof)
    assert len(in_work) > 20 and len(inside) == len(in_work), (len(inside), len(in_work))


def test_offcpu_attributes_the_sleep(record):
    r = record(str(prog_path("cpusplit")), "100", opts=["--offcpu"])
    assert r.rc == 0, r.describe()
    naps = [e for e in offcpu(r.trace) if "nap" in e["args"]["stack"]]
    total_us = sum(e["dur"] for e in naps)
    # 200 ms asked: at least that (a loaded machine may wake it later: no upper bound)
    assert total_us >= 195000, (total_us, naps)
    st = naps[0]["args"]["stack"]
    i = st.index("main")
    assert st[i:i + 2] == ["main", "nap"], st
    # the kernel part of the stack is symbolized from kallsyms
    assert any(f in st for f in ("do_nanosleep", "hrtimer_nanosleep", "__x64_sys_nanosleep")), st
    assert all(e["name"] == "[off-cpu] nap" for e in naps)


def test_offcpu_stacks_of_processes_gone_before_decoding(record):
    """Eight brief processes, one after the other: each maps libc after its
    exec, forks a child (which polls in nanosleep), blocks in brief_block's
    read() until that child sees it asleep, and exits at once, long before
    the 50 ms drain reads its stacks.  Before the mappings were recorded
    (BP_REC_MMAP), every one of these stacks read [unknown] [unmapped] for
    libc and lost the frames under it, and the forked children's too.  Now
    every slice of every brief process and child is whole, the children's
    from their parent's mappings, and each of the eight has its
    brief_block slice, main -> brief_block -> read (one whose switch-in
    the kernel did not show the BPF program ends at its exit: docs/sampling.md)."""
    r = record("/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8; do %s; done" % prog_path("brief"),
               opts=["--offcpu"])
    assert r.rc == 0, r.describe()
    names = {e["pid"]: e["args"]["name"] for e in r.trace["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert sorted(names.values()).count("brief") == 16, names
    # a thread blocked inside execve has no user stack to walk: its registers
    # are the old image's, its memory already the new one ([truncated], execve)
    mine = [e for e in offcpu(r.trace) if e["ph"] == "X" and names.get(e["pid"]) == "brief"
            and "__x64_sys_execve" not in e["args"]["stack"]]
    assert mine
    for e in mine:
        st = e["args"]["stack"]
        assert not [f for f in st if f.startswith("[unknown]") or f == "[truncated]"], st
        # or blocked in the dynamic linker's start-up, before main (a page
        # fault while mapping libc; the first hit of the sampler's uprobe on
        # _dl_debug_state, which maps the kernel's page for single-stepping)
        if st[:2] == ["_start", "_dl_start"]:
            continue
        # or in a page fault taken by _start's own first instructions (under
        # memory pressure: ci5), the kernel's frames right under it
        if len(st) > 1 and st[0] == "_start" and st[1].startswith("asm_exc_"):
            continue
        assert st[:3] == ["_start", "__libc_start_main", "__libc_start_call_main"], st
        i = st.index("main")
        if "brief_block" in st:
            assert st[i:i + 3] in (["main", "brief_block", "read"], ["main", "brief_block", "__libc_read"]), st
    blocked = {e["pid"] for e in mine if "brief_block" in e["args"]["stack"]}
    assert len(blocked) == 8, (blocked, names)


def test_dlopened_library_of_processes_gone_before_decoding(record):
    """Four dlspin processes, one after the other: each dlopens libz (which
    it does not link: only that dlopen maps it), spends nearly all its CPU
    time in adler32 called from spin_lib, and exits at once, most of its
    samples decoded after it is gone.  libz's mapping then comes only from
    what the dynamic linker's hook recorded at the dlopen (mmap_dl, bpf/
    sample.bpf.c), libc's from its hook at start-up: without them, adler32
    and libc's frames read [unknown].  Every stack under spin_lib is whole
    and names adler32 (or adler32_z, which it calls) just below spin_lib,
    or nothing (a sample in spin_lib's own loop)."""
    r = record("/bin/sh", "-c", "for i in 1 2 3 4; do %s >/dev/null; done" % prog_path("dlspin"),
               opts=["--sample=999"])
    assert r.rc == 0, r.describe()
    names = {e["pid"]: e["args"]["name"] for e in r.trace["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert sorted(names.values()).count("dlspin") == 4, names
    mine = [e for e in samples(r.trace)
            if names.get(e["pid"]) == "dlspin" and "spin_lib" in e["args"]["stack"]]
    # four times some 30 ms of CPU each, at 999 Hz: far more than this
    assert len(mine) >= 20, (len(mine), r.describe())
    for e in mine:
        st = e["args"]["stack"]
        assert not [f for f in st if f.startswith("[unknown]") or f == "[truncated]"], st
        assert st[:3] == ["_start", "__libc_start_main", "__libc_start_call_main"], st
        i = st.index("spin_lib")
        assert st[i - 1:i] == ["main"], st
        assert st[i + 1:i + 2] in ([], ["adler32"], ["adler32_z"]), st
    assert [e for e in mine if st_after(e, "spin_lib") in ("adler32", "adler32_z")]


def st_after(e, name):
    st = e["args"]["stack"]
    i = st.index(name)
    return st[i + 1] if i + 1 < len(st) else None


def test_shared_library_symbols(record):
    r = record(str(prog_path("libwork")), "400", opts=["--sample"])
    assert r.rc == 0, r.describe()
    ss = samples(r.trace)
    in_lib = [e for e in ss if e["args"]["stack"] and e["args"]["stack"][-1] in ("adler32", "adler32_z")]
    assert len(in_lib) > 0.5 * len(ss), (len(in_lib), len(ss))


@pytest.mark.parametrize("cmd", ["record", "attach"])
def test_system_wide_catches_two_processes(cmd):
    """record -a, and attach -a (its --help lists -a; it asked for --pid all the same)."""
    procs = [subprocess.Popen([str(prog_path("cpusplit")), "2500"], stdout=subprocess.DEVNULL)
             for _ in range(2)]
    try:
        time.sleep(0.3)
        import tempfile, json, os
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "all.json")
            # frame-pointer stacks: what is checked is which processes are caught;
            # DWARF-unwinding every process of a loaded machine can fall behind
            r = run_bpfprof([cmd, "-a", "--sample", "--stack=fp", "-d", "1s", "-o", out])
            assert r.returncode == 0, r.stderr
            trace = json.load(open(out))
    finally:
        for p in procs:
            p.kill()
            p.wait()
    names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "process_name"}
    per_pid = {}
    for e in samples(trace):
        per_pid[e["pid"]] = per_pid.get(e["pid"], 0) + 1
    # how much CPU each got in that second is the scheduler's business: sampled at all
    for p in procs:
        assert per_pid.get(p.pid, 0) >= 1, (p.pid, per_pid)
        assert names.get(p.pid) == "cpusplit", names.get(p.pid)
    assert "cpusplit" in r.stderr   # the summary's top processes


def test_all_requires_a_mode():
    r = run_bpfprof(["record", "-a", "-d", "1s"])
    assert r.returncode != 0
    assert "bpfprof:" in r.stderr and "--sample" in r.stderr
    r = run_bpfprof(["record", "-a", "-F", "work", "--sample", "-d", "1s"])
    assert r.returncode != 0 and "LIB:GLOB" in r.stderr


def test_samples_with_calls_past_retprobe_depth(record, tmp_path):
    """Debian's python3.11, every named function of its executable traced and cpu
    samples taken, 4 threads: its C code nests past the kernel's 64 return
    probes (frames whose end is inferred), and a sample interrupting a thread
    must not move those ends: the whole trace nests, nothing is lost."""
    python = debian_python()
    script = tmp_path / "work.py"
    script.write_text(
        "import threading, json\n"
        "def w():\n"
        "    for i in range(300): json.dumps({'a': [i, str(i)]})\n"
        "ts = [threading.Thread(target=w) for _ in range(4)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "print('done')\n")
    # its named functions (.dynsym): the static ones its FDEs find (python3.11+0x...)
    # nest wrongly past 64 frames today (issue 18's report), a decoder matter
    # the whole run fits in the ring buffer (273k calls: ~20 MB), so that a
    # loaded machine slowing the decoder loses nothing
    r = record(python, str(script), opts=["-F", "*", "-N", "python3.11+0x*", "--sample=999",
                                          "--buffer-size", "256M"], timeout=120)
    assert r.rc == 0 and r.trace is not None, r.describe()
    assert r.proc.stdout.strip() == "done"
    assert "0 lost records" in r.proc.stderr, r.describe()
    ev = trace_util.xevents(r.trace)
    assert len({e["tid"] for e in ev}) == 5
    calls, probs = trace_util.nesting_problems(ev, root_depth=0)
    assert not probs, "call tree:\n  " + "\n  ".join(probs[:10])
    assert any(c.depth >= 64 for c in calls), "never past 64 frames (python changed?)"
    assert samples(r.trace)
