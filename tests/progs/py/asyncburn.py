# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A named asyncio task burning CPU in a known function, awaited by another.

warmup() burns CPU outside any task (before the event loop); then main
(asyncio's Task-1) awaits the task "boss", which awaits the task "burner",
whose coroutine crunch() calls spin() on CPU between awaits.  So every
sample in spin() runs in task "burner", awaited by "boss", awaited by
"Task-1", and every sample in warmup() runs in no task.  Usage:
asyncburn.py [ROUNDS]
"""

import asyncio
import sys

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


async def crunch():
    total = 0
    for _ in range(ROUNDS):
        total += spin(100000)
        await asyncio.sleep(0)
    return total


async def boss():
    t = asyncio.create_task(crunch(), name="burner")
    return await t


async def main():
    b = asyncio.create_task(boss(), name="boss")
    print("names", asyncio.current_task().get_name(), b.get_name())
    return await b


if __name__ == "__main__":
    w = warmup(2000000)
    print("ok", asyncio.run(main()) + w)
