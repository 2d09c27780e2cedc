# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Strict ping-pong of two threads through two pipes, argv[1] rounds.
#
# Every hand-off blocks and wakes: before writing to the other thread's
# pipe, the writer waits until that thread sleeps in read() on it (state S
# in the read system call on that fd, from /proc/self/task/TID), so each of
# the 2 * rounds writes wakes the reader from the writer's thread, and each
# reader went off the CPU in recv() first.  Prints the two native thread
# ids (main first) and "ok".
import os
import sys
import threading
import time

ROUNDS = int(sys.argv[1])
to_pong_r, to_pong_w = os.pipe()
to_ping_r, to_ping_w = os.pipe()
tids = {"ping": threading.get_native_id()}


def asleep_in_read(tid, fd):
    try:
        with open("/proc/self/task/%d/stat" % tid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        with open("/proc/self/task/%d/syscall" % tid) as f:
            call = f.read().split()
    except OSError:
        return False
    return state == "S" and len(call) > 1 and call[0] == "0" and int(call[1], 16) == fd


def send(tid, rfd, wfd, i):
    while not asleep_in_read(tid, rfd):
        time.sleep(0.0002)
    assert os.write(wfd, bytes([i & 0xFF])) == 1


def recv(fd, i):
    assert os.read(fd, 1) == bytes([i & 0xFF])


def pong():
    for i in range(ROUNDS):
        recv(to_pong_r, i)
        send(tids["ping"], to_ping_r, to_ping_w, i)


def ping(worker):
    for i in range(ROUNDS):
        send(worker, to_pong_r, to_pong_w, i)
        recv(to_ping_r, i)


def main():
    t = threading.Thread(target=pong, name="pong")
    t.start()
    tids["pong"] = t.native_id
    ping(t.native_id)
    t.join()
    print(tids["ping"], tids["pong"])
    print("ok")


main()
