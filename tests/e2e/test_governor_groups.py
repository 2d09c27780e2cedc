# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The overhead governor's groups by hotness (user/cost/governor_links.c).

tests/progs/hotgroups has more than 256 traced functions, so the governor
attaches them in groups of 16 consecutive ones; tiny() sits in a block of
32 small functions (s00..s15, w00..w15) that phase 1 calls once each before
calling tiny() NTINY times, so tiny's group holds only functions of that
block, every one of them called before tiny's drop.  Phase 2 no longer
calls tiny and makes the w functions as hot as tiny was.

What must hold (read from -v, which names each group's re-link, and from
the archive):
  - tiny's drop re-links its group, and every kept function of it moves to
    a group of its own (all were seen called);
  - a moved function dropped later re-registers nothing: its group has no
    other function;
  - the move loses no call and counts none twice: phase1, phase2 and main
    are exact, and any s or w function never dropped has exactly its calls;
    a dropped one has at most its calls; no cold function is ever recorded.
No timing is asserted.
"""

import json
import re

from conftest import run_bpfprof

NROUNDS, NTINY = 40, 20000
GROUP_RE = re.compile(r"governor: group (\d+) re-linked: (\d+) dropped:((?: \S+)*); (\d+) kept "
                      r"re-registered, (\d+) of them moved to groups of their own:((?: \S+)*)")


def group_relinks(stderr):
    rows = []
    for m in GROUP_RE.finditer(stderr):
        moved = m.group(6).split()
        rows.append(dict(group=int(m.group(1)), ndropped=int(m.group(2)),
                         dropped=m.group(3).split(), kept=int(m.group(4)),
                         nmoved=int(m.group(5)), moved=[] if moved == ["none"] else moved))
    return rows


def test_warm_functions_leave_the_cold_group_and_drop_alone(record):
    r = record("hotgroups", str(NROUNDS), str(NTINY), opts=["-v", "--max-overhead", "100"],
               out="g.bpfprof", timeout=300)
    assert r.rc == 0, r.describe()
    m = re.search(r"hotgroups: phase1=(\d+) phase2=(\d+) tiny=(\d+) s=(\d+) w=(\d+)",
                  r.proc.stdout)
    assert m, r.proc.stdout
    want = dict(phase1=int(m.group(1)), phase2=int(m.group(2)), tiny=int(m.group(3)))
    each = dict(s=int(m.group(4)), w=int(m.group(5)))
    block = {"%s%02d" % (k, i) for k in "sw" for i in range(16)}

    rows = group_relinks(r.proc.stderr)
    first = [x for x in rows if "tiny" in x["dropped"]]
    assert len(first) == 1, (rows, r.proc.stderr[-3000:])
    first = first[0]
    # tiny's group: the block's functions only, each kept one moved (all were called)
    assert first["kept"] >= 1 and first["nmoved"] == first["kept"], first
    assert len(first["moved"]) == first["nmoved"] and set(first["moved"]) <= block, first
    moved = set(first["moved"])
    later = [x for x in rows if moved & set(x["dropped"])]
    assert later, rows
    for x in later:
        # a moved function's group is itself alone: its drop re-registers nothing
        assert x["dropped"] in ([f] for f in moved) and x["kept"] == 0, x

    js = run_bpfprof(["report", "--format", "json", r.out])
    assert js.returncode == 0, js.stderr
    rep = json.loads(js.stdout)
    dropped = {d["name"] for d in rep["dropped"]}
    assert "tiny" in dropped and moved & dropped, dropped
    assert {f for x in rows for f in x["dropped"]} <= dropped, (rows, dropped)
    calls = {f["name"]: f["calls"] for f in rep["functions"]}
    for f, n in want.items():
        if f != "tiny":
            assert calls.get(f) == n, (f, calls)
    assert 1 <= calls.get("tiny", 0) <= want["tiny"], calls
    for f in block:
        n = each[f[0]]
        if f in dropped:
            assert calls.get(f, 0) <= n, (f, calls)
        else:
            assert calls.get(f) == n, (f, calls)
    assert not [f for f in calls if f.startswith("cold_")], calls
