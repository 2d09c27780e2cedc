#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A small Go 1.18+ pclntab made from a real Go binary, for the fuzz seeds.

The .gopclntab of even a tiny Go program is ~350 KB, above the fuzzers'
-max_len (a cut one loses its function table, at the end).  This writes the
same layout debugsyms.c reads (see gopclntab() there) for the binary's first
N functions, with their real names and addresses:

    mkgopclntab.py GO_BINARY OUT_SECTION [N]

then: objcopy --add-section .gopclntab=OUT_SECTION ... (tests/fuzz/seeds.sh).

    mkgopclntab.py --past-end OUT_ELF

writes instead a whole minimal ELF whose last bytes are a .gopclntab whose
function table ends with the section, without the end entry after it: a
reader taking the last function's end from there reads past the section,
and past the file (tests/fuzz/corpus_debugsyms/regress-gopclntab-past-end).
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


def past_end(out):
    names = b"main.a\0"
    nameoff = 8 + 8 * 8
    pcln = (nameoff + len(names) + 7) & ~7
    nfunc = 2
    # each function's _func record is the table's first pair (funcoff 0):
    # entryoff 0, nameoff 0 ("main.a"); no end entry after the table
    tab = struct.pack("<IIII", 0, 0, 0x10, 0)
    body = struct.pack("<IBBBB", 0xfffffff1, 0, 0, 1, 8)
    body += struct.pack("<8Q", nfunc, 0, 0x401000, nameoff, pcln, pcln, pcln, pcln)
    body += names + b"\0" * (pcln - nameoff - len(names)) + tab
    shstr = b"\0.shstrtab\0.gopclntab\0"
    shoff, nsec = 64, 3
    stroff = shoff + 64 * nsec
    secoff = stroff + len(shstr)
    ehdr = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    ehdr += struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0x401000, 0, shoff, 0, 64, 56, 0, 64,
                        nsec, 1)
    sh = b"\0" * 64
    sh += struct.pack("<IIQQQQIIQQ", 1, 3, 0, 0, stroff, len(shstr), 0, 0, 1, 0)
    sh += struct.pack("<IIQQQQIIQQ", 11, 1, 2, 0x500000, secoff, len(body), 0, 0, 1, 0)
    with open(out, "wb") as f:
        f.write(ehdr + sh + shstr + body)


if sys.argv[1] == "--past-end":
    past_end(sys.argv[2])
else:
    main()
