# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""make install DESTDIR=D PREFIX=/usr, then the installed bpfprof with the source
tree hidden (a tmpfs over it, in a mount namespace of its own): --version,
record of a test program, and view of the recording serving its timeline from
D/usr/share/bpfprof/speedscope; the man page renders; completion completes;
make uninstall leaves no file behind."""
import json
import shutil
import subprocess
import urllib.request

import pytest

from conftest import REPO, prog_path
from test_record import CALLTREE_COUNTS

SPEEDSCOPE = REPO / "tests" / "clients" / "node_modules" / "speedscope" / "dist" / "release"


def hidden(*cmd):
    """cmd with the source tree hidden under an empty tmpfs."""
    script = 'mount -t tmpfs bpfprof-hidden "$1" && shift && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
            str(REPO)] + [str(c) for c in cmd]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    if not (SPEEDSCOPE / "index.html").exists():
        pytest.skip("speedscope not installed in tests/clients: run scripts/setup.sh")
    dest = tmp_path_factory.mktemp("destdir")
    r = subprocess.run(["make", "-s", "--no-print-directory", "install", "DESTDIR=%s" % dest,
                        "PREFIX=/usr"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    yield dest
    r = subprocess.run(["make", "-s", "--no-print-directory", "uninstall",
                        "DESTDIR=%s" % dest, "PREFIX=/usr"], cwd=REPO, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    left = [p for p in dest.rglob("*") if not p.is_dir()]
    assert not left, left


def test_installed_files(installed):
    usr = installed / "usr"
    for f in ("bin/bpfprof", "share/man/man1/bpfprof.1", "share/man/man1/bpfprof-record.1",
              "share/bash-completion/completions/bpfprof", "share/zsh/vendor-completions/_bpfprof",
              "include/bpfprof.h",
              "share/pkgconfig/bpfprof.pc", "share/bpfprof/speedscope/index.html",
              "share/bpfprof/speedscope/LICENSE"):
        assert (usr / f).is_file(), f
    pc = (usr / "share/pkgconfig/bpfprof.pc").read_text()
    assert "prefix=/usr\n" in pc and "Cflags: -I${includedir}" in pc
    r = subprocess.run(["man", "-l", str(usr / "share/man/man1/bpfprof-record.1")],
                       capture_output=True, text=True, timeout=60,
                       env={"MANPAGER": "cat", "PATH": "/usr/bin:/bin", "MANWIDTH": "80"})
    assert r.returncode == 0 and "bpfprof-record - run a command" in r.stdout, r.stderr


def test_installed_runs_without_the_tree(installed, tmp_path):
    exe = installed / "usr/bin/bpfprof"
    calltree = tmp_path / "calltree"
    shutil.copy(prog_path("calltree"), calltree)
    r = subprocess.run(hidden("ls", "-A", REPO), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "", (r.stdout, r.stderr)  # the tree is hidden

    r = subprocess.run(hidden(exe, "--version"), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("bpfprof "), r.stderr
    out = tmp_path / "calltree.bpfprof"
    r = subprocess.run(hidden(exe, "record", "-q", "-o", out, "--", calltree),
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(hidden(exe, "report", "--format", "json", out), capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    calls = {f["name"]: f["calls"] for f in json.loads(r.stdout)["functions"]}
    assert calls == CALLTREE_COUNTS

    v = subprocess.Popen(hidden(exe, "view", out), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                         cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    try:
        url = v.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), (url, v.stderr.read() if v.poll() else "")

        def get(path):
            with urllib.request.urlopen(url.rstrip("/") + path, timeout=60) as resp:
                return resp.read()
        # speedscope, from the installed share/bpfprof
        assert get("/speedscope/index.html") == \
            (installed / "usr/share/bpfprof/speedscope/index.html").read_bytes()
        info = json.loads(get("/info.json"))
        prof = json.loads(get("/" + info["profile"]))
        assert set(CALLTREE_COUNTS) <= {f["name"] for f in prof["shared"]["frames"]}
    finally:
        v.send_signal(2)
        try:
            rc = v.wait(timeout=30)
        except subprocess.TimeoutExpired:
            v.kill()
            rc = v.wait()
    assert rc == 0, v.stderr.read()


def test_installed_completion(installed):
    usr = installed / "usr"
    script = ('source %s; COMP_WORDS=(%s rec); COMP_CWORD=1; _bpfprof; echo "${COMPREPLY[*]}"'
              % (usr / "share/bash-completion/completions/bpfprof", usr / "bin/bpfprof"))
    r = subprocess.run(hidden("bash", "--norc", "--noprofile", "-c", script),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.split() == ["record"], (r.stdout, r.stderr)
