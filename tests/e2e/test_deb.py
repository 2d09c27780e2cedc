# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""make deb: the package holds what make install installs plus the serve unit
and the copyright file; its Depends name the binary's libraries (dpkg-shlibdeps);
the packaged bpfprof, unpacked, runs with the source tree hidden.  (Installing it
with apt on a fresh bookworm root is not tested here: docs/install.md.)"""
import glob
import subprocess

import pytest

from conftest import REPO
from test_install import hidden


@pytest.fixture(scope="module")
def deb():
    r = subprocess.run(["make", "-s", "--no-print-directory", "deb"], cwd=REPO,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    debs = glob.glob(str(REPO / ".output/deb/bpfprof_*.deb"))
    assert len(debs) == 1, debs
    return debs[0]


def test_deb_contents(deb, tmp_path):
    info = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Depends"], capture_output=True,
                          text=True, check=True).stdout
    assert "Package: bpfprof" in info
    for lib in ("libbpf1", "libelf1", "libdw1", "libmicrohttpd12", "libcapstone4", "libc6"):
        assert lib in info, info
    files = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True,
                           check=True).stdout
    for f in ("./usr/bin/bpfprof", "./usr/share/man/man1/bpfprof-record.1.gz",
              "./usr/share/man/man1/bpfprof.1.gz", "./usr/lib/systemd/system/bpfprof-serve@.service",
              "./usr/share/bash-completion/completions/bpfprof",
              "./usr/share/zsh/vendor-completions/_bpfprof", "./usr/include/bpfprof.h",
              "./usr/share/pkgconfig/bpfprof.pc", "./usr/share/bpfprof/speedscope/index.html",
              "./usr/share/doc/bpfprof/copyright"):
        assert f in files, f
    # owned by root, whoever built it
    assert all(" root/root " in l for l in files.splitlines()), files

    x = tmp_path / "x"
    subprocess.run(["dpkg-deb", "-x", deb, str(x)], check=True)
    r = subprocess.run(hidden(x / "usr/bin/bpfprof", "--version"), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("bpfprof "), r.stderr
    r = subprocess.run(["man", "-l", str(x / "usr/share/man/man1/bpfprof-serve.1.gz")],
                       capture_output=True, text=True, timeout=60,
                       env={"MANPAGER": "cat", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0 and "--token-file" in r.stdout.replace("‐", "-"), r.stderr
    unit = (x / "usr/lib/systemd/system/bpfprof-serve@.service").read_text()
    assert "--token-file /etc/bpfprof/token" in unit and "CapabilityBoundingSet=" in unit
    # an instance for a service every systemd has
    inst = tmp_path / "bpfprof-serve@systemd-journald.service"
    inst.write_text(unit)
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", str(inst)],
                       capture_output=True, text=True, timeout=60)
    assert not r.stderr.strip(), r.stderr
