# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The client of tests/progs/py/aioserver.py: `aioclient.py PORTFILE N [THREADS]`
# waits (at most 120 s) for PORTFILE, then sends N GET /hello to 127.0.0.1
# from THREADS threads (default 4), one connection per request, and prints
# how many got "hello" and the seconds the N requests took.
import os
import sys
import threading
import time
import urllib.request

PORTFILE, N = sys.argv[1], int(sys.argv[2])
THREADS = int(sys.argv[3]) if len(sys.argv) > 3 else 4

deadline = time.monotonic() + 120
while not os.path.exists(PORTFILE):
    if time.monotonic() > deadline:
        sys.exit("aioclient: no %s" % PORTFILE)
    time.sleep(0.01)
with open(PORTFILE) as f:
    url = "http://127.0.0.1:%d/hello" % int(f.read())
ok = []


def run(n):
    for _ in range(n):
        with urllib.request.urlopen(url, timeout=120) as r:
            if r.read().startswith(b"hello "):
                ok.append(1)


t0 = time.monotonic()
ts = [threading.Thread(target=run, args=(N // THREADS + (i < N % THREADS),)) for i in range(THREADS)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("aioclient: ok=%d secs=%.4f" % (len(ok), time.monotonic() - t0), flush=True)
