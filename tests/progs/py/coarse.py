# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Coarse Python functions: argv[1] calls of work(), each a loop of 200,000
# iterations without a call: the CPU time is the loop's, not the calls'.
import sys


def work():
    x = 0
    for i in range(200000):
        x = (x * 31 + i) & 0xFFFF
    return x


def main(n):
    s = 0
    for _ in range(n):
        s += work()
    print(s)


main(int(sys.argv[1]))
