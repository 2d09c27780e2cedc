# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# gen(9) yields 9 times to consume(), then returns: 10 slices of gen.
def gen(n):
    for i in range(n):
        yield i


def consume():
    total = 0
    for v in gen(9):
        total += v
    return total


print(consume())
