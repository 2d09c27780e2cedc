# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# An exception raised in c() crosses c, b and a, caught in top().
def c():
    raise ValueError("x")


def b():
    c()


def a():
    b()


def top():
    try:
        a()
    except ValueError:
        return "caught"


print(top())
