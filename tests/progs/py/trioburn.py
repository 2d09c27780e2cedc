# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A named trio task burning CPU in a known function (tests/e2e/test_trio_samples.py).

warmup() burns CPU outside any task (before trio.run); then main opens a
nursery and starts the task "boss", which opens a nursery of its own and
starts the task "burner", whose coroutine crunch() calls spin() on CPU
between checkpoints.  start_soon only schedules a task, so main is waiting
in its nursery's __aexit__ before boss first runs, and boss in its own
before burner first runs; both wait there until burner is done.  So every
sample in spin() runs in task "burner", awaited by "boss", awaited by
main's task "__main__.main" (trio's default name), and every sample in
warmup() in no task.  Usage: trioburn.py [ROUNDS]
"""

import sys

import trio

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 40


def spin(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def warmup(n):
    x = 0
    for i in range(n):
        x ^= i
    return x


async def crunch(out):
    total = 0
    for _ in range(ROUNDS):
        total += spin(100000)
        await trio.sleep(0)
    out.append(total)


async def boss(out):
    async with trio.open_nursery() as nursery:
        nursery.start_soon(crunch, out, name="burner")


async def main():
    out = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(boss, out, name="boss")
    return out[0]


if __name__ == "__main__":
    w = warmup(2000000)
    print("ok", trio.run(main) + w)
