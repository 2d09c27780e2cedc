# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""serve --token-file FILE: only requests with "Authorization: Bearer TOKEN" are
served (as Prometheus' bearer_token_file sends it); the others get 401 and start
nothing; a token file that is not one line of 16-256 printable characters is a
usage error."""
import re

from conftest import run_bpfprof
from test_serve import busy, procs, start_serve, status_of, stop  # noqa: F401 (fixture)

TOKEN = "0123456789abcdef0123456789abcdef"


def test_token_file(procs, tmp_path):
    tf = tmp_path / "token"
    tf.write_text(TOKEN + "\n")
    tf.chmod(0o600)
    b, pid = busy(procs)
    s, base = start_serve(procs, pid, "-q", "--token-file", tf)
    for hdr in ({}, {"Authorization": "Bearer " + TOKEN[:-1] + "0"},
                {"Authorization": "Bearer " + TOKEN + "0"}, {"Authorization": TOKEN},
                {"Authorization": "Basic " + TOKEN}):
        for path in ("/metrics", "/capture?ms=50"):
            st, _, body = status_of(base + path, hdr)
            assert st == 401, (path, hdr, st, body)
    st, _, body = status_of(base + "/metrics", {"Authorization": "Bearer " + TOKEN})
    assert st == 200, body
    # the refused captures never started
    assert re.search(rb"^bpfprof_captures_total 0$", body, re.M), body[-300:]
    assert stop(s) == 0


def test_bad_token_file(tmp_path):
    for content in ("short\n", "has a space in it, long enough\n", ""):
        tf = tmp_path / "token"
        tf.write_text(content)
        r = run_bpfprof(["serve", "--pid", "1", "--token-file", tf], timeout=20)
        assert r.returncode == 2 and "--token-file" in r.stderr, r.stderr
    r = run_bpfprof(["serve", "--pid", "1", "--token-file", tmp_path / "missing"], timeout=20)
    assert r.returncode == 2 and "cannot read --token-file" in r.stderr, r.stderr
