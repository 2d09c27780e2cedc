# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The overhead governor on Python calls: argv[1] calls of coarse() first (a
# loop of 100,000 iterations without a call each), then one call of hot(),
# which calls tiny() (one line) argv[2] times, and on until the process has
# used argv[3] seconds of CPU in hot() (optional, default 0), then one call
# of after(), which calls spin() once if argv[4] (SECONDS, default 0) is
# given: a loop without calls until the process has used SECONDS more of CPU.
# Prints, last: "hotafter: coarse=C tiny=T after=1" (C = argv[1], T the calls
# of tiny: argv[2] without argv[3], else at least argv[2]).
import sys
import time

counts = {"coarse": 0, "tiny": 0, "after": 0}


def tiny(x):
    return x + 1


def coarse():
    x = 0
    for i in range(100000):
        x = (x * 31 + i) & 0xFFFF
    counts["coarse"] += 1
    return x


def hot(n, seconds):
    end = time.process_time() + seconds
    x = 0
    for _ in range(n):
        x = tiny(x)
    counts["tiny"] += n
    while time.process_time() < end:
        for _ in range(1000):
            x = tiny(x)
        counts["tiny"] += 1000
    return x


def spin(seconds):
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        for i in range(1000):
            x = (x * 31 + i) & 0xFFFF
    return x


def after(seconds):
    counts["after"] += 1
    if seconds > 0:
        spin(seconds)


def main(ncoarse, ntiny, hot_s, spin_s):
    for _ in range(ncoarse):
        coarse()
    hot(ntiny, hot_s)
    after(spin_s)
    print("hotafter: coarse=%d tiny=%d after=%d" % (counts["coarse"], counts["tiny"],
                                                     counts["after"]))


secs = [float(a) for a in sys.argv[3:5]] + [0.0, 0.0]
main(int(sys.argv[1]), int(sys.argv[2]), secs[0], secs[1])
