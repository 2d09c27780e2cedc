# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# fib(15): 1973 calls of fib, nested as deep as 15, from main().
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def main():
    print(fib(15))


main()
