#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""What a SIGKILL of bpfprof costs, beside a traced busy program (issue 26).

    bench/killed.py [BPFPROF [KILLS]]     (root; after `make`)

Starts a load -- another bpfprof recording tests/progs/busy, whose pending
return probe holds the uprobes' grace periods off -- then KILLS times
(default 4; plain and nested in turn): `BPFPROF record -F 'outer*' -F
'middle*' -F 'inner*' -- throwthreads MODE 4 4000 gate` (a copy in a temp
directory, so probes left behind touch no other run), SIGKILLed 50 ms after
the threads start throwing.  Per kill: SIGKILL -> bpfprof reaped; -> no
uprobe link on the program's file listed any more (bpftool: every link's
release has begun, its probes going); -> the program ended; and what it
printed (must be the untraced checksum).  A program left stopped is
reported (STUCK) and continued.  Wall-clock seconds on this machine.
"""
import json, os, re, shutil, signal, subprocess, sys, tempfile, time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
bp = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(REPO, "bpfprof")
kills = int(sys.argv[2]) if len(sys.argv) > 2 else 4


def links_on(path):
    out = subprocess.run(["bpftool", "-j", "link", "list"], capture_output=True, text=True).stdout
    try:
        return sum(1 for l in json.loads(out)
                   if l.get("type") == "uprobe_multi" and l.get("path") == path)
    except ValueError:
        return -1


def stuck(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            st = f.read()
    except OSError:
        return False
    return "State:\tT" in st and "TracerPid:\t0" in st


def one(tmp, prog, mode):
    b = subprocess.Popen([bp, "record", "-o", os.path.join(tmp, "t.json"), "-F", "outer*",
                          "-F", "middle*", "-F", "inner*", "--", prog, mode, "4", "4000", "gate"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    buf = b""
    while b"ready" not in buf:
        c = os.read(b.stdout.fileno(), 4096)
        if not c:
            sys.exit("killed.py: the program never got ready")
        buf += c
    pid = int(re.search(rb"pid=(\d+)", buf).group(1))
    b.stdin.write(b"go\n")
    b.stdin.close()
    time.sleep(0.05)
    t0 = time.monotonic()
    os.kill(b.pid, signal.SIGKILL)
    b.wait()
    reaped = time.monotonic() - t0
    gone = ended = None
    note = ""
    while time.monotonic() - t0 < 300 and (gone is None or ended is None):
        if gone is None and links_on(prog) == 0:
            gone = time.monotonic() - t0
        if ended is None and not os.path.exists("/proc/%d" % pid):
            ended = time.monotonic() - t0
        if ended is None and time.monotonic() - t0 > 15 and stuck(pid):
            note = " STUCK (stopped, untraced: continued)"
            os.kill(pid, signal.SIGCONT)
        time.sleep(0.05)
    rest = b"".join(iter(lambda: os.read(b.stdout.fileno(), 65536), b"")).decode(errors="replace")
    m = re.search(r"caught=\d+ checksum=\w+", rest)
    f = lambda x: "%.2f" % x if x is not None else ">300"
    return "%-6s reaped %s s, probes gone %s s, program ended %s s: %s%s" % (
        mode, f(reaped), f(gone), f(ended), m.group(0) if m else "NO RESULT", note)


def main():
    if os.geteuid():
        sys.exit("killed.py: must run as root (uprobes)")
    tmp = tempfile.mkdtemp(prefix="bpfprof-killed.")
    prog = os.path.join(tmp, "throwthreads")
    shutil.copy(os.path.join(REPO, "tests/progs/throwthreads"), prog)
    load = subprocess.Popen([bp, "record", "-o", os.path.join(tmp, "load.json"), "--",
                             os.path.join(REPO, "tests/progs/busy"), "0", "killed-load"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        time.sleep(2)
        for i in range(kills):
            print("kill %d: %s" % (i + 1, one(tmp, prog, ("plain", "nested")[i % 2])), flush=True)
            time.sleep(1)
    finally:
        os.killpg(load.pid, signal.SIGINT)
        try:
            load.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(load.pid, signal.SIGKILL)
            load.wait()
        shutil.rmtree(tmp, ignore_errors=True)


main()
