# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A server-shaped Python program for the overhead governor: argv[1] requests
# (default 50); each calls handle() once, which calls helper() (one line)
# argv[2] times (default 20000) and then work() once: a loop of 300,000
# iterations without a call.  Prints, last:
#   "pyserver: handle=H helper=P work=W"   (H = W = requests, P = requests * argv[2])
import sys

counts = {"handle": 0, "helper": 0, "work": 0}


def helper(x):
    return x + 1


def work():
    x = 0
    for i in range(300000):
        x = (x * 31 + i) & 0xFFFF
    counts["work"] += 1
    return x


def handle(nhelp):
    x = 0
    for _ in range(nhelp):
        x = helper(x)
    counts["helper"] += nhelp
    work()
    counts["handle"] += 1
    return x


def main(nreq, nhelp):
    for _ in range(nreq):
        handle(nhelp)
    print("pyserver: handle=%d helper=%d work=%d" % (counts["handle"], counts["helper"],
                                                      counts["work"]))


main(int(sys.argv[1]) if len(sys.argv) > 1 else 50, int(sys.argv[2]) if len(sys.argv) > 2 else 20000)
