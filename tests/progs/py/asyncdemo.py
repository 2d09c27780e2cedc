# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The async demo of README.md and docs/python.md: three requests served
# concurrently, each handle() awaiting a chain load() -> query(), where
# query() waits on a slow "database" (asyncio.sleep(0.2): off CPU) and
# load() then parses the rows on CPU.  Each handle() is one invocation of
# three slices: its wall time is mostly the awaited query, its exec time
# the parsing.
import asyncio


async def query(i):
    await asyncio.sleep(0.2)		# the slow await: 200 ms off CPU
    return 200000 * (i + 1)


def parse(rows):
    t = 0
    for r in range(rows):		# on CPU, no call per row
        t += r * r
    return t


async def load(i):
    rows = await query(i)
    return parse(rows)


async def handle(i):
    await asyncio.sleep(0)		# the request arrives
    return await load(i)


async def main():
    print(sum(await asyncio.gather(*(handle(i) for i in range(3)))))


asyncio.run(main())
