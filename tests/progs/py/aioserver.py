# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A real async server (Debian's python3-aiohttp) for tests/e2e/test_aiohttp.py:
# `aioserver.py N [PORTFILE [stay]]` listens on 127.0.0.1 (a free port, printed and
# written to PORTFILE), serves GET /hello with hello(), which awaits
# asyncio.sleep(0) once (so it suspends exactly once: two slices), and after
# the N-th hello shuts down gracefully (the last response is sent) and exits;
# with "stay", it prints "served" and exits only once its stdin is closed.
import asyncio
import os
import sys

from aiohttp import web

N = int(sys.argv[1])
PORTFILE = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] != "-" else None
STAY = sys.argv[3:4] == ["stay"]
served = 0
done = None


async def hello(request):
    global served
    await asyncio.sleep(0)
    served += 1
    if served == N:
        done.set()
    return web.Response(text="hello %d\n" % served)


async def main():
    global done
    done = asyncio.Event()
    app = web.Application()
    app.router.add_get("/hello", hello)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print("aioserver: pid=%d port=%d" % (os.getpid(), port), flush=True)
    if PORTFILE:
        with open(PORTFILE + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.rename(PORTFILE + ".tmp", PORTFILE)
    await done.wait()
    if STAY:
        print("aioserver: served=%d, staying" % served, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await runner.cleanup()
    print("aioserver: served=%d" % served, flush=True)


asyncio.run(main())
