# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Hot, tiny Python functions: argv[1] calls of tiny() (one addition each).
import sys


def tiny(x):
    return x + 1


def main(n):
    x = 0
    for _ in range(n):
        x = tiny(x)
    print(x)


main(int(sys.argv[1]))
