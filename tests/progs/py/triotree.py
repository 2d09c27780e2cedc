# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A known trio structure (tests/e2e/test_trio.py).  main opens a nursery of
# sleeper(1), sleeper(2), sleeper(3) (each awaits trio.sleep(0) n times: a
# checkpoint, one suspension each), producer and consumer (K sends and K
# receives on an unbuffered memory channel: each send and each receive
# suspends exactly once, at a rendezvous or at its cancel-shielded
# checkpoint) and forever() (trio.sleep_forever(), cancelled by main once
# the consumer has every item).  Then main awaits failing(), which
# suspends once and raises through the await.
import trio

K = 4


async def sleeper(n):
    for _ in range(n):
        await trio.sleep(0)
    return n


async def producer(send):
    for i in range(K):
        await send.send(i)
    send.close()


async def consumer(recv, done):
    got = []
    for _ in range(K):
        got.append(await recv.receive())
    done.append(sum(got))


async def forever():
    await trio.sleep_forever()


async def failing():
    await trio.sleep(0)
    raise ValueError("failing")


async def main():
    done = []
    send, recv = trio.open_memory_channel(0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(forever, name="forever")
        for n in (1, 2, 3):
            nursery.start_soon(sleeper, n, name="sleeper%d" % n)
        nursery.start_soon(producer, send, name="producer")
        nursery.start_soon(consumer, recv, done, name="consumer")
        while not done:
            await trio.sleep(0)
        nursery.cancel_scope.cancel()
    try:
        await failing()
    except ValueError:
        pass
    print("triotree: sum=%d" % done[0])


trio.run(main)
