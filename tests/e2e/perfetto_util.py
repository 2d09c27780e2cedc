# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Reading bpfprof's Perfetto traces (.pftrace) independently of bpfprof.

The bytes are decoded by `protoc --decode` against tests/perfetto_subset.proto
(field numbers from Perfetto's published protos), and the packets are then
read the way Perfetto's trace processor reads them:

- per packet sequence (trusted_packet_sequence_id): a packet with
  sequence_flags & 1 clears its interned data and defaults; interned
  event names, categories and debug annotation names are looked up in
  the sequence's table; trace_packet_defaults give the timestamp clock and
  the default track;
- timestamps: a sequence-scoped clock (id >= 64) marked is_incremental in a
  ClockSnapshot of the sequence adds each packet's timestamp to the previous
  one; a ClockSnapshot maps it to CLOCK_MONOTONIC;
- every TrackEvent of the file is sorted by (timestamp, position in the file)
  and slices are built per track with a stack: SLICE_BEGIN pushes, SLICE_END
  pops the innermost open slice of the track.

The result has the shape of bpfprof's Chrome JSON (trace_util.py's
contract), so the same checks apply to both formats: one "ph":"X" event per
slice with its nesting depth in args.depth, "ph":"M" process_name /
thread_name metadata (the last descriptor of each track wins), "cat":"loss"
instants, flow ends as "ph":"s" / "ph":"f" events, counters as "ph":"C".
"""

import codecs
import os
import subprocess

PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PROTO = "perfetto_subset.proto"


def decode_text(path):
    """protoc --decode of the file: Perfetto's text format of the Trace."""
    with open(path, "rb") as f:
        p = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I", PROTO_DIR, PROTO],
                           stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if p.returncode != 0:
        raise ValueError("protoc --decode failed: %s" % p.stderr.decode(errors="replace")[-2000:])
    return p.stdout.decode()


def _value(tok):
    if tok.startswith('"'):
        raw = tok[1:-1]
        return codecs.escape_decode(raw.encode("latin-1", "backslashreplace"))[0].decode(
            "utf-8", "replace")
    if tok in ("true", "false"):
        return tok == "true"
    try:
        return int(tok)
    except ValueError:
        return tok  # an enum name


def parse_text(text):
    """Protobuf text format -> nested dicts; every field is a list of values."""
    root = {}
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        if line.endswith("{"):
            name = line[:-1].strip()
            msg = {}
            stack[-1].setdefault(name, []).append(msg)
            stack.append(msg)
            continue
        name, _, val = line.partition(":")
        stack[-1].setdefault(name.strip(), []).append(_value(val.strip()))
    return root


def one(msg, field, default=None):
    v = msg.get(field)
    return v[-1] if v else default


def packets(path):
    return parse_text(decode_text(path)).get("packet", [])


class _Seq:
    def __init__(self):
        self.clear()

    def clear(self):
        self.names, self.cats, self.annots = {}, {}, {}
        self.clock_id = None
        self.track = None
        self.clocks = {}  # id -> [value, incremental, monotonic base at value 0]


def read(path, types=None):
    """The trace as Chrome-JSON-like dict (see the module docstring).

    types: when true, each slice's args also hold "_types": per annotation
    name, the DebugAnnotation field that held the value ("int_value", ...)."""
    pk = packets(path)
    seqs = {}
    tracks = {}  # uuid -> descriptor dict (last wins)
    events = []  # (ts_ns, order, track_uuid, track_event, seq)
    primary_base = None
    for order, p in enumerate(pk):
        sid = one(p, "trusted_packet_sequence_id", 0)
        seq = seqs.setdefault(sid, _Seq())
        if one(p, "sequence_flags", 0) & 1:
            seq.clear()
        d = one(p, "trace_packet_defaults")
        if d:
            seq.clock_id = one(d, "timestamp_clock_id")
            ted = one(d, "track_event_defaults")
            seq.track = one(ted, "track_uuid") if ted else None
        idata = one(p, "interned_data")
        if idata:
            for e in idata.get("event_names", []):
                seq.names[one(e, "iid")] = one(e, "name")
            for e in idata.get("event_categories", []):
                seq.cats[one(e, "iid")] = one(e, "name")
            for e in idata.get("debug_annotation_names", []):
                seq.annots[one(e, "iid")] = one(e, "name")
        cs = one(p, "clock_snapshot")
        if cs:
            clocks = {one(c, "clock_id"): c for c in cs.get("clocks", [])}
            mono = one(clocks.get(3, {}), "timestamp") if 3 in clocks else None
            if one(cs, "primary_trace_clock") == 3:
                primary_base = mono
            for cid, c in clocks.items():
                if cid >= 64:
                    v = one(c, "timestamp", 0)
                    seq.clocks[cid] = [v, bool(one(c, "is_incremental", False)), mono - v]
            continue
        td = one(p, "track_descriptor")
        if td:
            tracks[one(td, "uuid")] = td
            continue
        te = one(p, "track_event")
        if te is None:
            continue
        cid = one(p, "timestamp_clock_id", seq.clock_id)
        raw = one(p, "timestamp")
        if raw is None:
            raise ValueError("packet %d: a track event without a timestamp" % order)
        if cid is not None and cid >= 64:
            clk = seq.clocks[cid]
            clk[0] = clk[0] + raw if clk[1] else raw
            ts = clk[0] + clk[2]
        else:
            ts = raw
        events.append((ts, order, te, seq))
    if primary_base is None:
        raise ValueError("no ClockSnapshot with primary_trace_clock MONOTONIC")

    def thread_of(uuid):
        td = tracks.get(uuid)
        th = one(td, "thread") if td else None
        if th:
            return one(th, "pid"), one(th, "tid")
        if td and one(td, "parent_uuid") in tracks and one(td, "name") is not None:
            return thread_of(one(td, "parent_uuid"))	# a named track under a thread's
        return 0, 0

    def track_name(uuid):
        """The name of a track that is not a thread's (e.g. an asyncio task's), else None."""
        td = tracks.get(uuid)
        return one(td, "name") if td and not one(td, "thread") else None

    def args_of(te, seq):
        out = {}
        kinds = {}
        for a in te.get("debug_annotations", []):
            name = one(a, "name") or seq.annots.get(one(a, "name_iid"))
            for k in ("bool_value", "int_value", "uint_value", "pointer_value", "string_value",
                      "double_value"):
                if k in a:
                    v = one(a, k)
                    if k == "double_value":
                        v = float(v)
                    out[name] = "%#x" % v if k == "pointer_value" else v
                    kinds[name] = k
        if types:
            out["_types"] = kinds
        return out

    def us(ns):
        return (ns - primary_base) / 1000.0

    out = []
    stacks = {}  # track uuid -> [open slices]
    events.sort(key=lambda e: (e[0], e[1]))
    for ts, _, te, seq in events:
        uuid = one(te, "track_uuid", seq.track)
        typ = one(te, "type")
        name = one(te, "name") or seq.names.get(one(te, "name_iid"))
        cats = [seq.cats.get(i) for i in te.get("category_iids", [])]
        cat = cats[0] if cats else None
        pid, tid = thread_of(uuid)
        st = stacks.setdefault(uuid, [])
        if typ == "TYPE_SLICE_BEGIN":
            args = args_of(te, seq)
            args["depth"] = len(st)
            ev = {"name": name, "cat": cat, "ph": "X", "ts": us(ts), "pid": pid, "tid": tid,
                  "args": args, "_begin_ns": ts}
            if track_name(uuid) is not None:
                ev["track"] = track_name(uuid)
                ev["track_uuid"] = uuid
            st.append(ev)
            out.append(ev)
        elif typ == "TYPE_SLICE_END":
            if not st:
                raise ValueError("SLICE_END at %d ns on track %d with no open slice" % (ts, uuid))
            ev = st.pop()
            ev["dur"] = (ts - ev.pop("_begin_ns")) / 1000.0
        elif typ == "TYPE_INSTANT":
            ev = {"name": name, "cat": cat, "ph": "i", "s": "g" if cat == "loss" else "t",
                  "ts": us(ts), "pid": pid, "tid": tid, "args": args_of(te, seq)}
            out.append(ev)
            for fid in te.get("flow_ids", []):
                out.append({"name": name, "cat": "edge", "ph": "s", "id": fid, "ts": us(ts),
                            "pid": pid, "tid": tid, "args": ev["args"]})
            for fid in te.get("terminating_flow_ids", []):
                out.append({"name": name, "cat": "edge", "ph": "f", "bp": "e", "id": fid,
                            "ts": us(ts), "pid": pid, "tid": tid})
        elif typ == "TYPE_COUNTER":
            td = tracks.get(uuid, {})
            parent = tracks.get(one(td, "parent_uuid"), {})
            cpid = one(one(parent, "process", {}), "pid", 0)
            cname = one(td, "name")
            out.append({"name": cname, "cat": "event", "ph": "C", "ts": us(ts), "pid": cpid,
                        "args": {cname: one(te, "counter_value", 0)}})
    for uuid, st in stacks.items():
        if st:
            raise ValueError("%d slices never ended on track %d: %r" % (len(st), uuid, st[-1]))
    for td in tracks.values():
        pr = one(td, "process")
        th = one(td, "thread")
        if pr:
            out.append({"name": "process_name", "ph": "M", "pid": one(pr, "pid"), "tid": 0,
                        "args": {"name": one(pr, "process_name")}})
        if th:
            out.append({"name": "thread_name", "ph": "M", "pid": one(th, "pid"),
                        "tid": one(th, "tid"), "args": {"name": one(th, "thread_name")}})
    return {"displayTimeUnit": "ns", "traceEvents": out,
            "_sequences": len([s for s in seqs if s]), "_packets": len(pk)}


def main(argv):
    """perfetto_util.py FILE: one line per slice, as Perfetto nests them:
    "tid name depth begin_ns end_ns flags", in the order they begin (for the C unit test)."""
    tr = read(argv[1])
    base = None
    for e in tr["traceEvents"]:
        if e.get("ph") != "X":
            continue
        flags = ",".join(sorted(k for k in ("unfinished", "began_before_recording", "unwound",
                                            "end_inferred") if e["args"].get(k))) or "-"
        print("%d %s %d %d %d %s" % (e["tid"], e["name"], e["args"]["depth"],
                                     round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000),
                                     flags))
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv))
