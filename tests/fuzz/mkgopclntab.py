#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A small Go 1.18+ pclntab made from a real Go binary, for the fuzz seeds.

The .gopclntab of even a tiny Go program is ~350 KB, above the fuzzers'
-max_len (a cut one loses its function table, at the end).  This writes the
same layout debugsyms.c reads (see gopclntab() there) for the binary's first
N functions, with their real names and addresses:

    mkgopclntab.py GO_BINARY OUT_SECTION [N]

then: objcopy --add-section .gopclntab=OUT_SECTION ... (tests/fuzz/seeds.sh).
"""
import struct
import subprocess
import sys


def main():
    binary, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 120
    syms = []
    for line in subprocess.run(["nm", "--defined-only", "-n", binary], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "Tt":
            syms.append((int(f[0], 16), f[2]))
    # main.* first (the functions the e2e test traces), then the rest by address
    syms = [s for s in syms if s[1].startswith("main.")] + \
           [s for s in syms if not s[1].startswith("main.")]
    syms = sorted(syms[:n + 1])
    text = syms[0][0]
    names = b""
    nameoffs = []
    for _, name in syms[:-1]:
        nameoffs.append(len(names))
        names += name.encode() + b"\0"
    nfunc = len(syms) - 1
    hdr = 8 + 8 * 8
    nameoff = hdr
    pcln = (nameoff + len(names) + 7) & ~7
    funcs = pcln + 8 * nfunc + 8         # the _func records after the table
    tab = b""
    recs = b""
    for i, (addr, _) in enumerate(syms[:-1]):
        tab += struct.pack("<II", addr - text, funcs - pcln + 16 * i)
        recs += struct.pack("<Iiq", addr - text, nameoffs[i], 0)
    tab += struct.pack("<II", syms[-1][0] - text, 0)
    end = pcln + len(tab)
    body = struct.pack("<IBBBB", 0xfffffff1, 0, 0, 1, 8)
    body += struct.pack("<8Q", nfunc, 0, text, nameoff, end, end, end, pcln)
    body += names + b"\0" * (pcln - nameoff - len(names)) + tab + recs
    with open(out, "wb") as f:
        f.write(body)


main()
