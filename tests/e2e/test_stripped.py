# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Stripped binaries, as distributions ship them (issue 18).

tests/progs/stripped/stripdemo.c and libstripdemo.c are built here with -g,
then stripped the ways distributions strip (strip; strip --strip-unneeded for
the library), with the debug information moved to a debug file found by
build-id or by .gnu_debuglink, or to MiniDebugInfo (.gnu_debugdata).  The
unstripped build is the reference: a stripped run must count the same calls
for the same function addresses, and with a debug source give the same names.

What stripdemo guarantees: tests/e2e/stripdemo.py.
"""

import os
import re
import shutil
from collections import Counter

import pytest

from conftest import PROGS, go_build, load_trace, run_bpfprof
from stripdemo import CFLAGS, FACTS, LIB_FACTS, SRC, build_id, nm_funcs, sh
from trace_util import xevents


def has_symtab(path):
    return ".symtab" in sh("readelf", "-S", "-W", path)


def list_rows(stdout):
    """`bpfprof list` output as one dict per function, keyed by the header's columns."""
    lines = stdout.splitlines()
    head = lines[0].split()
    return [dict(zip(head, l.split())) for l in lines[1:] if l.startswith("0x")]


def build(d, build_id_opt="--build-id"):
    """stripdemo and libstripdemo.so (rpath $ORIGIN) in d, unstripped."""
    d.mkdir(parents=True, exist_ok=True)
    sh("cc", *CFLAGS, "-fPIC", "-shared", "-Wl,-soname,libstripdemo.so", "-Wl," + build_id_opt,
       SRC / "libstripdemo.c", "-o", d / "libstripdemo.so")
    sh("cc", *CFLAGS, "-Wl," + build_id_opt, SRC / "stripdemo.c", "-L", d, "-lstripdemo",
       "-Wl,-rpath,$ORIGIN", "-o", d / "stripdemo")
    return d


def strip_copy(src, dst):
    """dst: src's stripdemo stripped (strip) and its library (strip --strip-unneeded)."""
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "stripdemo", dst / "stripdemo")
    shutil.copy(src / "libstripdemo.so", dst / "libstripdemo.so")
    sh("strip", dst / "stripdemo")
    sh("strip", "--strip-unneeded", dst / "libstripdemo.so")
    assert not has_symtab(dst / "stripdemo") and not has_symtab(dst / "libstripdemo.so")
    return dst


def debug_by_build_id(binary, debug_dir):
    bid = build_id(binary)
    dst = debug_dir / ".build-id" / bid[:2] / (bid[2:] + ".debug")
    dst.parent.mkdir(parents=True, exist_ok=True)
    sh("objcopy", "--only-keep-debug", binary, dst)


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    if not shutil.which("strip") or not shutil.which("objcopy"):
        pytest.skip("binutils missing (scripts/setup.sh --test)")
    return build(tmp_path_factory.mktemp("stripped") / "plain")


@pytest.fixture(scope="module")
def stripped(plain):
    return strip_copy(plain, plain.parent / "strip")


def record_demo(d, tmp_path, extra=()):
    """record every function of stripdemo and of its library; {(module, name): calls}."""
    out = tmp_path / ("t%d.json" % len(list(tmp_path.glob("t*.json"))))
    p = run_bpfprof(["record", "-o", out, *extra, "-F", "*",
                     "-F", "%s:*" % (d / "libstripdemo.so"), "--", d / "stripdemo"])
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "stripdemo: 94", p.stdout
    ev = xevents(load_trace(out))
    return Counter((e["args"]["module"], e["name"]) for e in ev), p


def by_address(calls, nms):
    """{(module, address): calls}: names looked up in nms[module], FILE+0xADDR parsed."""
    out = {}
    for (mod, name), n in calls.items():
        m = re.fullmatch(r"(stripdemo|libstripdemo\.so)\+0x([0-9a-f]+)", name)
        addr = int(m.group(2), 16) if m else nms[mod][name]
        out[(mod, addr)] = n
    return out


def test_stripped_counts_equal_unstripped_by_address(plain, stripped, tmp_path):
    ref, _ = record_demo(plain, tmp_path)
    assert {n: c for (m, n), c in ref.items() if m == "stripdemo"} == FACTS, ref
    assert {n: c for (m, n), c in ref.items() if m == "libstripdemo.so"} == LIB_FACTS, ref
    got, _ = record_demo(stripped, tmp_path)
    # unnamed functions are FILE+0xADDR: FILE the library's SONAME
    assert any(n.startswith("stripdemo+0x") for _, n in got), got
    assert ("libstripdemo.so", "strip_lib_run") in got, got   # .dynsym still names it
    nms = {"stripdemo": nm_funcs(plain / "stripdemo"),
           "libstripdemo.so": nm_funcs(plain / "libstripdemo.so")}
    assert by_address(got, nms) == by_address(ref, nms)
    # the static function of the stripped library, exactly
    lib_step = "libstripdemo.so+0x%x" % nms["libstripdemo.so"]["lib_step"]
    assert got[("libstripdemo.so", lib_step)] == 7, got


def test_unnamed_functions_selectable_by_pattern(plain, stripped, tmp_path):
    addr = nm_funcs(plain / "stripdemo")["leaf"]
    out = tmp_path / "t.json"
    p = run_bpfprof(["record", "-o", out, "-F", "stripdemo+0x%x" % addr, "--",
                     stripped / "stripdemo"])
    assert p.returncode == 0, p.stderr
    assert Counter(e["name"] for e in xevents(load_trace(out))) == \
        {"stripdemo+0x%x" % addr: 12}
    # two listings of one binary agree, and say where names come from
    l1 = run_bpfprof(["list", stripped / "stripdemo"])
    l2 = run_bpfprof(["list", stripped / "stripdemo"])
    assert l1.returncode == 0 and l1.stdout == l2.stdout, l1.stderr
    rows = list_rows(l1.stdout)
    assert rows and all(r["source"] == "eh_frame" and r["function"] == "stripdemo+" + r["address"]
                        for r in rows), rows


def list_sources(d, extra=()):
    """{function: source} of `list` over stripdemo and its library."""
    out = {}
    for f in ("stripdemo", "libstripdemo.so"):
        p = run_bpfprof(["list", *extra, d / f])
        assert p.returncode == 0, p.stderr
        for r in list_rows(p.stdout):
            out[r["function"]] = r["source"]
    return out


def test_names_from_debug_files_by_build_id(plain, stripped, tmp_path):
    dbg = tmp_path / "symbols"
    debug_by_build_id(plain / "stripdemo", dbg)
    debug_by_build_id(plain / "libstripdemo.so", dbg)
    ref, _ = record_demo(plain, tmp_path)
    got, _ = record_demo(stripped, tmp_path, ["--debug-dir", dbg])
    assert got == ref
    src = list_sources(stripped, ["--debug-dir", dbg])
    assert all(src[f] == "build-id" for f in ("leaf", "mid", "fib", "twice", "lib_step")), src
    # the exported function keeps the name .dynsym gives it (the same name)
    assert src["strip_lib_run"] in ("dynsym", "build-id"), src


def test_names_from_debuglink(tmp_path):
    """Built without a build-id: the debuglink's CRC ties the debug file to it."""
    plain = build(tmp_path / "plain", "--build-id=none")
    link = strip_copy(plain, tmp_path / "link")
    dbg = tmp_path / "dbg"
    dbg.mkdir()
    for f in ("stripdemo", "libstripdemo.so"):
        sh("objcopy", "--only-keep-debug", plain / f, dbg / (f + ".debug"))
        sh("objcopy", "--add-gnu-debuglink=%s" % (dbg / (f + ".debug")), link / f)
    ref, _ = record_demo(plain, tmp_path)
    got, _ = record_demo(link, tmp_path, ["--debug-dir", dbg])
    assert got == ref
    src = list_sources(link, ["--debug-dir", dbg])
    assert all(src[f] == "debuglink" for f in ("leaf", "mid", "fib", "lib_step")), src
    # a debug file that is not the one the debuglink's CRC was taken of names nothing
    shutil.copy(dbg / "libstripdemo.so.debug", dbg / "stripdemo.debug")
    src = list_sources(link, ["--debug-dir", dbg])
    assert "leaf" not in src and any(n.startswith("stripdemo+0x") for n in src), src


def test_names_from_minidebuginfo(plain, stripped, tmp_path):
    """As Fedora's find-debuginfo builds it: the symbols .dynsym lacks, in an
    xz-compressed ELF file in the section .gnu_debugdata."""
    if not shutil.which("xz"):
        pytest.skip("xz missing")
    mini = tmp_path / "mini"
    mini.mkdir()
    for f in ("stripdemo", "libstripdemo.so"):
        dyn = {l.split()[0] for l in sh("nm", "-D", "--format=posix", "--defined-only",
                                        plain / f).splitlines()}
        funcs = {l.split()[0] for l in sh("nm", "--format=posix", "--defined-only",
                                          plain / f).splitlines() if l.split()[1] in "Tt"}
        keep = tmp_path / (f + ".keep")
        keep.write_text("".join(s + "\n" for s in sorted(funcs - dyn)))
        sh("objcopy", "--only-keep-debug", plain / f, tmp_path / (f + ".dbg"))
        sh("objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section", ".comment",
           "--keep-symbols=%s" % keep, tmp_path / (f + ".dbg"), tmp_path / (f + ".mini"))
        sh("xz", "-f", tmp_path / (f + ".mini"))
        shutil.copy(stripped / f, mini / f)
        sh("objcopy", "--add-section", ".gnu_debugdata=%s" % (tmp_path / (f + ".mini.xz")),
           mini / f)
        assert not has_symtab(mini / f)
    ref, _ = record_demo(plain, tmp_path)
    got, _ = record_demo(mini, tmp_path)
    assert got == ref
    src = list_sources(mini)
    assert all(src[f] == "minidebuginfo" for f in ("leaf", "mid", "fib", "lib_step")), src
    assert src["strip_lib_run"] == "dynsym", src


def test_launcher_says_what_it_traces(plain, tmp_path):
    """git's case: the executable has main() only; bpfprof says so and how to see more."""
    exe = plain / "launcher"
    sh("cc", *CFLAGS, SRC / "launcher.c", "-L", plain, "-lstripdemo", "-Wl,-rpath,$ORIGIN",
       "-o", exe)
    sh("strip", exe)      # as Debian ships git
    out = tmp_path / "t.json"
    p = run_bpfprof(["record", "-o", out, "--", exe])
    assert p.returncode == 0, p.stderr
    m = re.search(r"has only 1 function to trace \((launcher\+0x[0-9a-f]+)\)", p.stderr)
    assert m, p.stderr
    assert "-F 'LIB:GLOB'" in p.stderr and "--sample" in p.stderr, p.stderr
    assert Counter(e["name"] for e in xevents(load_trace(out))) == {m.group(1): 1}


def test_no_call_recorded_says_so(plain, tmp_path):
    """A recording whose traced functions are never called (a library the
    program does not load): exit 0, but not a bare "0 calls recorded"."""
    out = tmp_path / "t.json"
    p = run_bpfprof(["record", "-o", out, "-F", "%s:strip_lib_run" % (plain / "libstripdemo.so"),
                     "--", "true"])
    assert p.returncode == 0, p.stderr
    assert "0 calls recorded" in p.stderr, p.stderr
    assert "none of the traced functions was called" in p.stderr, p.stderr
    assert "-F 'LIB:GLOB'" in p.stderr and "--sample" in p.stderr, p.stderr
    assert xevents(load_trace(out)) == []


# ------------------------------------------------------------ Go, Debian's gzip

def test_stripped_go_binary_named_from_gopclntab(tmp_path):
    exe = go_build(tmp_path, tmp_path / "gocalls", "-ldflags=-s -w")
    assert not has_symtab(exe)
    p = run_bpfprof(["list", exe, "main.*"])
    assert p.returncode == 0, p.stderr
    src = {r["function"]: r["source"] for r in list_rows(p.stdout)}
    assert src.get("main.deep") == "gopclntab" and src.get("main.leaf") == "gopclntab", src
    out = tmp_path / "t.json"
    p = run_bpfprof(["record", "-o", out, "-F", "main.*", "--", exe])
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "gocalls: total=757650"
    c = Counter(e["name"] for e in xevents(load_trace(out)))
    assert c["main.round"] == 150 and c["main.deep"] == 15150 and c["main.leaf"] == 150, c


@pytest.fixture(scope="module")
def gzip_input(tmp_path_factory):
    """~4 MB of words: gzip works on it for a good fraction of a second."""
    gz = shutil.which("gzip")
    if not gz:
        pytest.skip("gzip missing")
    d = tmp_path_factory.mktemp("gzip")
    words = ["w%d" % (i * 7919 % 5003) for i in range(5003)]
    with open(d / "in.txt", "w") as f:
        for i in range(600000):
            f.write(words[i * 31 % 5003] + (" " if i % 13 else "\n"))
    return gz, d / "in.txt"


def test_debian_gzip_traced(gzip_input, tmp_path):
    """Every function of gzip traced: a small input (some of its hot functions
    start with an instruction the kernel single-steps)."""
    gz, src = gzip_input
    assert not has_symtab(gz)
    inp = tmp_path / "in.txt"
    with open(src) as f:
        inp.write_text(f.read(20000))
    out = tmp_path / "t.json"
    p = run_bpfprof(["record", "-o", out, "--", gz, "-f", "-k", inp])
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "in.txt.gz").exists()
    c = Counter(e["name"] for e in xevents(load_trace(out)))
    assert c and all(n.startswith("gzip+0x") for n in c), c
    assert sum(c.values()) > 100, c


def libc_has_debug_file():
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    if not os.path.exists(libc):
        return False
    bid = build_id(libc)
    return os.path.exists("/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:]))


@pytest.mark.skipif(not libc_has_debug_file(), reason="libc6-dbg missing (scripts/setup.sh --test)")
def test_debian_gzip_sampled_libc_named_from_debug_file(gzip_input, tmp_path):
    gz, src = gzip_input
    inp = tmp_path / "in.txt"
    shutil.copy(src, inp)
    out = tmp_path / "t.json"
    p = run_bpfprof(["record", "--sample", "-o", out, "--", gz, "-f", "-k", inp])
    assert p.returncode == 0, p.stderr
    ss = [e for e in load_trace(out)["traceEvents"] if e.get("cat") == "sample"]
    assert ss, p.stderr
    frames = Counter(f for e in ss for f in e["args"]["stack"])
    # libc and ld.so have debug files (libc6-dbg): no frame of theirs is unknown
    bad = [f for f in frames if f.startswith("[unknown]") and ("libc.so" in f or "ld-linux" in f)]
    assert not bad, bad
    # local functions only the debug file names, in every stack gzip's main() is in
    assert frames["__libc_start_call_main"] > 0, frames.most_common(20)
    # gzip's own frames are its functions' FDE starts (gzip has no debug file:
    # code without an FDE, such as crtstuff's exit glue, stays [unknown])
    assert any(f.startswith("gzip+0x") for f in frames), frames.most_common(20)


def test_stripped_libz_traced(tmp_path):
    """libz.so.1 as Debian ships it (stripped): its exported adler32 and its
    unnamed internal functions are traced."""
    out = tmp_path / "t.json"
    p = run_bpfprof(["record", "-o", out, "-F", "crunch", "-F", "libz.so*:*", "--",
                     PROGS / "libwork", "100"])
    assert p.returncode == 0, p.stderr
    c = Counter(e["name"] for e in xevents(load_trace(out)))
    assert c["crunch"] == 1 and c["adler32"] > 0, c
    # its internal functions, which only the FDEs find, can be selected
    p = run_bpfprof(["list", PROGS / "libwork", "libz.so*:libz.so.1+0x*"])
    assert p.returncode == 0, p.stderr
    rows = list_rows(p.stdout)
    assert rows and all(r["source"] == "eh_frame" for r in rows), p.stdout
