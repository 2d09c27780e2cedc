# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Options as data (user/cmd/options.h): for every command, --help, the man page
(bpfprof --man DIR) and the parser know the same options, each once; the man
pages render without groff warnings."""
import re
import subprocess

import pytest

from conftest import BPFPROF


def run(*args, cwd=None):
    return subprocess.run([str(BPFPROF), *args], capture_output=True, text=True, timeout=60,
                          cwd=cwd)


def commands():
    r = run("--list-options")
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def table(cmd):
    """(long, short, arg) of each row of cmd's tables, from --list-options=CMD."""
    r = run("--list-options=" + cmd)
    assert r.returncode == 0, r.stderr
    rows = []
    for line in r.stdout.splitlines():
        name, short, arg, _values = line.split("\t")
        rows.append((name, None if short == "-" else short, None if arg == "-" else arg))
    return rows


def help_options(cmd):
    """The options --help lists: the lines "  -x, --name ..." and "      --name ..."."""
    r = run(cmd, "--help")
    assert r.returncode == 0, r.stderr
    text = r.stdout.split("\noutput formats:\n")[0]
    return [(m.group(2), m.group(1))
            for m in re.finditer(r"^  (?:(-\w), |    )(--[\w-]+)", text, re.M)]


def man_options(page):
    """The options of a man page's OPTIONS section (".TP" items)."""
    text = page.split(".SH OPTIONS\n")[1].split("\n.SH ")[0]
    out = []
    for m in re.finditer(r"^\.TP\n(?:\\fB\\-(\w)\\fR, )?\\fB((?:\\-|[\w])+)\\fR", text, re.M):
        out.append((m.group(2).replace("\\-", "-"), "-" + m.group(1) if m.group(1) else None))
    return out


@pytest.fixture(scope="module")
def man_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("man")
    r = run("--man", str(d))
    assert r.returncode == 0, r.stderr
    return d


def test_every_command_has_a_page(man_dir):
    cmds = commands()
    assert set(cmds) >= {"record", "attach", "list", "report", "convert", "diff", "merge",
                         "view", "serve"}, cmds
    pages = {p.name for p in man_dir.iterdir()}
    assert pages == {"bpfprof.1"} | {"bpfprof-%s.1" % c for c in cmds}, pages
    overview = (man_dir / "bpfprof.1").read_text()
    for c in cmds:
        assert "\\fBbpfprof\\-%s\\fR(1)" % c in overview, c


@pytest.mark.parametrize("cmd", ["record", "attach", "list", "report", "convert", "diff",
                                 "merge", "view", "serve"])
def test_help_man_and_parser_agree(cmd, man_dir, tmp_path):
    rows = table(cmd)
    names = [n for n, _, _ in rows]
    shorts = [s for _, s, _ in rows if s]
    # each option once in the command's tables: one long name, one short letter
    assert len(names) == len(set(names)), names
    assert len(shorts) == len(set(shorts)), shorts
    expect = sorted((n, s) for n, s, _ in rows)
    assert sorted(help_options(cmd)) == expect
    assert sorted(man_options((man_dir / ("bpfprof-%s.1" % cmd)).read_text())) == expect

    # the parser: every listed option is known (a missing value or a later usage
    # error, never "unknown option"), and one not listed is not
    for name, short, arg in rows:
        for spelling in filter(None, (name, short)):
            r = run(cmd, spelling, cwd=tmp_path)
            assert "unknown option" not in r.stderr, (cmd, spelling, r.stderr)
            if spelling in ("--help", "-h"):
                assert r.returncode == 0 and r.stdout.startswith("usage: bpfprof " + cmd)
            elif arg and not arg.startswith("[="):
                # given last, without the value it needs
                assert r.returncode == 2 and "'%s' needs a value" % spelling in r.stderr, \
                    (cmd, spelling, r.stderr)
    r = run(cmd, "--no-such-option", cwd=tmp_path)
    assert r.returncode == 2 and "unknown option '--no-such-option'" in r.stderr, r.stderr
    for letter in "xyzYZ":
        if "-" + letter not in shorts:
            r = run(cmd, "-" + letter, cwd=tmp_path)
            assert r.returncode == 2 and "unknown option '-%s'" % letter in r.stderr, r.stderr
            break


def test_man_pages_render(man_dir):
    for page in sorted(man_dir.iterdir()):
        r = subprocess.run(["groff", "-man", "-ww", "-z", str(page)], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0 and not r.stderr, (page.name, r.stderr)
        r = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True,
                           timeout=60, env={"MANPAGER": "cat", "PATH": "/usr/bin:/bin",
                                            "MANWIDTH": "80"})
        assert r.returncode == 0, (page.name, r.stderr)
        assert "OPTIONS" in r.stdout and "SEE ALSO" in r.stdout, page.name


def test_global_options(man_dir):
    """bpfprof's own options (before the command): --help, bpfprof(1) and the parser."""
    r = run("--help")
    assert r.returncode == 0, r.stderr
    text = r.stdout.split("global options:\n")[1]
    helped = sorted((m.group(2), m.group(1))
                    for m in re.finditer(r"^  (?:(-\w), |    )(--[\w-]+)", text, re.M))
    page = (man_dir / "bpfprof.1").read_text()
    page = page.replace(".SH GLOBAL OPTIONS\n", ".SH OPTIONS\n")
    assert sorted(man_options(page)) == helped
    assert ("--version", None) in helped and ("--verbose", "-v") in helped
    for name, short in helped:
        for spelling in filter(None, (name, short)):
            r = run(spelling, "--version")
            assert "unknown option" not in r.stderr, (spelling, r.stderr)
    r = run("--no-such-option")
    assert r.returncode == 2 and "unknown option '--no-such-option'" in r.stderr, r.stderr


def test_help_percent_signs(man_dir):
    """A row's help is a format ("%s": the command's default, "%%": a percent sign):
    a bare "0.5% of" in diff's --all-paths printed "0.52...f the traced time"."""
    r = run("diff", "--help")
    assert r.returncode == 0, r.stderr
    assert "less than\n" + " " * 25 + "0.5% of the traced time\n" in r.stdout, r.stdout
    assert "0.5% of the traced time" in (man_dir / "bpfprof-diff.1").read_text()
    for cmd in commands():
        text = run(cmd, "--help").stdout
        # every percent sign a figure's: "2%", "0.5%" (none doubled, none eaten)
        assert text.count("%") == len(re.findall(r"\d%", text)), (cmd, text)
