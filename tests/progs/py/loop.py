# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Runs step() until SECONDS have passed, then prints a checksum that only a
# correct run gives: for attach/detach.
import sys
import time


def step(i):
    return (i * 7) % 13


def main(seconds):
    print("ready", flush=True)
    end = time.monotonic() + seconds
    n = s = 0
    while time.monotonic() < end:
        s += step(n)
        n += 1
    want = sum((i * 7) % 13 for i in range(n))
    print("ok" if s == want else "bad", n, flush=True)


main(float(sys.argv[1]))
