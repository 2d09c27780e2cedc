# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""What tests/progs/stripped/stripdemo.c and libstripdemo.c guarantee, for
the tests that build and strip them (test_stripped, test_debuginfod), and the tools they build with.

stripdemo: leaf 12 calls, mid 4, fib 25, twice 2, main 1; libstripdemo.so:
strip_lib_run 1 (exported), lib_step 7 (static).  Built with -O2 as
distributions build, and no sibling calls so that fib() recurses for real.
"""

import re
import subprocess

from conftest import PROGS

SRC = PROGS / "stripped"
CFLAGS = ["-g", "-O2", "-fno-optimize-sibling-calls"]
FACTS = {"main": 1, "leaf": 12, "mid": 4, "fib": 25, "twice": 2}
LIB_FACTS = {"strip_lib_run": 1, "lib_step": 7}


def sh(*cmd, **kw):
    """Runs cmd (must exit 0); returns its stdout."""
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert p.returncode == 0, "%s\n%s" % (" ".join(map(str, cmd)), p.stderr)
    return p.stdout


def nm_funcs(path):
    """{name: address} of the function symbols nm lists in path's .symtab."""
    out = {}
    for l in sh("nm", "--defined-only", path).splitlines():
        f = l.split()
        if len(f) == 3 and f[1] in "Tt":
            out[f[2]] = int(f[0], 16)
    return out


def build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", sh("readelf", "-n", path))
    assert m, "%s has no build-id" % path
    return m.group(1)
