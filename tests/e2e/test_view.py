# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""`bpfprof view FILE` in headless Chromium (tests/e2e/cdp.py).

tests/progs/calltree is recorded once to an archive, a Chrome trace and a
speedscope file; `view` serves each on 127.0.0.1 and the page must show:
  - the per-function table with every function of calltree and its exact
    call count (an archive: the report component; Chrome JSON: computed by
    the page from the file, which also gives speedscope the calls with plain
    function names, not its Chrome importer's name-and-args frames);
  - speedscope (from tests/clients, scripts/setup.sh --test) importing the
    profile without error, in the page's frame;
  - the call graph, an SVG drawn by Graphviz dot.
Screenshots go to tests/artifacts/view-*.png.  Ctrl-C ends view with exit 0.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from pathlib import Path

from conftest import BPFPROF, REPO, as_nobody, nobody_dir, prog_path, run_bpfprof
from test_record import CALLTREE_COUNTS

ARTIFACTS = REPO / "tests" / "artifacts"
SPEEDSCOPE = REPO / "tests" / "clients" / "node_modules" / "speedscope" / "dist" / "release"


class View:
    """A running `bpfprof view`; stop() sends SIGINT and returns the exit status."""

    def __init__(self, path, *opts, env=None, preexec=None, exe=BPFPROF):
        self.proc = subprocess.Popen(
            [str(exe), "view"] + [str(o) for o in opts] + [str(path)], cwd=REPO,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True, env=env, preexec_fn=preexec)
        line = self.proc.stdout.readline()
        if not line.startswith("http://127.0.0.1:"):
            self.kill()
            pytest.fail("view printed no URL: %r\n%s" % (line, self.proc.stderr.read()))
        self.url = line.strip()

    def get(self, path, **kw):
        req = urllib.request.Request(self.url.rstrip("/") + path, **kw)
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type"), r.read()

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            rc = self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail("view did not end on SIGINT")
        return rc

    def kill(self):
        """Ends view after a failed test: SIGINT first, so it removes its temporary files."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.fixture
def view():
    started = []

    def _view(path, *opts, **kw):
        v = View(path, *opts, **kw)
        started.append(v)
        return v

    yield _view
    for v in started:
        v.kill()


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    """{"archive": calltree.bpfprof, "chrome": calltree.json, "speedscope": calltree.speedscope.json}"""
    d = tmp_path_factory.mktemp("view")
    out = {}
    for kind, name in (("archive", "calltree.bpfprof"), ("chrome", "calltree.json"),
                       ("speedscope", "calltree.speedscope.json")):
        p = d / name
        r = run_bpfprof(["record", "-q", "-o", p, "--", prog_path("calltree")])
        assert r.returncode == 0 and p.exists(), r.stderr
        out[kind] = p
    return out


def need_browser():
    if not os.access("/usr/bin/chromium", os.X_OK):
        pytest.skip("Debian chromium not installed: run scripts/setup.sh --test")
    if not (SPEEDSCOPE / "index.html").exists():
        pytest.skip("speedscope not installed in tests/clients: run scripts/setup.sh --test")
    try:
        import cdp  # noqa: F401
    except ImportError as e:
        pytest.skip("python3-websocket not installed (%s): run scripts/setup.sh --test" % e)


TABLE = "[...document.querySelectorAll('#table tbody tr')].map(r => [...r.cells].map(c => c.textContent))"
FRAME_TEXT = ("(() => { const f = document.querySelector('#timeline iframe');"
              " const d = f && f.contentDocument; return d && d.body ? d.body.innerText : ''; })()")
FRAME_CANVAS = ("(() => { const f = document.querySelector('#timeline iframe');"
                " const d = f && f.contentDocument; return !!(d && d.querySelector('canvas')); })()")


def problems(b):
    out = ["console %s: %s" % (lvl, t) for lvl, t in b.console if lvl == "error"]
    out += ["exception: " + e for e in b.exceptions]
    out += ["alert: " + d for d in b.dialogs]
    return out


def check_page(v, kind, importer):
    import cdp

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with cdp.Browser() as b:
        b.navigate(v.url)
        ready = b.wait_for("document.body && document.body.dataset.ready", timeout=30)
        assert ready == "1", "the page did not load the recording: %r\n%s" % (
            b.evaluate("document.body.innerText"), "\n".join(problems(b)))
        rows = b.evaluate(TABLE)
        # columns: calls total self avg min max p50 p99 wall function module
        calls = {r[9]: int(r[0].replace(",", "")) for r in rows}
        assert calls == CALLTREE_COUNTS, rows
        text = b.evaluate("document.body.innerText")
        for fn in CALLTREE_COUNTS:
            assert fn in text
        b.screenshot(ARTIFACTS / ("view-%s-functions.png" % kind))

        # speedscope in the page's frame: the time-ordered view of the profile
        b.evaluate("document.querySelector('nav button[data-view=time-ordered]').click()")
        shown = b.wait_for("(%s) && /Time Order/.test(%s) || /Something went wrong/.test(%s)"
                           % (FRAME_CANVAS, FRAME_TEXT, FRAME_TEXT), timeout=40)
        frame = b.evaluate(FRAME_TEXT)
        detail = "\n".join(problems(b)) + "\n--- console\n" + "\n".join("%s: %s" % c for c in b.console)
        assert shown and "Something went wrong" not in frame, \
            "speedscope did not show the profile: %r\n%s" % (frame, detail)
        assert any(importer in t for _, t in b.console), \
            "speedscope did not use its %r importer\n%s" % (importer, detail)
        time.sleep(1)  # let it draw: only the screenshot depends on it
        b.screenshot(ARTIFACTS / ("view-%s-timeline.png" % kind))

        # the sandwich view lists the functions (a DOM table, unlike the WebGL flame graphs)
        b.evaluate("document.querySelector('nav button[data-view=sandwich]').click()")
        sandwich = b.wait_for("/Symbol Name[\\s\\S]*leaf_add/.test(%s) && %s" % (FRAME_TEXT, FRAME_TEXT),
                              timeout=30)
        assert sandwich and "slow_io" in sandwich, sandwich
        # plain function names: not speedscope's Chrome importer's "leaf_add {args}"
        assert "depth" not in sandwich and "{" not in sandwich, sandwich

        # the call graph: an SVG image from dot
        b.evaluate("document.querySelector('nav button[data-tab=graph]').click()")
        w = b.wait_for("(() => { const i = document.querySelector('#graph img');"
                       " return i && i.complete && i.naturalWidth; })()"
                       " || document.querySelector('#gnote .err') && -1", timeout=40)
        assert w and w > 0, "no call graph: %r" % b.evaluate("document.getElementById('graph').innerText")
        b.screenshot(ARTIFACTS / ("view-%s-graph.png" % kind))
        assert not problems(b), "the page reported problems:\n" + detail


@pytest.mark.parametrize("kind", ["archive", "chrome", "speedscope"])
def test_view_page(recordings, view, kind):
    """The page of each kind of recording; a Chrome trace too is handed to
    speedscope as a speedscope file, the calls with plain names."""
    need_browser()
    v = view(recordings[kind])
    check_page(v, kind, "Importing as speedscope json file")
    assert v.stop() == 0, v.proc.stderr.read()


def test_view_endpoints(recordings, view):
    """Without a browser: what the page fetches, and what it must refuse."""
    v = view(recordings["archive"])
    st, ct, body = v.get("/info.json")
    info = json.loads(body)
    assert info["kind"] == "archive" and info["file"] == "calltree.bpfprof", info
    st, ct, body = v.get("/report.json")
    rep = json.loads(body)
    assert {f["name"]: f["calls"] for f in rep["functions"]} == CALLTREE_COUNTS
    assert not info["profile"].startswith("/"), info  # relative to /TOKEN/
    st, ct, body = v.get("/" + info["profile"])
    prof = json.loads(body)
    assert prof["$schema"].endswith("file-format-schema.json")
    names = {f["name"] for f in prof["shared"]["frames"]}
    assert set(CALLTREE_COUNTS) <= names
    if shutil.which("dot"):
        st, ct, body = v.get("/graph.svg")
        assert ct == "image/svg+xml" and b"<svg" in body and b"leaf_add" in body
    # another origin's name for 127.0.0.1 (DNS rebinding) gets nothing
    with pytest.raises(urllib.error.HTTPError) as e:
        v.get("/report.json", headers={"Host": "attacker.example:%s" % v.url.split(":")[2].strip("/")})
    assert e.value.code == 421
    # nothing outside speedscope's directory
    for bad in ("/speedscope/../../../etc/passwd", "/speedscope/.%2e/x", "/etc/passwd"):
        with pytest.raises(urllib.error.HTTPError) as e:
            v.get(bad)
        assert e.value.code == 404, bad
    # a posted graph needs the page's header (a cross-origin form cannot send it)
    with pytest.raises(urllib.error.HTTPError) as e:
        v.get("/graph.svg", data=b"digraph { a -> b }", method="POST")
    assert e.value.code == 403
    assert v.stop() == 0


def test_view_token_and_origin(recordings, view):
    """Any local user can reach a loopback port: without the URL's token, nothing;
    a page of another site gets nothing either, even with the token."""
    v = view(recordings["archive"])
    m = re.fullmatch(r"(http://127\.0\.0\.1:\d+)/([0-9a-f]{32})/", v.url)
    assert m, v.url
    base, token = m.groups()
    v2 = view(recordings["archive"])
    assert v2.url.split("/")[3] != token  # a new token for each run
    assert v2.stop() == 0

    def status(url, **kw):
        try:
            with urllib.request.urlopen(urllib.request.Request(url, **kw), timeout=30) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    wrong = "%032x" % (int(token, 16) ^ 1)
    for path in ("/", "/report.json", "/info.json", "/" + wrong + "/report.json",
                 "/" + token[:-1] + "/report.json", "/" + token + "x/report.json"):
        st, body = status(base + path)
        assert st == 404 and b"leaf_add" not in body, (path, st)
    # /TOKEN redirects to /TOKEN/ (the page's links are relative)
    st, body = status(base + "/" + token + "/report.json")
    assert st == 200 and b"leaf_add" in body
    st, body = status(base + "/" + token)
    assert st == 200 and b"<html" in body.lower()
    # cross-site: a browser says so, and is refused
    for hdr in ({"Origin": "http://evil.example"}, {"Origin": "null"},
                {"Origin": "http://127.0.0.1:1"},
                {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
                {"Referer": "http://evil.example/page.html"},
                {"Referer": "http://127.0.0.1:1/x"}):
        st, body = status(v.url + "report.json", headers=hdr)
        assert st == 403 and b"leaf_add" not in body, hdr
    # the page's own requests: same origin
    host = base[len("http://"):]
    for hdr in ({"Origin": base}, {"Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"},
                {"Referer": v.url + "#timeline"}, {"Host": host, "Origin": base}):
        st, body = status(v.url + "report.json", headers=hdr)
        assert st == 200 and b"leaf_add" in body, hdr
    assert v.stop() == 0


def test_view_without_root(recordings, view):
    """view needs no privileges: it runs as nobody on a world-readable copy."""
    with nobody_dir("bpfprof-view-") as (d, exe):
        copy = os.path.join(d, "calltree.bpfprof")
        shutil.copyfile(recordings["archive"], copy)
        os.chmod(copy, 0o644)
        v = view(copy, env=dict(os.environ, HOME=d), preexec=as_nobody, exe=exe)
        st, ct, body = v.get("/report.json")
        assert st == 200 and b"leaf_add" in body
        assert v.stop() == 0


def test_view_bad_input(tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    r = run_bpfprof(["view", junk], timeout=20)
    assert r.returncode == 1
    assert r.stderr.strip() == "bpfprof: %s: not a bpfprof archive, Chrome trace (JSON) or speedscope file" % junk
    r = run_bpfprof(["view", tmp_path / "missing.bpfprof"], timeout=20)
    assert r.returncode == 1 and "cannot open" in r.stderr


def test_view_truncated_archive(recordings, tmp_path):
    data = recordings["archive"].read_bytes()
    cut = tmp_path / "cut.bpfprof"
    cut.write_bytes(data[:len(data) // 2])
    r = run_bpfprof(["view", cut], timeout=20)
    assert r.returncode == 1
    assert re.search(r"truncated|corrupt", r.stderr), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_view_open(recordings, tmp_path, view):
    """--open hands the URL to xdg-open (here a stand-in that writes it down)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    opener = bin_dir / "xdg-open"
    opener.write_text("#!/bin/sh\necho \"$BPFPROF_TEST_DISPLAY\" > %s/env\n"
                      "echo \"$1\" > %s/opened\n" % (tmp_path, tmp_path))
    opener.chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ.get("PATH", "/usr/bin:/bin")),
               BPFPROF_TEST_DISPLAY=":42")
    v = view(recordings["archive"], "--open", env=env)
    deadline = time.monotonic() + 20
    while not (tmp_path / "opened").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    # the opener gets a private file that leads to the URL, never the URL
    # itself (an opener's command line is readable by every user)
    opened = (tmp_path / "opened").read_text().strip()
    # the opener runs in the user's environment (DISPLAY, the desktop session...)
    assert (tmp_path / "env").read_text().strip() == ":42"
    assert v.url.split("/")[3] not in opened, opened
    assert opened.startswith("/tmp/bpfprof-view.") and opened.endswith("/open.html"), opened
    st = os.stat(opened)
    assert st.st_mode & 0o077 == 0 and st.st_mode & 0o777 == 0o600
    assert os.stat(os.path.dirname(opened)).st_mode & 0o077 == 0
    assert 'content="0;url=%s"' % v.url in Path(opened).read_text()
    assert v.stop() == 0
