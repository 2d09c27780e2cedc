# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Two asyncio tasks: worker(3) and worker(5) each await 3 and 5 times.
import asyncio


async def worker(n):
    for _ in range(n):
        await asyncio.sleep(0)
    return n


async def main():
    print(sum(await asyncio.gather(worker(3), worker(5))))


asyncio.run(main())
