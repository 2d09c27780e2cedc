# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A known asyncio structure (tests/e2e/test_async_python.py): main starts
# three tasks worker(2), worker(3), worker(5) and gathers them; worker(n)
# awaits step() n times (each suspends exactly once, in asyncio.sleep(0)),
# then quick(), which never suspends; step calls helper() K times.  Then
# main awaits failing(), which suspends once and raises through the await.
import asyncio

K = 4


def helper(i):
    return i + 1


async def step(i):
    await asyncio.sleep(0)
    t = 0
    for _ in range(K):
        t += helper(i)
    return t


async def quick(i):
    return helper(i)


async def worker(n):
    t = 0
    for i in range(n):
        t += await step(i)
    t += await quick(n)
    return t


async def failing():
    await asyncio.sleep(0)
    raise ValueError("failing")


async def main():
    tasks = [asyncio.create_task(worker(n), name="w%d" % n) for n in (2, 3, 5)]
    total = sum(await asyncio.gather(*tasks))
    try:
        await failing()
    except ValueError:
        pass
    print(total)


asyncio.run(main())
