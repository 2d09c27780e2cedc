# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A Python program whose probe cost is a library's annotations, not its
# Python calls: `ctmarks.py LIB N` loads LIB (tests/progs/plugins.d/
# libplug_a.so) with ctypes, and main() calls its plug_work(k) N times
# through ctypes (a C call: no Python frame, no Python probe hit), each
# firing one BPFPROF_EVENT and the USDT probe plugin:work.  Python calls:
# main() once, total() once.  Prints "ctmarks: n=N sum=S", S = 3 N (N + 1) / 2.
import ctypes
import sys


def total(lib, n):
    work = lib.plug_work
    work.restype = ctypes.c_long
    work.argtypes = [ctypes.c_long]
    s = 0
    for k in range(1, n + 1):
        s += work(k)
    return s


def main(path, n):
    lib = ctypes.CDLL(path)
    print(f"ctmarks: n={n} sum={total(lib, n)}")


main(sys.argv[1], int(sys.argv[2]))
