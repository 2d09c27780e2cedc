# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The thin-executable hint (user/probes/where.c, bpf/where.bpf.c).

tests/progs/libwork spends its CPU time (thread CPU clock, so the same on a
loaded machine) almost all inside zlib's adler32(), called from crunch():
its own code is a loop of clock reads around the calls.  With the default
selection (the executable's functions), record's end names the library the
time went to and the -F that traces it; that -F then traces adler32, every
call of it.  With -F naming the library already, or with --sample, no hint.
"""

import re

from conftest import run_bpfprof

HINT = re.compile(r"bpfprof: hint: libwork's own code ran in (\d+)% of its CPU time "
                  r"\((\d+) samples at \d+ Hz\); the rest in (.*)")


def test_thin_executable_names_the_library_and_its_flag(record):
    r = record("libwork", "500", out="w.bpfprof", check=False)
    assert r.rc == 0, r.describe()
    m = HINT.search(r.proc.stderr)
    assert m, r.proc.stderr
    assert int(m.group(1)) < 50, m.group(0)
    libz = re.search(r"(libz\.so[.\d]*) \((\d+)%\)", m.group(3))
    assert libz and int(libz.group(2)) >= 50, m.group(0)
    flag = "-F '%s:*'" % libz.group(1)
    assert flag in m.group(3), m.group(0)
    # the flag given traces the library: adler32 is called by crunch, every call
    t = record("libwork", "200", opts=["-F", "%s:*" % libz.group(1), "-F", "crunch"],
               out="t.json")
    assert t.rc == 0, t.describe()
    assert "adler32" in t.proc.stderr, t.proc.stderr
    assert not HINT.search(t.proc.stderr), t.proc.stderr


def test_no_hint_when_sampling(record):
    r = record("libwork", "300", opts=["--sample"], out="s.bpfprof", check=False)
    assert r.rc == 0, r.describe()
    assert "hint:" not in r.proc.stderr, r.proc.stderr


def test_no_hint_when_the_executable_does_the_work(record, tmp_path):
    """cpusplit's CPU time is its own code's (the hint compares the sampled
    files with the executable by device and inode: the kernel's device
    number differs from stat()'s on a disk, and the hint then took the
    executable for a library and called it thin)."""
    r = record("cpusplit", "600", out="c.bpfprof", check=False)
    assert r.rc == 0, r.describe()
    assert "hint:" not in r.proc.stderr, r.proc.stderr
