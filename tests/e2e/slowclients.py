#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A bounded slow-client attack on an HTTP server of 127.0.0.1 (test_http_slots.py).

    slowclients.py PORT NCONN SECONDS [--until-closed]

Keeps NCONN connections open to 127.0.0.1:PORT for at most SECONDS: each
sends the start of a request ("GET / HTTP/1.1", a Host line, then a header
line that never ends) and one more byte every second, so no idle timeout
fires.  A connection the server closes is opened again at once.  Prints
"ready" once the first NCONN are open, and at the end one line:
"opened N closed_by_server M held_longest S" (S: seconds, the longest a
connection lasted before the server closed it; 0 if none was closed).
With --until-closed it ends as soon as the server has closed one.
"""

import socket
import sys
import time


def main():
    port, nconn, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    until_closed = sys.argv[4:] == ["--until-closed"]
    end = time.monotonic() + seconds
    socks = {}  # socket -> time opened
    opened = closed = 0
    longest = 0.0
    ready = False
    while time.monotonic() < end and not (until_closed and closed):
        while len(socks) < nconn and time.monotonic() < end:
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=2)
                s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Drip: ")
            except OSError:
                break   # the backlog is full: try again on the next round
            s.setblocking(False)
            socks[s] = time.monotonic()
            opened += 1
        if not ready and len(socks) >= nconn:
            print("ready", flush=True)
            ready = True
        time.sleep(1)
        for s in list(socks):
            gone = False
            try:
                gone = s.recv(4096) == b""
            except BlockingIOError:
                pass
            except OSError:
                gone = True
            if not gone:
                try:
                    s.send(b"a")
                except BlockingIOError:
                    pass
                except OSError:
                    gone = True
            if gone:
                closed += 1
                longest = max(longest, time.monotonic() - socks.pop(s))
                s.close()
    print("opened %d closed_by_server %d held_longest %.1f" % (opened, closed, longest),
          flush=True)


main()
