# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A known asyncio structure for `bpfprof serve`'s coroutine metrics
# (tests/e2e/test_serve_coro.py): prints its pid, waits for a line on stdin,
# then main() gathers N invocations of child(), each awaiting
# asyncio.sleep(0) K times, then awaits failing(), which raises through an
# await; prints "done" and waits for stdin to close.
import asyncio
import os
import sys

N, K = 7, 3


async def child(i):
    for _ in range(K):
        await asyncio.sleep(0)
    return i


async def failing():
    await asyncio.sleep(0)
    raise ValueError("failing")


async def main():
    total = sum(await asyncio.gather(*(child(i) for i in range(N))))
    try:
        await failing()
    except ValueError:
        pass
    return total


print("asyncserve: pid=%d" % os.getpid(), flush=True)
sys.stdin.readline()
print("asyncserve: done total=%d" % asyncio.run(main()), flush=True)
sys.stdin.read()
