# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Every output format, loaded into the real client people use it with.

tests/progs/calltree is recorded once per format; then
  - speedscope (the npm package, pinned in tests/clients) in headless Chromium
    imports the Chrome JSON, the speedscope JSON and the folded stacks and
    shows the functions (screenshots in tests/artifacts/);
  - `go tool pprof` reads the .pb.gz: exact call counts, self/inclusive time;
  - Graphviz `dot` renders the DOT graph;
  - Python's csv module reads the CSV: one row per call, a consistent tree.
The clients come from `scripts/setup.sh --test` (make test-deps); a test is
skipped, with the reason, only when its client is not installed.
"""

import collections
import csv
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
import time

import pytest

from conftest import REPO, prog_path, run_bpfprof
from test_record import CALLTREE_COUNTS

ARTIFACTS = REPO / "tests" / "artifacts"
SPEEDSCOPE = REPO / "tests" / "clients" / "node_modules" / "speedscope" / "dist" / "release"
SLOW_IO_NS = 20_000_000  # calltree's slow_io sleeps 20 ms

FORMATS = {
    "chrome": "trace.json",
    "speedscope": "trace.speedscope.json",
    "folded": "trace.folded",
    "pprof": "trace.pb.gz",
    "dot": "trace.dot",
    "csv": "trace.csv",
}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """{format: path}: calltree recorded once per format, the format chosen by -o's name."""
    d = tmp_path_factory.mktemp("clients")
    out = {}
    for fmt, name in FORMATS.items():
        p = d / name
        r = run_bpfprof(["record", "-q", "-o", p, "--", prog_path("calltree")])
        assert r.returncode == 0, "record -o %s: exit %s\n%s" % (name, r.returncode, r.stderr)
        assert p.exists() and p.stat().st_size > 0, "%s not written\n%s" % (p, r.stderr)
        out[fmt] = p
    return out


def need(path, what):
    if not os.access(path, os.X_OK):
        pytest.skip("%s not installed (%s): run scripts/setup.sh --test" % (what, path))


# ------------------------------------------------------------ speedscope

class SpeedscopeServer:
    """speedscope's static build plus the profiles, over HTTP on 127.0.0.1."""

    def __init__(self, root):
        self.root = root
        for f in SPEEDSCOPE.iterdir():
            os.symlink(f, root / f.name)

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def publish(self, path, name):
        shutil.copyfile(path, self.root / name)
        return "http://127.0.0.1:%d/%s" % (self.port, name)

    def app(self, profile_url, view=None):
        url = "http://127.0.0.1:%d/index.html#profileURL=%s" % (self.port, profile_url)
        return url + ("&view=" + view if view else "")

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def speedscope(tmp_path_factory):
    need("/usr/bin/chromium", "Debian chromium")
    if not (SPEEDSCOPE / "index.html").exists():
        pytest.skip("speedscope not installed in tests/clients: run scripts/setup.sh --test")
    try:
        import cdp  # noqa: F401  (needs Debian python3-websocket)
    except ImportError as e:
        pytest.skip("python3-websocket not installed (%s): run scripts/setup.sh --test" % e)
    srv = SpeedscopeServer(tmp_path_factory.mktemp("speedscope"))
    yield srv
    srv.close()


# speedscope says which importer took the file on the console.
IMPORTER = {
    "chrome": "Importing as Trace Event Format profile",
    "speedscope": "Importing as speedscope json file",
    "folded": "Importing as collapsed stack format",
}

# The sandwich view is a DOM table (the flame graphs are WebGL canvases); its
# header shows before its rows, so wait for a row ("20.12ms (97%)").
SHOWN = ("document.body && /Symbol Name\\s+[\\d.,]+/.test(document.body.innerText)"
         " && document.body.innerText")
FAILED = "document.body && /Something went wrong/.test(document.body.innerText)"


def open_in_speedscope(srv, fmt, path, tall=False):
    """Loads `path` into speedscope; returns (sandwich table text, browser).
    The table draws only the rows in view: `tall` makes the view 8000 pixels
    high (some 400 rows), for profiles with many symbols (kernel frames)."""
    import cdp

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    url = srv.publish(path, "profile-%s%s" % (fmt, "".join(path.suffixes)))
    with cdp.Browser() as b:
        if tall:
            b.call("Emulation.setDeviceMetricsOverride", width=1400, height=8000,
                   deviceScaleFactor=1, mobile=False)
        b.navigate(srv.app(url, view="sandwich"))
        text = b.wait_for("(%s) || (%s)" % (SHOWN, FAILED), timeout=30)
        # Rows may still be coming in: read until the table stops changing.
        for _ in range(20):
            time.sleep(0.25)
            again = b.evaluate("document.body.innerText")
            if again == text:
                break
            text = again
        b.screenshot(ARTIFACTS / ("speedscope-%s-sandwich.png" % fmt))
        # The time-ordered flame chart, for a person to look at.
        b.navigate("about:blank")
        b.navigate(srv.app(url))
        b.wait_for("document.querySelector('canvas') && /Time Order/.test(document.body.innerText)",
                   timeout=30)
        time.sleep(1)  # let it draw: only the screenshot depends on it
        b.screenshot(ARTIFACTS / ("speedscope-%s-timeline.png" % fmt))
        return text, b


def sandwich_rows(text):
    """{function: (total, self)} from the sandwich table text ("20.12ms (97%)" cells)."""
    cells = [c.strip() for c in re.split(r"[\t\n]+", text) if c.strip()]
    value = re.compile(r"^[\d.,]+(\s*(ms|µs|us|ns|s))? \(")
    rows = {}
    for i in range(len(cells) - 2):
        if value.match(cells[i]) and value.match(cells[i + 1]):
            rows[cells[i + 2]] = (cells[i], cells[i + 1])
    return rows


def to_ns(cell):
    m = re.match(r"^([\d.,]+)\s*(ms|µs|us|ns|s)?", cell)
    v = float(m.group(1).replace(",", ""))
    return v * {"s": 1e9, "ms": 1e6, "µs": 1e3, "us": 1e3, "ns": 1, None: 1}[m.group(2)]


@pytest.mark.parametrize("fmt", ["chrome", "speedscope", "folded"])
def test_speedscope_imports(outputs, speedscope, fmt):
    # Chrome: speedscope appends each event's args to its name, so every call
    # (calltree's 218) is a row of its own, and the table draws only the rows
    # in view: parse's three short calls fell below a 900-pixel view when the
    # load made them the shortest (ci5)
    text, b = open_in_speedscope(speedscope, fmt, outputs[fmt], tall=fmt == "chrome")
    problems = ["console %s: %s" % (lvl, t) for lvl, t in b.console if lvl == "error"]
    problems += ["exception: " + e for e in b.exceptions]
    problems += ["alert: " + d for d in b.dialogs]
    detail = "\n".join(problems) + "\n--- console\n" + "\n".join(
        "%s: %s" % c for c in b.console)
    assert not problems, "speedscope reported problems:\n" + detail
    assert isinstance(text, str) and "Something went wrong" not in text, \
        "speedscope did not show the profile (got %r)\n%s" % (text, detail)
    assert any(IMPORTER[fmt] in t for _, t in b.console), \
        "speedscope did not use its %r importer\n%s" % (IMPORTER[fmt], detail)
    rows = sandwich_rows(text)
    names = {re.sub(r" \{.*$", "", n) for n in rows}  # Chrome: speedscope appends args to names
    for fn in ("main", "run", "compute", "leaf_add", "leaf_mul", "fib", "parse", "slow_io"):
        assert fn in names, "speedscope does not list %s: %s\n%s" % (fn, sorted(names), text)
    if fmt == "speedscope":
        # self time of slow_io is its 20 ms sleep; main holds everything
        slow_total, slow_self = rows["slow_io"]
        assert to_ns(slow_self) >= SLOW_IO_NS * 0.99, rows["slow_io"]
        assert to_ns(rows["main"][0]) >= to_ns(slow_total), rows
        assert set(names) == set(CALLTREE_COUNTS), sorted(names)


# ------------------------------------------------------------ speedscope JSON (no browser)

def test_speedscope_file_is_well_formed(outputs):
    """What speedscope's importer insists on, checked for every event: a schema
    header, events in time order, every close matching the innermost open."""
    doc = json.loads(outputs["speedscope"].read_text())
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    frames = doc["shared"]["frames"]
    assert all(isinstance(f["name"], str) and f["name"] for f in frames)
    assert 0 <= doc["activeProfileIndex"] < len(doc["profiles"])
    opens = collections.Counter()
    for prof in doc["profiles"]:
        assert prof["type"] == "evented" and prof["unit"] == "nanoseconds"
        stack, last = [], prof["startValue"]
        for ev in prof["events"]:
            assert ev["at"] >= last, "event out of order: %s" % ev
            last = ev["at"]
            if ev["type"] == "O":
                stack.append(ev["frame"])
                opens[frames[ev["frame"]]["name"]] += 1
            else:
                assert ev["type"] == "C" and stack and stack[-1] == ev["frame"], \
                    "close does not match the open frame: %s, stack %s" % (ev, stack[-5:])
                stack.pop()
        assert not stack, "frames left open: %s" % stack
        assert last <= prof["endValue"]
    assert dict(opens) == CALLTREE_COUNTS


# ------------------------------------------------------------ pprof

@pytest.fixture(scope="module")
def go_env(tmp_path_factory):
    need(shutil.which("go") or "/usr/bin/go", "Debian golang-go")
    d = tmp_path_factory.mktemp("go")
    env = dict(os.environ, HOME=str(d), GOPATH=str(d / "gopath"), GOCACHE=str(d / "cache"),
               GOFLAGS="-mod=mod", GOTOOLCHAIN="local", GOPROXY="off", PPROF_TMPDIR=str(d))
    return env


def pprof(env, *args):
    p = subprocess.run(["go", "tool", "pprof"] + [str(a) for a in args], env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, "go tool pprof %s: exit %d\n%s%s" % (
        " ".join(map(str, args)), p.returncode, p.stdout, p.stderr)
    return p.stdout


def pprof_samples(env, path):
    """(frames, labels, block) of each cpu sample's call path in `go tool pprof
    -traces` (frames innermost first, labels {name: value}); the call paths of
    exact calls (value 0) are left out."""
    out = pprof(env, "-traces", "-sample_index=cpu", path)
    for block in out.split("-----------+")[1:]:
        lines = [ln.strip() for ln in block.splitlines()]
        labels = dict(re.findall(r"^\s*(\w+):\s+(.*)$", block, re.M))
        frames = [re.sub(r"^[\d.]+\w*\s+", "", ln) for ln in lines if ln and ":" not in ln
                  and not ln.startswith("-")]
        value = re.search(r"^\s*([\d.]+)\w*\s+\S", block, re.M)
        if value and float(value.group(1)) != 0:
            yield frames, labels, block


def pprof_top(env, path, *opts):
    """{function: (flat, cum)} from `go tool pprof -top`, plus the header lines."""
    out = pprof(env, "-top", "-nodefraction=0", "-nodecount=1000", *opts, path)
    rows, head = {}, []
    for line in out.splitlines():
        m = re.match(r"^\s*([\d.]+)(\w*)\s+[\d.]+%\s+[\d.]+%\s+([\d.]+)(\w*)\s+[\d.]+%\s+(\S.*)$",
                     line)
        if m:
            rows[m.group(5)] = (float(m.group(1)), float(m.group(3)))
        else:
            head.append(line)
    return rows, head


def test_pprof_calls(outputs, go_env):
    """-sample_index=calls: flat is the exact number of calls of each function."""
    rows, head = pprof_top(go_env, outputs["pprof"], "-sample_index=calls")
    assert any(l.startswith("Type: calls") for l in head), head
    assert {n: int(f) for n, (f, _) in rows.items()} == CALLTREE_COUNTS
    # cum counts the calls under a function: everything is under main
    assert rows["main"][1] == sum(CALLTREE_COUNTS.values())
    assert rows["compute"][1] == 5 + 20 + 10


def test_pprof_wall(outputs, go_env):
    """The default sample type is wall time: flat = self time, cum = inclusive."""
    rows, head = pprof_top(go_env, outputs["pprof"], "-unit=ns")
    assert any(l.startswith("Type: wall") for l in head), head
    assert set(rows) == set(CALLTREE_COUNTS)
    assert max(rows, key=lambda n: rows[n][0]) == "slow_io"
    assert rows["slow_io"][0] >= SLOW_IO_NS
    assert rows["main"][1] >= rows["run"][1] >= rows["slow_io"][1]
    assert rows["compute"][1] >= rows["leaf_add"][1] + rows["leaf_mul"][1] + rows["compute"][0] - 2
    assert rows["compute"][0] < rows["compute"][1]
    # fib is recursive: inclusive time is not counted once per nesting level
    assert rows["fib"][1] < rows["run"][1]


def test_pprof_raw(outputs, go_env):
    """The profile's own fields, as pprof decodes them."""
    out = pprof(go_env, "-raw", outputs["pprof"])
    # five values per sample; a recording of calls only has no samples: zeros there
    assert "calls/count wall/nanoseconds[dflt] samples/count cpu/nanoseconds " \
        "offcpu/nanoseconds" in out, out[:2000]
    assert "PeriodType: wall nanoseconds" in out
    assert "bpfprof record: " in out and "calltree" in out
    # one mapping, the traced executable, with function names
    assert re.search(r"^1: 0x0/0x0/0x0 \S*tests/progs/calltree\s+\[FN\]", out, re.M), out[-1500:]
    # leaf-first stacks: leaf_add is called from compute, from run, from main
    assert re.search(r"^\s+20\s+\d+\s+0\s+0\s+0: (\d+) (\d+) (\d+) (\d+)\s*$", out, re.M), \
        out[:2000]


# ------------------------------------------------------------ DOT

def dot_graph(text):
    """({node id: function name}, {(caller, callee): calls}) from bpfprof's DOT text."""
    nodes = {m.group(1): m.group(2) for m in re.finditer(r'^\t(f\d+) \[label="([^"\\]+)\\n', text, re.M)}
    edges = {(nodes[m.group(1)], nodes[m.group(2)]): int(m.group(3)) for m in
             re.finditer(r'^\t(f\d+) -> (f\d+) \[label="(\d+)"', text, re.M)}
    return nodes, edges


def test_dot_renders(outputs, tmp_path):
    need("/usr/bin/dot", "Graphviz dot")
    svg = tmp_path / "graph.svg"
    p = subprocess.run(["/usr/bin/dot", "-Tsvg", "-o", svg, outputs["dot"]], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, "dot failed: %s" % p.stderr
    assert not p.stderr.strip(), "dot complained: %s" % p.stderr
    text = svg.read_text()
    for fn in CALLTREE_COUNTS:
        assert ">%s</text>" % fn in text, "%s not drawn" % fn
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(svg, ARTIFACTS / "calltree.svg")


def test_dot_graph(outputs):
    nodes, edges = dot_graph(outputs["dot"].read_text())
    assert sorted(nodes.values()) == sorted(CALLTREE_COUNTS)
    assert edges == {("main", "run"): 1, ("run", "parse"): 3, ("run", "compute"): 5,
                     ("run", "fib"): 1, ("run", "slow_io"): 1, ("compute", "leaf_add"): 20,
                     ("compute", "leaf_mul"): 10, ("fib", "fib"): 176}
    text = outputs["dot"].read_text()
    for fn, n in CALLTREE_COUNTS.items():
        assert re.search(r'label="%s\\n%d calls?\\n' % (fn, n), text), "%s: %d calls" % (fn, n)


# ------------------------------------------------------------ folded

def test_folded(outputs):
    lines = outputs["folded"].read_text().splitlines()
    assert lines == sorted(lines), "lines are not sorted"
    stacks = {}
    for l in lines:
        m = re.match(r"^(\S(?:.*\S)?) (\d+)$", l)
        assert m, "not a folded line: %r" % l
        assert m.group(1) not in stacks, "duplicate stack %r" % m.group(1)
        stacks[m.group(1)] = int(m.group(2))
    assert "main;run;compute;leaf_add" in stacks
    assert "main;run;fib;fib;fib" in stacks
    assert stacks["main;run;slow_io"] >= SLOW_IO_NS
    assert {s.split(";")[-1] for s in stacks} == set(CALLTREE_COUNTS)
    assert all(s.startswith("main") for s in stacks)


# ------------------------------------------------------------ CSV

def test_csv(outputs):
    with open(outputs["csv"], newline="") as f:
        rd = csv.DictReader(f)
        assert rd.fieldnames == ["pid", "tid", "function", "module", "start_ns", "duration_ns",
                                 "depth", "self_ns", "id", "parent_id", "flags", "args",
                                 "return"]
        rows = list(rd)
    calls = [r for r in rows if r["function"]]
    assert collections.Counter(r["function"] for r in calls) == CALLTREE_COUNTS
    by_id = {int(r["id"]): r for r in calls}
    assert len(by_id) == len(calls), "ids are not unique"
    for r in calls:
        assert r["module"].endswith("tests/progs/calltree"), r
        dur, self_ns = int(r["duration_ns"]), int(r["self_ns"])
        assert 0 <= self_ns <= dur, r
        assert r["flags"] == "", r
        assert r["args"] == r["return"] == "", r   # recorded without --args
        pid = int(r["parent_id"])
        if pid:
            parent = by_id[pid]
            assert int(r["depth"]) == int(parent["depth"]) + 1, (r, parent)
            assert int(parent["start_ns"]) <= int(r["start_ns"])
            assert int(r["start_ns"]) + dur <= int(parent["start_ns"]) + int(parent["duration_ns"])
        else:
            assert r["function"] == "main" and r["depth"] == "0", r
    slow = [r for r in calls if r["function"] == "slow_io"]
    assert int(slow[0]["duration_ns"]) >= SLOW_IO_NS
    assert {by_id[int(r["parent_id"])]["function"] for r in calls if r["function"] == "leaf_add"} \
        == {"compute"}
