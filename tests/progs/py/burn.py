# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# a() and b() run the same loop body 30000 and 10000 times a round: CPU 3:1.
import sys


def a(n):
    for i in range(n):
        x = i ^ 5
    return x


def b(n):
    for i in range(n):
        x = i ^ 5
    return x


def main(rounds):
    for _ in range(rounds):
        a(30000)
        b(10000)


main(int(sys.argv[1]))
