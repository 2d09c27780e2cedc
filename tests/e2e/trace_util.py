# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Reading and checking bpfprof's Chrome Trace Event JSON.

Pure functions over the parsed JSON (a dict); no subprocesses here, so these
can be reused by other tests (converters, exporters) without root.

The format checked is the CLI contract:
  {"displayTimeUnit": "ns", "otherData": {...}, "traceEvents": [...]}
with one "ph":"X" event per call,
  {"name", "cat": "call", "ph": "X", "ts": us, "dur": us, "pid", "tid",
   "args": {"depth", "self_us", "id", "module", optionally "unfinished": true}}
"ph":"M" process_name / thread_name metadata (args.name), and "cat":"loss"
instant events marking lost records.
"""

from collections import Counter, defaultdict

# The flags a call's args may carry about how it was seen (user/model/session.h).
CALL_FLAGS = ("unfinished", "began_before_recording", "entry_lost", "unwound")

# ts and dur are printed with 3 decimals (ns resolution in us): each is off by
# up to 0.0005 us, so an end (ts + dur) by up to 0.001 us.  Comparisons of
# two ends/starts allow a little more than that.
EPS_US = 0.0025


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def xevents(trace):
    """The complete ("ph":"X") events of calls: one per call (not off-cpu slices)."""
    return [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "call"]


def loss_events(trace):
    return [e for e in trace["traceEvents"] if e.get("cat") == "loss"]


def metadata(trace, name):
    """{(pid, tid): args.name} of the "ph":"M" events called `name`."""
    return {(e.get("pid"), e.get("tid")): e.get("args", {}).get("name")
            for e in trace["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == name}


def thread_names(trace):
    """{tid: thread name} from thread_name metadata."""
    return {tid: n for (_, tid), n in metadata(trace, "thread_name").items()}


def process_names(trace):
    """{pid: process name} from process_name metadata."""
    return {pid: n for (pid, _), n in metadata(trace, "process_name").items()}


def by_name(events):
    """{name: [events]}"""
    out = defaultdict(list)
    for e in events:
        out[e["name"]].append(e)
    return dict(out)


def counts(events):
    """Counter of calls per function name."""
    return Counter(e["name"] for e in events)


def format_problems(trace):
    """Checks every event against the contract; returns a list of problems."""
    probs = []
    if not isinstance(trace, dict):
        return ["top level is not a JSON object"]
    if trace.get("displayTimeUnit") != "ns":
        probs.append("displayTimeUnit is %r, want 'ns'" % trace.get("displayTimeUnit"))
    if not isinstance(trace.get("otherData"), dict):
        probs.append("otherData missing or not an object")
    evs = trace.get("traceEvents")
    if not isinstance(evs, list):
        return probs + ["traceEvents missing or not a list"]
    ids = Counter()
    for i, e in enumerate(evs):
        where = "traceEvents[%d] %s" % (i, str(e)[:200])
        if not isinstance(e, dict) or "ph" not in e:
            probs.append(where + ": not an object with ph")
            continue
        if e["ph"] == "X" and e.get("cat") == "offcpu":
            # an off-cpu slice: where a thread blocked, and for how long
            for k in ("name", "ts", "dur", "pid", "tid"):
                if k not in e:
                    probs.append("%s: no %s" % (where, k))
            st = e.get("args", {}).get("stack")
            if not isinstance(st, list) or not all(isinstance(f, str) for f in st):
                probs.append(where + ": off-cpu slice without args.stack list")
            if not is_number(e.get("dur")) or e.get("dur", -1) < 0:
                probs.append(where + ": dur is not a number >= 0")
        elif e["ph"] == "X":
            for k in ("name", "cat", "ph", "ts", "dur", "pid", "tid", "args"):
                if k not in e:
                    probs.append("%s: no %s" % (where, k))
            if any(k not in e for k in ("ts", "dur", "pid", "tid", "args", "name")):
                continue
            if not isinstance(e["name"], str) or not e["name"]:
                probs.append(where + ": empty or non-string name")
            if e.get("cat") not in ("call", "span"):
                probs.append(where + ": cat is not 'call' or 'span'")
            for k in ("ts", "dur"):
                if not is_number(e[k]) or e[k] < 0:
                    probs.append("%s: %s is not a number >= 0" % (where, k))
            for k in ("pid", "tid"):
                if not isinstance(e[k], int) or isinstance(e[k], bool) or e[k] <= 0:
                    probs.append("%s: %s is not a positive integer" % (where, k))
            a = e["args"]
            if not isinstance(a, dict):
                probs.append(where + ": args is not an object")
                continue
            for k in ("depth", "self_us", "id", "module"):
                if k not in a:
                    probs.append("%s: no args.%s" % (where, k))
            if "depth" in a and (not isinstance(a["depth"], int) or a["depth"] < 0):
                probs.append(where + ": args.depth is not an integer >= 0")
            if "self_us" in a:
                if not is_number(a["self_us"]) or a["self_us"] < 0:
                    probs.append(where + ": args.self_us is not a number >= 0")
                elif is_number(e["dur"]) and a["self_us"] > e["dur"] + EPS_US:
                    probs.append(where + ": args.self_us > dur")
            if "unfinished" in a and a["unfinished"] is not True:
                probs.append(where + ": args.unfinished present but not true")
            if "id" in a:
                ids[a["id"]] += 1
        elif e["ph"] == "M":
            if e.get("name") in ("process_name", "thread_name"):
                if not isinstance(e.get("args", {}).get("name"), str):
                    probs.append(where + ": metadata without args.name string")
                if "pid" not in e:
                    probs.append(where + ": metadata without pid")
        if "ts" in e and e["ph"] != "M" and (not is_number(e["ts"]) or e["ts"] < 0):
            probs.append(where + ": ts is not a number >= 0")
    dup = [i for i, n in ids.items() if n > 1]
    if dup:
        probs.append("args.id not unique among X events: %s" % dup[:10])
    return probs


class Call:
    """An X event with its place in the per-thread call tree."""

    __slots__ = ("ev", "name", "ts", "dur", "end", "depth", "pid", "tid",
                 "parent", "children")

    def __init__(self, ev):
        self.ev = ev
        self.name = ev["name"]
        self.ts = float(ev["ts"])
        self.dur = float(ev["dur"])
        self.end = self.ts + self.dur
        self.depth = ev["args"].get("depth")
        self.pid = ev["pid"]
        self.tid = ev["tid"]
        self.parent = None
        self.children = []

    def contains(self, other):
        return other.ts >= self.ts - EPS_US and other.end <= self.end + EPS_US

    def __repr__(self):
        return "%s(ts=%.3f dur=%.3f depth=%s tid=%s)" % (
            self.name, self.ts, self.dur, self.depth, self.tid)


def build_forest(events):
    """Builds the call tree of each thread from ts/dur alone.

    Returns (calls, problems): calls is a list of Call with parent/children
    set; problems lists calls that overlap without nesting (in one thread two
    calls must be disjoint or one inside the other).
    """
    per_tid = defaultdict(list)
    for e in events:
        per_tid[e["tid"]].append(Call(e))
    calls, probs = [], []
    for tid, cs in per_tid.items():
        # Parents first: by start, and the longer of two equal starts.
        cs.sort(key=lambda c: (c.ts, -c.dur))
        stack = []
        for c in cs:
            while stack and not stack[-1].contains(c):
                top = stack.pop()
                if c.ts < top.end - EPS_US:
                    probs.append("tid %d: %r overlaps %r without nesting" % (tid, c, top))
            if stack:
                c.parent = stack[-1]
                stack[-1].children.append(c)
            stack.append(c)
        calls.extend(cs)
    return calls, probs


def nesting_problems(events, root_depth=0):
    """Builds the per-thread trees and checks them against the args.

    - calls in a thread nest properly (no partial overlap);
    - args.depth of a child is its parent's + 1; a root has root_depth
      (None: any);
    - a parent's dur >= the sum of its children's durs;
    - args.self_us == dur - sum(children durs).
    Returns (calls, problems).
    """
    calls, probs = build_forest(events)
    for c in calls:
        if c.parent is None:
            if root_depth is not None and c.depth != root_depth:
                probs.append("%r is a root but has depth %s, want %s" % (c, c.depth, root_depth))
        elif c.depth != c.parent.depth + 1:
            probs.append("%r has depth %s but its parent %r has depth %s"
                         % (c, c.depth, c.parent, c.parent.depth))
        kids = sum(k.dur for k in c.children)
        tol = EPS_US * (len(c.children) + 1)
        if kids > c.dur + tol:
            probs.append("%r: children last %.3f us in all, more than the call" % (c, kids))
        self_us = c.ev["args"].get("self_us")
        if is_number(self_us) and abs(self_us - (c.dur - kids)) > tol + EPS_US:
            probs.append("%r: self_us %.3f != dur - children %.3f" % (c, self_us, c.dur - kids))
    return calls, probs


def assert_nesting(events, root_depth=0):
    """nesting_problems as an assertion; returns the calls."""
    calls, probs = nesting_problems(events, root_depth=root_depth)
    assert not probs, "call tree:\n  " + "\n  ".join(probs[:30])
    return calls


def chain(call):
    """Names from the root down to `call`, e.g. ['main', 'run', 'compute']."""
    out = []
    while call is not None:
        out.append(call.name)
        call = call.parent
    return out[::-1]
