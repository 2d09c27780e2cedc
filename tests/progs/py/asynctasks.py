# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# asyncio tasks of known structure (tests/e2e/test_async_tasks.py): main
# (Task-1) creates three named workers; worker k awaits Queue.get() k times,
# each suspending once until main's put_nowait wakes it.  Then a gather of
# two children (default names), each awaiting sleep(0) once; a task
# "victim" cancelled while it awaits an Event; a task "thrower" whose
# exception goes through main's await.  The last line is the names each
# task saw itself run under, as JSON.
import asyncio
import json

K = {"worker-a": 2, "worker-b": 3, "worker-c": 4}
seen = {}


def me(role):
    seen.setdefault(role, []).append(asyncio.current_task().get_name())


async def worker(q, k):
    me("worker")
    got = 0
    for _ in range(k):
        got += await q.get()
    return got


async def child(i):
    me("child")
    await asyncio.sleep(0)
    return i


async def victim(ev):
    me("victim")
    await ev.wait()


async def thrower():
    me("thrower")
    await asyncio.sleep(0)
    raise KeyError("thrower")


async def main():
    me("main")
    queues = {n: asyncio.Queue() for n in K}
    tasks = [asyncio.create_task(worker(queues[n], k), name=n) for n, k in K.items()]
    await asyncio.sleep(0)		# each worker now waits in its first get()
    for i in range(max(K.values())):
        for n, k in K.items():
            if i < k:
                queues[n].put_nowait(1)
        await asyncio.sleep(0)	# the woken workers take it and wait again
    await asyncio.gather(*tasks)
    await asyncio.gather(child(1), child(2))
    ev = asyncio.Event()
    v = asyncio.create_task(victim(ev), name="victim")
    await asyncio.sleep(0)		# it waits in ev.wait()
    v.cancel()
    try:
        await v
    except asyncio.CancelledError:
        pass
    t = asyncio.create_task(thrower(), name="thrower")
    try:
        await t
    except KeyError:
        pass


asyncio.run(main())
print(json.dumps(seen))
