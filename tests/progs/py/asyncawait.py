# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Awaiting children vs the rest, by construction (no timing).

The task "top" awaits mid(f) for each of N futures; mid awaits leaf(f);
leaf awaits the future itself (not a coroutine).  So top and mid are only
ever suspended inside a child coroutine's await, leaf only on a future.
main lets top reach each future (asyncio.sleep(0): a child coroutine), sets
its result, and at the end awaits the task (not a coroutine), which cannot
be done yet: it needs one more step after main's last set_result().
Usage: asyncawait.py [N]
"""

import asyncio
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 5


async def leaf(fut):
    return await fut


async def mid(fut):
    return await leaf(fut)


async def top(futs):
    total = 0
    for f in futs:
        total += await mid(f)
    return total


async def main():
    loop = asyncio.get_running_loop()
    futs = [loop.create_future() for _ in range(N)]
    t = asyncio.create_task(top(futs), name="top")
    for i, f in enumerate(futs):
        await asyncio.sleep(0)
        f.set_result(i)
    assert not t.done()
    print("total", await t)


asyncio.run(main())
