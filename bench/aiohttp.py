#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""What tracing costs an aiohttp server's throughput (docs/python.md).

  bench/aiohttp.py [-n REQUESTS] [-r ROUNDS] [--bpfprof PATH]

Debian's python3-aiohttp server of the tests (tests/progs/py/aioserver.py,
python3.11) on 127.0.0.1 serves REQUESTS GET /hello to the tests' untraced
client in 4 threads (aioclient.py), which times them from its first request
to its last response: the server's throughput, its start-up left out.  Each
round runs every mode once, in a rotated order, so each ratio is taken
against the untraced run of the same round (the machine's speed drifts):

  plain      untraced
  exact      record --max-overhead off
  gov100     record --max-overhead 100 (the governor from the command's start)
  attach100  attach --max-overhead 100 --pid, to the server once it listens

Prints per mode the client's seconds (min median max), requests per second
at the median, the median and spread of its per-round ratio to plain, and
how many hello() invocations the recording holds (report --format json:
the handler spans; 0 when the governor detached the Python probes first).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.path.join(REPO, "tests", "progs", "py")
PYTHON = "/usr/bin/python3.11"
MODES = ["plain", "exact", "gov100", "attach100"]


def client(portfile, n):
    return subprocess.Popen([PYTHON, os.path.join(PY, "aioclient.py"), portfile, str(n)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def client_secs(c, n):
    out, err = c.communicate(timeout=600)
    m = re.search(r"aioclient: ok=(\d+) secs=([\d.]+)", out)
    if c.returncode or not m or int(m.group(1)) != n:
        sys.exit("client failed: %s %s" % (out, err))
    return float(m.group(2))


def wait_line(f, pattern, what):
    for line in iter(f.readline, ""):
        if re.search(pattern, line):
            return line
    sys.exit("no %s" % what)


def run(mode, n, bpfprof, d):
    portfile, arch = os.path.join(d, "port"), os.path.join(d, "a.bpfprof")
    for f in (portfile, arch):
        if os.path.exists(f):
            os.unlink(f)
    server = [PYTHON, os.path.join(PY, "aioserver.py"), str(n)]
    if mode == "attach100":
        # the client waits for the port file: written once bpfprof is attached
        s = subprocess.Popen(server, stdout=subprocess.PIPE, text=True)
        port = re.search(r"port=(\d+)", wait_line(s.stdout, r"^aioserver: pid=", "server"))
        a = subprocess.Popen([bpfprof, "attach", "--max-overhead", "100", "--pid", str(s.pid),
                              "-o", arch], stderr=subprocess.PIPE, text=True)
        wait_line(a.stderr, r"^bpfprof: (tracing|traced) ", "attach")
        drain = threading.Thread(target=a.stderr.read, daemon=True)
        drain.start()
        c = client(portfile, n)
        with open(portfile + ".tmp", "w") as f:
            f.write(port.group(1) + "\n")
        os.rename(portfile + ".tmp", portfile)
        secs = client_secs(c, n)
        s.communicate(timeout=600)
        a.communicate(timeout=600)
        rc = a.returncode
    else:
        c = client(portfile, n)
        cmd = server + [portfile]
        if mode != "plain":
            cmd = [bpfprof, "record", "--max-overhead", "off" if mode == "exact" else "100",
                   "-o", arch, "--"] + cmd
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        secs = client_secs(c, n)
        rc = p.returncode
    if rc:
        sys.exit("%s: exit %d" % (mode, rc))
    if mode == "plain":
        return secs, None
    r = subprocess.run([bpfprof, "report", "--format", "json", arch], capture_output=True,
                       text=True, check=True)
    rows = [w for w in json.loads(r.stdout).get("coroutines", [])
            if (w["function"], w["module"]) == ("hello", "aioserver.py")]
    return secs, rows[0]["calls"] if rows else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=400)
    ap.add_argument("-r", "--rounds", type=int, default=5)
    ap.add_argument("--bpfprof", default=os.path.join(REPO, "bpfprof"))
    o = ap.parse_args()
    secs = {m: [] for m in MODES}
    spans = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory() as d:
        for i in range(o.rounds):
            order = MODES[i % len(MODES):] + MODES[:i % len(MODES)]
            for m in order:
                s, k = run(m, o.n, o.bpfprof, d)
                secs[m].append(s)
                spans[m].append(k)
            print("round %d: %s" % (i + 1, " ".join("%s=%.3fs" % (m, secs[m][-1])
                                                    for m in MODES)), flush=True)
    print("%d requests, %d rounds, %s" % (o.n, o.rounds, time.strftime("%Y-%m-%d %H:%M UTC",
                                                                      time.gmtime())))
    print("%-10s %8s %8s %8s %9s %8s %8s %8s  %s" % ("mode", "min s", "median", "max s", "req/s",
                                                     "ratio", "min", "max", "hello spans"))
    for m in MODES:
        ratio = [a / b for a, b in zip(secs[m], secs["plain"])]
        med = statistics.median(secs[m])
        print("%-10s %8.3f %8.3f %8.3f %9.0f %8.2f %8.2f %8.2f  %s" % (
            m, min(secs[m]), med, max(secs[m]), o.n / med, statistics.median(ratio),
            min(ratio), max(ratio), "-" if m == "plain" else spans[m]))


if __name__ == "__main__":
    main()
