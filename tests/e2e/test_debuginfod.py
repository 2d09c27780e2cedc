# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Debug files from debuginfod, and recordings named later (issue 32, items 2
and 3).

tests/progs/stripped/stripdemo.c and libstripdemo.c are built here with -g
and a build-id, then stripped (strip; strip --strip-unneeded for the
library); their debug files (objcopy --only-keep-debug) are served only by a
real `debuginfod` (Debian's elfutils server) on 127.0.0.1, with an empty
client cache in the test's directory.  Nothing else has them: no --debug-dir,
nothing in /usr/lib/debug.

What stripdemo guarantees: tests/e2e/stripdemo.py.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections import Counter

import pytest

from conftest import PROGS, TIMEOUT, run_bpfprof
from stripdemo import CFLAGS, FACTS, LIB_FACTS, SRC, build_id, nm_funcs, sh
from trace_util import xevents

# the typed parameters DWARF gives each (the source's declarations)
PARAMS = {"leaf": ["x"], "mid": ["x"], "fib": ["n"], "twice": ["x"], "lib_step": ["i"]}


def env(**kw):
    """bpfprof's environment: no debuginfod server unless given, the given cache."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
    e.update({k: str(v) for k, v in kw.items()})
    return e


def bpfprof(args, environ, timeout=TIMEOUT):
    """./bpfprof ARGS with `environ`, in its own session (killed whole at the
    timeout); must exit 0.  Returns (stdout, stderr)."""
    p = run_bpfprof(args, timeout=timeout, env=environ)
    assert p.returncode == 0, "%s: exit %d\n%s" % (" ".join(p.args), p.returncode, p.stderr[-3000:])
    return p.stdout, p.stderr


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """(bin dir: stripped stripdemo + libstripdemo.so, debug files dir by
    build-id, served dir: the debug files alone, {module: nm names})."""
    for tool in ("cc", "strip", "objcopy", "readelf", "nm", "debuginfod"):
        if not shutil.which(tool):
            pytest.fail("%s missing (scripts/setup.sh --test)" % tool)
    d = tmp_path_factory.mktemp("dbgi")
    plain, bindir, served, bydir = d / "plain", d / "bin", d / "served", d / "debugdir"
    for x in (plain, bindir, served, bydir):
        x.mkdir()
    sh("cc", *CFLAGS, "-fPIC", "-shared", "-Wl,-soname,libstripdemo.so", "-Wl,--build-id",
       SRC / "libstripdemo.c", "-o", plain / "libstripdemo.so")
    sh("cc", *CFLAGS, "-Wl,--build-id", SRC / "stripdemo.c", "-L", plain, "-lstripdemo",
       "-Wl,-rpath,$ORIGIN", "-o", plain / "stripdemo")
    nms = {}
    for name, how in (("stripdemo", []), ("libstripdemo.so", ["--strip-unneeded"])):
        nms[name] = nm_funcs(plain / name)
        sh("objcopy", "--only-keep-debug", plain / name, served / (name + ".debug"))
        bid = build_id(plain / name)
        (bydir / ".build-id" / bid[:2]).mkdir(parents=True, exist_ok=True)
        shutil.copy(served / (name + ".debug"), bydir / ".build-id" / bid[:2] / (bid[2:] + ".debug"))
        shutil.copy(plain / name, bindir / name)
        sh("strip", *how, bindir / name)
        assert ".symtab" not in sh("readelf", "-S", "-W", bindir / name)
    return bindir, bydir, served, nms


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(demo, tmp_path_factory):
    """A debuginfod serving the debug files of demo, once it has scanned them: its URL."""
    bindir, _, served, _ = demo
    d = tmp_path_factory.mktemp("dfd")
    port = free_port()
    log = open(d / "debuginfod.log", "w")
    p = subprocess.Popen(["debuginfod", "-F", "-p", str(port), "-d", str(d / "db.sqlite"),
                          str(served)], stdout=log, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    url = "http://127.0.0.1:%d" % port
    try:
        ids = [build_id(bindir / n) for n in ("stripdemo", "libstripdemo.so")]
        deadline = time.monotonic() + 120
        pending = list(ids)
        while pending:
            assert p.poll() is None, (d / "debuginfod.log").read_text()
            try:
                with urllib.request.urlopen("%s/buildid/%s/debuginfo" % (url, pending[0]),
                                            timeout=5) as r:
                    r.read(16)
                pending.pop(0)
            except (urllib.error.URLError, ConnectionError, OSError):
                assert time.monotonic() < deadline, "debuginfod did not serve %s" % pending
                time.sleep(0.3)
        yield url
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        log.close()


def record(bindir, out, environ, *extra):
    """record --args of every function of stripdemo and its library into out."""
    o, e = bpfprof(["record", "-o", out, "--args", *extra, "-F", "*",
                    "-F", "%s:*" % (bindir / "libstripdemo.so"), "--", bindir / "stripdemo"],
                   environ)
    assert o.strip() == "stripdemo: 94", o
    return e


def chrome_calls(path):
    """{(module, name): calls} and one call event of each function, from Chrome JSON."""
    with open(path) as f:
        ev = xevents(json.load(f))
    return Counter((e["args"]["module"], e["name"]) for e in ev), \
        {e["name"]: e for e in ev}


def named(calls):
    return ({n: c for (m, n), c in calls.items() if m == "stripdemo"},
            {n: c for (m, n), c in calls.items() if m == "libstripdemo.so"})


def source_line(name):
    """The line stripdemo.c / libstripdemo.c defines function `name` on."""
    for src in ("stripdemo.c", "libstripdemo.c"):
        for i, l in enumerate((SRC / src).read_text().splitlines(), 1):
            if re.match(r"^(static )?(TRACED )?int %s\(" % name, l):
                return src, i
    raise AssertionError("%s not defined in the sources" % name)


def test_debuginfod_names_lines_args(demo, server, tmp_path):
    """Names, definition lines and typed arguments of a stripped program and
    its stripped library, from debug files only the server has."""
    bindir, _, _, _ = demo
    cache = tmp_path / "cache"
    cache.mkdir()
    err = record(bindir, tmp_path / "t.json", env(DEBUGINFOD_URLS=server,
                                                  DEBUGINFOD_CACHE_PATH=cache))
    for n in ("stripdemo", "libstripdemo.so"):
        assert "fetching debug info for %s (build-id %s) from debuginfod" % (
            bindir / n, build_id(bindir / n)) in err, err
    calls, one = chrome_calls(tmp_path / "t.json")
    assert named(calls) == (FACTS, LIB_FACTS), calls
    # typed arguments from the DWARF of the fetched file: names and values
    for f, params in PARAMS.items():
        assert sorted(one[f]["args"]["params"]) == params, one[f]["args"]
    assert all(re.fullmatch(r"leaf\(x=\d+\) = \d+", e) for e in
               [one["leaf"]["args"]["call"]]), one["leaf"]["args"]
    # definition lines, as an independent reader (go tool pprof) decodes them
    bpfprof(["record", "-q", "-o", tmp_path / "t.bpfprof", "-F", "*", "--",
             bindir / "stripdemo"], env(DEBUGINFOD_URLS=server, DEBUGINFOD_CACHE_PATH=cache))
    bpfprof(["convert", "-q", "-o", tmp_path / "t.pb.gz", tmp_path / "t.bpfprof"], env())
    go = shutil.which("go") or "/usr/bin/go"
    genv = dict(os.environ, HOME=str(tmp_path), GOCACHE=str(tmp_path / "gocache"),
                GOTOOLCHAIN="local", GOPROXY="off", PPROF_TMPDIR=str(tmp_path))
    raw = subprocess.run([go, "tool", "pprof", "-raw", str(tmp_path / "t.pb.gz")], env=genv,
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert raw.returncode == 0, raw.stderr
    for f in FACTS:
        src, line = source_line(f)
        assert re.search(r"\b%s \S*/%s:%d\b" % (f, re.escape(src), line), raw.stdout), \
            (f, raw.stdout[-2000:])


def test_debuginfod_cache_and_option(demo, server, tmp_path):
    """--debuginfod URL instead of DEBUGINFOD_URLS; the second run finds the
    files in libdebuginfod's cache with the server gone (an unused port)."""
    bindir, _, _, _ = demo
    cache = tmp_path / "cache"
    cache.mkdir()
    e = env(DEBUGINFOD_CACHE_PATH=cache)
    record(bindir, tmp_path / "a.json", e, "--debuginfod", server)
    assert named(chrome_calls(tmp_path / "a.json")[0]) == (FACTS, LIB_FACTS)
    assert any(cache.rglob("debuginfo")), list(cache.rglob("*"))
    err = record(bindir, tmp_path / "b.json", e, "--debuginfod",
                 "http://127.0.0.1:%d" % free_port())
    assert named(chrome_calls(tmp_path / "b.json")[0]) == (FACTS, LIB_FACTS), err
    assert "cannot fetch" not in err, err
    # list says where each name came from
    out, _ = bpfprof(["list", "--debuginfod", server, bindir / "stripdemo"], e)
    lines = out.splitlines()
    head = lines[0].split()
    src = {r["function"]: r["source"] for r in
           (dict(zip(head, l.split())) for l in lines[1:] if l.startswith("0x"))}
    assert {f: src.get(f) for f in FACTS if f != "main"} == \
        {f: "debuginfod" for f in FACTS if f != "main"}, src


def test_debuginfod_server_down(demo, tmp_path):
    """No server on the port: the recording completes, unnamed, and says so."""
    bindir, _, _, nms = demo
    cache = tmp_path / "cache"
    cache.mkdir()
    port = free_port()
    err = record(bindir, tmp_path / "t.json", env(DEBUGINFOD_URLS="http://127.0.0.1:%d" % port,
                                                  DEBUGINFOD_CACHE_PATH=cache))
    assert re.search(r"cannot fetch debug info for \S*stripdemo from debuginfod: .*its "
                     r"functions stay unnamed", err), err
    # asked once: a failed server is not asked for the library too
    assert err.count("from debuginfod:") == 1, err
    calls, _ = chrome_calls(tmp_path / "t.json")
    got = {n: c for (m, n), c in calls.items() if m == "stripdemo"}
    want = {"stripdemo+0x%x" % nms["stripdemo"][f]: c for f, c in FACTS.items() if f != "main"}
    assert {n: c for n, c in got.items() if n in want} == want, got
    assert ("libstripdemo.so", "strip_lib_run") in calls      # .dynsym still names it


def report_functions(path, environ):
    out, _ = bpfprof(["report", "--format", "json", path], environ)
    return {(f["module"], f["name"]): f["calls"] for f in json.loads(out)["functions"]}


def test_symbolize_debug_dir(demo, tmp_path):
    """A recording made without debug files, named on a second "machine"
    (another directory of debug files) by build-id: the same functions and
    calls as a recording made with the debug files present."""
    bindir, bydir, _, _ = demo
    e = env()
    ref = tmp_path / "ref.bpfprof"
    record(bindir, ref, e, "--debug-dir", bydir)
    want = report_functions(ref, e)
    assert named(Counter(want)) == (FACTS, LIB_FACTS), want
    raw = tmp_path / "raw.bpfprof"
    record(bindir, raw, e)
    before = report_functions(raw, e)
    assert ("stripdemo", "leaf") not in before, before
    other = tmp_path / "machine2"
    shutil.copytree(bydir, other)
    out = tmp_path / "named.bpfprof"
    _, err = bpfprof(["symbolize", "--debug-dir", other, "-o", out, raw], e)
    assert report_functions(out, e) == want, err
    # typed arguments from the debug file's DWARF, in every exporter
    bpfprof(["convert", "-q", "-o", tmp_path / "named.json", out], e)
    _, one = chrome_calls(tmp_path / "named.json")
    for f, params in PARAMS.items():
        assert sorted(one[f]["args"]["params"]) == params, one[f]["args"]
    # the output is an archive like any: symbolized again, nothing changes
    _, err2 = bpfprof(["symbolize", "-o", tmp_path / "again.bpfprof", out], e)
    assert report_functions(tmp_path / "again.bpfprof", e) == want, err2


def test_symbolize_debug_files_by_name(demo, tmp_path):
    """symbolize finds debug files by the module's name as well: DIR/NAME.debug
    (objcopy --only-keep-debug's usual output, here the served directory as
    is), used only when its build-id is the module's (a file of that name for
    another binary lends it no names)."""
    bindir, bydir, served, _ = demo
    e = env()
    ref = tmp_path / "ref.bpfprof"
    record(bindir, ref, e, "--debug-dir", bydir)
    want = report_functions(ref, e)
    raw = tmp_path / "raw.bpfprof"
    record(bindir, raw, e)
    other = tmp_path / "machine2"
    shutil.copytree(served, other)
    out = tmp_path / "named.bpfprof"
    _, err = bpfprof(["symbolize", "--debug-dir", other, "-o", out, raw], e)
    assert report_functions(out, e) == want, err
    # the library's debug file under the program's name: not the program's
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    shutil.copy(served / "libstripdemo.so.debug", wrong / "stripdemo.debug")
    out2 = tmp_path / "wrong.bpfprof"
    _, err = bpfprof(["symbolize", "--debug-dir", wrong, "-o", out2, raw], e)
    got = report_functions(out2, e)
    assert ("stripdemo", "leaf") not in got and "no debug file for" in err, (got, err)


def test_symbolize_debuginfod(demo, server, tmp_path):
    """symbolize --debuginfod: the names come from the server."""
    bindir, _, _, _ = demo
    raw = tmp_path / "raw.bpfprof"
    record(bindir, raw, env())
    cache = tmp_path / "cache"
    cache.mkdir()
    out = tmp_path / "named.bpfprof"
    _, err = bpfprof(["symbolize", "--debuginfod", server, "-o", out, raw],
                     env(DEBUGINFOD_CACHE_PATH=cache))
    assert "from debuginfod" in err, err
    got = report_functions(out, env())
    assert named(Counter(got)) == (FACTS, LIB_FACTS), got


def folded(path, environ):
    """{stack: weight} of the folded output of a recording."""
    out, _ = bpfprof(["convert", "-q", "-o", "-", "--format", "folded", path], environ)
    rows = {}
    for l in out.splitlines():
        stack, w = l.rsplit(" ", 1)
        rows[stack] = rows.get(stack, 0) + int(w)
    return rows


def test_symbolize_sample_frames(tmp_path):
    """Sampled stacks of a stripped program (frames FILE+0xADDR, ADDR a
    function's start found by its FDE) named later: the same stacks and
    weights, each frame renamed to the function nm says starts at ADDR."""
    plain, prog, debug = tmp_path / "spin.plain", tmp_path / "spin", tmp_path / "debug"
    sh("cc", "-g", "-O1", "-Wl,--build-id", "-I", PROGS, PROGS / "spin.c", "-o", plain)
    shutil.copy(plain, prog)
    sh("strip", prog)
    bid = build_id(prog)
    (debug / ".build-id" / bid[:2]).mkdir(parents=True)
    sh("objcopy", "--only-keep-debug", plain, debug / ".build-id" / bid[:2] / (bid[2:] + ".debug"))
    by_addr = {a: n for n, a in nm_funcs(plain).items()}
    e = env()
    raw = tmp_path / "raw.bpfprof"
    # a stack is named from the process's maps: a run that ended before they
    # were read has [unmapped] frames only (a loaded machine), so again
    for n in (30000000, 100000000, 300000000):
        bpfprof(["record", "-q", "--sample", "-o", raw, "--", prog, n], e)
        before = folded(raw, e)
        if any("spin+0x" in s for s in before):
            break
    assert any("spin+0x" in s for s in before), before

    def rename(stack):
        return ";".join(by_addr[int(f[5:], 16)] if f.startswith("spin+0x") else f
                        for f in stack.split(";"))
    want = {}
    for s, w in before.items():
        want[rename(s)] = want.get(rename(s), 0) + w
    out = tmp_path / "named.bpfprof"
    bpfprof(["symbolize", "--debug-dir", debug, "-o", out, raw], e)
    after = folded(out, e)
    assert after == want
    assert any(";main" in s for s in after), after


def test_diff_matches_by_build_id(demo, tmp_path):
    """diff of a recording without debug files against one with them: each
    function matched by build-id and address, named, its calls on both sides."""
    bindir, bydir, _, _ = demo
    e = env()
    raw, ref = tmp_path / "raw.bpfprof", tmp_path / "ref.bpfprof"
    record(bindir, raw, e)
    record(bindir, ref, e, "--debug-dir", bydir)
    for base, new in ((raw, ref), (ref, raw)):
        out, _ = bpfprof(["diff", "--format", "json", base, new], e)
        rows = {(f["module"], f["function"]): f for f in json.loads(out)["functions"]}
        for mod, facts in (("stripdemo", FACTS), ("libstripdemo.so", LIB_FACTS)):
            for f, n in facts.items():
                r = rows.get((mod, f))
                assert r and r["base"] and r["new"], (f, sorted(rows))
                assert (r["base"]["calls"], r["new"]["calls"]) == (n, n), r
        assert not any("+0x" in f for _, f in rows), sorted(rows)


def test_debuginfod_silent_server(demo, server, tmp_path):
    """A server that accepts and never answers: the fetch goes on in the
    background past its budget (the output, Chrome JSON, is written through
    an archive that late files would name), the recording completes unnamed
    at the end of its wait and says so, and no "not found" is left in the
    cache to stop a later fetch: the real server then names the same program
    from that cache directory."""
    bindir, _, _, nms = demo
    cache = tmp_path / "cache"
    cache.mkdir()
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(16)
    try:
        err = record(bindir, tmp_path / "t.json", env(DEBUGINFOD_CACHE_PATH=cache),
                     "--debuginfod", "http://127.0.0.1:%d" % lsock.getsockname()[1],
                     "--debuginfod-timeout", "0.5")
    finally:
        lsock.close()
    assert "the fetch goes on in the background" in err, err
    assert re.search(r"no debug file came from debuginfod in time: \S*t\.json stays unnamed", err), err
    calls, _ = chrome_calls(tmp_path / "t.json")
    assert calls[("stripdemo", "stripdemo+0x%x" % nms["stripdemo"]["leaf"])] == 12, calls
    assert not [p for p in cache.rglob("debuginfo") if p.stat().st_size == 0]
    record(bindir, tmp_path / "u.json", env(DEBUGINFOD_CACHE_PATH=cache), "--debuginfod", server)
    assert named(chrome_calls(tmp_path / "u.json")[0]) == (FACTS, LIB_FACTS)


class _SlowProxy:
    """An HTTP server on 127.0.0.1 answering each GET as `upstream` does,
    `delay` seconds late: a debuginfod slower than bpfprof's budget."""

    def __init__(self, upstream, delay):
        import http.server
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                time.sleep(delay)
                try:
                    with urllib.request.urlopen(upstream + self.path, timeout=30) as r:
                        body, code = r.read(), r.status
                except urllib.error.HTTPError as e:
                    body, code = b"", e.code
                try:
                    self.send_response(code)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass    # the client gave up: its budget ran out

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def _record_late(demo, server, tmp_path, out):
    """Records demo to out through a server 3 s slower than a 0.5 s budget:
    the fetches go on in the background and name the output late."""
    bindir, _, _, _ = demo
    cache = tmp_path / "cache"
    cache.mkdir()
    proxy = _SlowProxy(server, 3)
    try:
        err = record(bindir, out, env(DEBUGINFOD_CACHE_PATH=cache), "--debuginfod", proxy.url,
                     "--debuginfod-timeout", "0.5")
    finally:
        proxy.close()
    assert "the fetch goes on in the background" in err, err
    assert "with debug files debuginfod brought late" in err, err
    return err


def test_debuginfod_names_late(demo, server, tmp_path):
    """A server slower than the budget: the recording goes on unnamed, the
    fetches go on in the background, and the archive written is named when
    they arrive (no `symbolize` needed)."""
    out = tmp_path / "t.bpfprof"
    err = _record_late(demo, server, tmp_path, out)
    got = report_functions(out, env())
    assert named(Counter(got)) == (FACTS, LIB_FACTS), (got, err)


def test_debuginfod_names_late_in_chrome_json(demo, server, tmp_path):
    """As above with another format than an archive (Chrome JSON): recorded
    through an archive beside it, named when the files arrive, then written
    as the JSON asked for, with the names and typed arguments; the archive
    is gone."""
    out = tmp_path / "t.json"
    err = _record_late(demo, server, tmp_path, out)
    calls, one = chrome_calls(out)
    assert named(calls) == (FACTS, LIB_FACTS), (calls, err)
    for f, params in PARAMS.items():
        assert sorted(one[f]["args"]["params"]) == params, one[f]["args"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "t.json"]
