# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""What tests/progs/stripped/stripdemo.c and libstripdemo.c guarantee, for
the tests that build and strip them (test_stripped, test_debuginfod).

stripdemo: leaf 12 calls, mid 4, fib 25, twice 2, main 1; libstripdemo.so:
strip_lib_run 1 (exported), lib_step 7 (static).  Built with -O2 as
distributions build, and no sibling calls so that fib() recurses for real.
"""

from conftest import PROGS

SRC = PROGS / "stripped"
CFLAGS = ["-g", "-O2", "-fno-optimize-sibling-calls"]
FACTS = {"main": 1, "leaf": 12, "mid": 4, "fib": 25, "twice": 2}
LIB_FACTS = {"strip_lib_run": 1, "lib_step": 7}
