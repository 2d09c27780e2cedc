# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Debug files a local user controls, read by a root bpfprof (issue 27, items
3, 4 and 11).

A user without privileges builds a stripped program in a directory of its
own and shapes what bpfprof, as root, will read to name its functions: the
file its .gnu_debuglink names (sparse and huge, or truncated and regrown
while it is read), its MiniDebugInfo (an xz stream that expands hugely, or
that asks for a huge dictionary), or its build-id (another file's).  Root
then runs `bpfprof list` on it, as an administrator looking at a user's
process would: each must end in a warning and the names of no debug source
(FILE+0xADDR), never a SIGBUS, gigabytes of memory, or names borrowed by
another file.
"""

import grp
import lzma
import os
import pwd
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import zlib

import pytest

from conftest import BPFPROF, PROGS, REPO, SANITIZED, TIMEOUT

USER = "bpfprof-t27"
SRC = PROGS / "calltree.c"
# calltree's own functions (its source): the names a debug source gives
FUNCS = {"parse", "leaf_add", "leaf_mul", "compute", "fib", "slow_io", "run", "main"}


@pytest.fixture(scope="module")
def user():
    """(uid, gid) of an unprivileged user made for these tests (kept: other
    runs may use it at the same time)."""
    for tool in ("useradd", "setpriv", "objcopy", "strip", "truncate", "cc", "xz", "/usr/bin/time"):
        if not shutil.which(tool):
            pytest.skip("%s missing" % tool)
    try:
        pwd.getpwnam(USER)
    except KeyError:
        p = subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                            "/usr/sbin/nologin", USER], capture_output=True, text=True)
        assert p.returncode == 0 or "already exists" in p.stderr, p.stderr
    pw = pwd.getpwnam(USER)
    return pw.pw_uid, pw.pw_gid


@pytest.fixture
def home(user):
    """A directory the user owns (not under pytest's tmp_path: 0700, root's)."""
    d = tempfile.mkdtemp(prefix="bpfprof-t27-")
    os.chown(d, *user)
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def as_user(user, *cmd, **kw):
    """cmd run as the user, without groups or capabilities."""
    p = subprocess.run(["setpriv", "--reuid=%d" % user[0], "--regid=%d" % user[1],
                        "--clear-groups", "--inh-caps=-all"] + [str(c) for c in cmd],
                       capture_output=True, text=True, timeout=300, **kw)
    assert p.returncode == 0, "%s\n%s" % (" ".join(map(str, cmd)), p.stderr)
    return p


def user_program(user, home, name, *ldflags):
    """The user's calltree, built with -g and ldflags: (unstripped, stripped) paths."""
    plain = os.path.join(home, name + ".plain")
    prog = os.path.join(home, name)
    # the user's own copy of the source and its header: the clone's may be
    # closed to it (/root is 0700 on Debian)
    src = os.path.join(home, name + ".c")
    for f, to in ((SRC, src), (SRC.parent / "progs.h", os.path.join(home, "progs.h"))):
        shutil.copyfile(f, to)
        os.chmod(to, 0o644)
    as_user(user, "cc", "-O1", "-g", "-fno-inline", *ldflags, src, "-o", plain)
    as_user(user, "cp", plain, prog)
    as_user(user, "strip", prog)
    return plain, prog


def list_as_root(*args):
    """`bpfprof list ARGS` as root: (exit status, signal, stdout, stderr, max
    RSS in KiB).  Run under GNU time: a child of this (big) Python would
    count the parent's memory it was forked from in its own peak."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(mode="r") as rss:
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss.name, str(BPFPROF), "list"] +
                             [str(a) for a in args], cwd=REPO, stdin=subprocess.DEVNULL,
                             stdout=out, stderr=err, start_new_session=True)
        try:
            p.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        out.seek(0)
        err.seek(0)
        lines = rss.read().split()
        m = re.search(r"terminated by signal (\d+)", " ".join(lines))
        sig = int(m.group(1)) if m else (9 if p.returncode < 0 else 0)
        rc = -1 if sig else p.returncode
        return rc, sig, out.read().decode(), err.read().decode(), int(lines[-1]) if lines else 0


def rows(stdout, file):
    """{function: source} of list's rows for `file` (its base name)."""
    lines = stdout.splitlines()
    head = lines[0].split()
    out = {}
    for l in lines[1:]:
        r = dict(zip(head, l.split()))
        if l.startswith("0x") and r["file"] == os.path.basename(file):
            out[r["function"]] = r["source"]
    return out


def test_debuglink_to_a_huge_sparse_file_is_refused(user, home):
    """The CRC of a 3 GiB sparse file was computed over an mmap of it (3 GB
    of resident memory, 13 s of CPU, for each place the link is looked for;
    at exactly 4 GiB, over 0 bytes: crc32() takes a 32-bit length): over
    1 GiB, refused with a warning; the functions are named by their FDEs."""
    plain, prog = user_program(user, home, "huge", "-Wl,--build-id=none")
    dbg = os.path.join(home, "huge.debug")
    as_user(user, "objcopy", "--only-keep-debug", plain, dbg)
    as_user(user, "objcopy", "--add-gnu-debuglink=" + dbg, prog)
    as_user(user, "truncate", "-s", "3G", dbg)
    rc, sig, out, err, rss = list_as_root(prog)
    assert (rc, sig) == (0, 0), err
    assert "huge.debug: a debug file of 3072 MiB, over the 1024 MiB whose CRC is checked: " \
           "not used" in err, err
    names = rows(out, prog)
    assert names and set(names.values()) == {"eh_frame"}, names
    if not SANITIZED:
        assert rss < 512 * 1024, "max RSS %d KiB" % rss


def test_debuglink_file_truncated_while_read(user, home):
    """The user truncates and regrows the debug file while root reads it: an
    mmap'd CRC was a SIGBUS (rc 135).  Read with pread, a file that shrank
    is "changed while read", and its names are not used; never a crash."""
    plain, prog = user_program(user, home, "shrink", "-Wl,--build-id=none")
    dbg = os.path.join(home, "shrink.debug")
    as_user(user, "objcopy", "--only-keep-debug", plain, dbg)
    as_user(user, "objcopy", "--add-gnu-debuglink=" + dbg, prog)
    size = os.path.getsize(dbg)
    # under 1 GiB: read in full, while it changes under the reader
    toggler = subprocess.Popen(
        ["setpriv", "--reuid=%d" % user[0], "--regid=%d" % user[1], "--clear-groups",
         "sh", "-c", 'while :; do truncate -s 900M "$1"; truncate -s %d "$1"; done' % size,
         "sh", dbg], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    try:
        for _ in range(6):
            rc, sig, out, err, _ = list_as_root(prog)
            assert (rc, sig) == (0, 0), "rc %d signal %d\n%s" % (rc, sig, err)
            names = rows(out, prog)
            # the debug file's names (its CRC matched when read whole), or none
            assert names and set(names.values()) <= {"eh_frame", "debuglink"}, names
    finally:
        os.killpg(toggler.pid, signal.SIGKILL)
        toggler.wait()


def xz_stream(lzma2, usize):
    """An .xz file (no check) around raw LZMA2 data decoding to usize bytes."""
    def varint(n):
        b = b""
        while n >= 0x80:
            b += bytes([n & 0x7f | 0x80])
            n >>= 7
        return b + bytes([n])

    def pad4(b):
        return b + b"\0" * (-len(b) % 4)

    flags = b"\0\0"   # check: none
    head = b"\xfd7zXZ\0" + flags + struct.pack("<I", zlib.crc32(flags))
    # 12 bytes ((2 + 1) * 4): no sizes, one filter: LZMA2 (0x21), its one
    # property byte 22 (an 8 MiB dictionary), padding, CRC32
    bh = bytes([2, 0x00, 0x21, 0x01, 22, 0, 0, 0])
    bh += struct.pack("<I", zlib.crc32(bh))
    block = pad4(bh + lzma2)
    index = pad4(b"\0" + varint(1) + varint(len(bh) + len(lzma2)) + varint(usize))
    index += struct.pack("<I", zlib.crc32(index))
    tail = struct.pack("<I", len(index) // 4 - 1) + flags
    foot = struct.pack("<I", zlib.crc32(tail)) + tail + b"YZ"
    return head + block + index + foot


def xz_bomb(mib):
    """An .xz stream of a few KB that decodes to `mib` MiB of zeros: the LZMA2
    chunks of 2 MiB of zeros, which begin with a dictionary reset, repeated."""
    raw = lzma.compress(bytes(2 << 20), format=lzma.FORMAT_RAW,
                        filters=[{"id": lzma.FILTER_LZMA2, "preset": 0}])
    assert raw[-1] == 0 and raw[0] & 0xe0 == 0xe0, raw[:4]   # (the top 3 bits: dictionary reset)
    return xz_stream(raw[:-1] * (mib // 2) + b"\0", mib << 20)


def xz_big_dictionary():
    """An .xz stream of a few bytes whose header asks for a 1.5 GiB dictionary
    (the property byte patched: the data decodes with any dictionary)."""
    raw = lzma.compress(b"not a symbol table", format=lzma.FORMAT_RAW,
                        filters=[{"id": lzma.FILTER_LZMA2, "preset": 0}])
    x = bytearray(xz_stream(raw, 18))
    x[12 + 4] = 37                                    # (2 | 1) << (37 / 2 + 11)
    x[12 + 8:12 + 12] = struct.pack("<I", zlib.crc32(bytes(x[12:12 + 8])))
    return bytes(x)


def test_xz_stream_helpers_are_valid_xz():
    """The crafted streams are well-formed: xz itself decodes them."""
    assert lzma.decompress(xz_bomb(4)) == bytes(4 << 20)
    with pytest.raises(lzma.LZMAError):
        lzma.LZMADecompressor(memlimit=96 << 20).decompress(xz_big_dictionary())
    assert lzma.decompress(xz_big_dictionary()) == b"not a symbol table"


@pytest.mark.parametrize("kind", ["output", "memory"])
def test_minidebuginfo_xz_bomb_refused(user, home, kind):
    """.gnu_debugdata of a few KB that expands to 512 MiB (was: decoded up to
    256 MiB, 637 MB of memory), or that asks for a 1.5 GiB dictionary: refused
    with a warning within the limits (64 MiB of output, 96 MiB of decoder)."""
    _, prog = user_program(user, home, "bomb")
    xz = os.path.join(home, "bomb.xz")
    with open(xz, "wb") as f:
        f.write(xz_bomb(512) if kind == "output" else xz_big_dictionary())
    os.chown(xz, *user)
    as_user(user, "objcopy", "--add-section", ".gnu_debugdata=" + xz, prog)
    rc, sig, out, err, rss = list_as_root(prog)
    assert (rc, sig) == (0, 0), err
    want = "expands past 64 MiB" if kind == "output" else "needs over 96 MiB to decompress"
    assert ".gnu_debugdata of %s %s: not used" % (prog, want) in err, err
    names = rows(out, prog)
    assert names and set(names.values()) == {"eh_frame"}, names
    if not SANITIZED:
        assert rss < 256 * 1024, "max RSS %d KiB" % rss


def test_build_id_of_another_file_lends_it_no_names(user, home):
    """Root's stripped program has no debug source; a user's program carries
    its build-id and a MiniDebugInfo naming a function the user made up.  Read
    first in the same session, the user's names were cached by build-id alone
    and given to root's file (and so would its probe offsets)."""
    bid = "0x" + "27" * 20
    root_dir = tempfile.mkdtemp(prefix="bpfprof-t27-root-")
    try:
        os.chmod(root_dir, 0o755)
        victim = os.path.join(root_dir, "victim")
        subprocess.run(["cc", "-O1", "-g", "-fno-inline", "-Wl,--build-id=" + bid, str(SRC),
                        "-o", victim], check=True)
        subprocess.run(["strip", victim], check=True)
        plain, prog = user_program(user, home, "lender", "-Wl,--build-id=" + bid)
        mini = os.path.join(home, "lender.mini")
        as_user(user, "objcopy", "--only-keep-debug", "--redefine-sym", "fib=planted_by_user",
                plain, mini)
        as_user(user, "xz", "-f", mini)
        as_user(user, "objcopy", "--add-section", ".gnu_debugdata=" + mini + ".xz", prog)
        rc, sig, out, err, _ = list_as_root(prog, "*", victim + ":*")
        assert (rc, sig) == (0, 0), err
        assert "planted_by_user" in rows(out, prog), out      # the user's own file: its names
        names = rows(out, victim)
        assert names and set(names.values()) == {"eh_frame"}, names
        assert "planted_by_user" not in names and not FUNCS & set(names), names
    finally:
        shutil.rmtree(root_dir, ignore_errors=True)
