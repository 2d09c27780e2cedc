# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Runs step() until the file STOPFILE exists, then prints a checksum that
# only a correct run gives: for attach/detach.
import os
import sys


def step(i):
    return (i * 7) % 13


def main(stopfile):
    print("ready", flush=True)
    n = s = 0
    while n % 1000 or not os.path.exists(stopfile):
        s += step(n)
        n += 1
    want = sum((i * 7) % 13 for i in range(n))
    print("ok" if s == want else "bad", n, flush=True)


main(sys.argv[1])
