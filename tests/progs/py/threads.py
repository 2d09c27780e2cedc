# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# leaf() called 100 times by thread "t100" and 250 times by "t250" (through
# work()); the main thread calls it 7 times itself.
import threading


def leaf(x):
    return x * 2


def work(n):
    s = 0
    for i in range(n):
        s += leaf(i)
    return s


ts = [threading.Thread(target=work, args=(n,), name="t%d" % n) for n in (100, 250)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(work(7))
