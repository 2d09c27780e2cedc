# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Python workloads of bench/run.sh (section "python"), timed by themselves.

  pycalls.py calls N   N calls of an empty function f(); prints ns_per_call
                       (the thread's CPU time over the loop, per call)
  pycalls.py burn N    CPU-bound: N rounds of arithmetic in two functions,
                       few calls; prints cpu_ns and wall_ns of the work

Both print checksum= so that a traced run is seen to compute the same.
"""
import sys
import time


def f():
    pass


def calls(n):
    t0 = time.thread_time_ns()
    for _ in range(n):
        f()
    t1 = time.thread_time_ns()
    print("calls=%d ns_per_call=%.1f checksum=%d" % (n, (t1 - t0) / n, n))


def mix(x, k):
    for i in range(k):
        x = (x * 1103515245 + 12345 + i) & 0xFFFFFFFF
    return x


def fold(x, k):
    for i in range(k):
        x ^= (x << 5) & 0xFFFFFFFF
        x ^= x >> 7
    return x


def burn(n):
    x = 1
    c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
    for _ in range(n):
        x = mix(x, 300)
        x = fold(x, 100)
    c1, w1 = time.thread_time_ns(), time.perf_counter_ns()
    print("rounds=%d cpu_ns=%d wall_ns=%d checksum=%d" % (n, c1 - c0, w1 - w0, x))


if __name__ == "__main__":
    {"calls": calls, "burn": burn}[sys.argv[1]](int(sys.argv[2]))
