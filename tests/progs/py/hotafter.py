# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The overhead governor on Python calls: argv[1] calls of coarse() first (a
# loop of 100,000 iterations without a call each), then one call of hot(),
# which calls tiny() (one line) argv[2] times, then one call of after().
# Prints, last: "hotafter: coarse=C tiny=T after=1" (C = argv[1], T = argv[2]).
import sys

counts = {"coarse": 0, "tiny": 0, "after": 0}


def tiny(x):
    return x + 1


def coarse():
    x = 0
    for i in range(100000):
        x = (x * 31 + i) & 0xFFFF
    counts["coarse"] += 1
    return x


def hot(n):
    x = 0
    for _ in range(n):
        x = tiny(x)
    counts["tiny"] += n
    return x


def after():
    counts["after"] += 1


def main(ncoarse, ntiny):
    for _ in range(ncoarse):
        coarse()
    hot(ntiny)
    after()
    print("hotafter: coarse=%d tiny=%d after=%d" % (counts["coarse"], counts["tiny"],
                                                     counts["after"]))


main(int(sys.argv[1]), int(sys.argv[2]))
