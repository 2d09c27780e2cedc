# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""bash completion (completion/bpfprof.bash), driven in a bash subprocess the way
readline calls it: COMP_WORDS/COMP_CWORD set, the function `complete -p` names
called, COMPREPLY read back."""
import os
import shlex
import subprocess

from conftest import BPFPROF, REPO, prog_path

SCRIPT = REPO / "completion" / "bpfprof.bash"


def complete(words, cword=None):
    """COMPREPLY for the command line `words`, the cursor on word `cword` (default: the last)."""
    cword = len(words) - 1 if cword is None else cword
    script = """
set -e
source %s
spec=$(complete -p bpfprof)
fn=$(sed -n 's/.*-F \\([^ ]*\\) bpfprof$/\\1/p' <<<"$spec")
[ -n "$fn" ] || { echo "no completion function: $spec" >&2; exit 3; }
COMP_WORDS=(%s)
COMP_CWORD=%d
set +e
"$fn"
printf '%%s\\n' "${COMPREPLY[@]}"
""" % (shlex.quote(str(SCRIPT)), " ".join(shlex.quote(w) for w in words), cword)
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True,
                       text=True, timeout=120, cwd=REPO)
    assert r.returncode == 0, r.stderr
    return [w for w in r.stdout.splitlines() if w]


def test_commands_and_options():
    b = str(BPFPROF)
    assert complete([b, "rec"]) == ["record"]
    assert sorted(complete([b, "re"])) == ["record", "report"]
    assert complete([b, "record", "--form"]) == ["--format"]
    assert complete([b, "attach", "--pi"]) == ["--pid"]
    # record has no --pid (attach's): not offered
    assert complete([b, "record", "--pi"]) == []
    assert complete([b, "diff", "--fail-a"]) == ["--fail-above"]


def test_option_values():
    b = str(BPFPROF)
    listed = subprocess.run([b, "--list-options=record"], capture_output=True, text=True,
                            check=True).stdout
    formats = [l.split("\t")[3] for l in listed.splitlines() if l.startswith("--format\t")]
    assert sorted(complete([b, "record", "--format", ""])) == sorted(formats[0].split())
    assert "perfetto" in formats[0].split()
    assert sorted(complete([b, "report", "--format", ""])) == ["csv", "json", "pretty"]
    assert complete([b, "record", "--stack", "dw"]) == ["dwarf"]
    pids = complete([b, "attach", "-p", str(os.getpid())[:-1]])
    assert str(os.getpid()) in pids, pids


def test_function_names_from_list():
    """-F after `record ... -- PROGRAM`: the functions `bpfprof list PROGRAM` finds;
    calltree.c defines parse, leaf_add, leaf_mul, compute, fib, run, main."""
    b, calltree = str(BPFPROF), str(prog_path("calltree"))
    words = [b, "record", "-F", "", "--", calltree]
    got = set(complete(words, cword=3))
    assert {"parse", "leaf_add", "leaf_mul", "compute", "fib", "run", "main"} <= got, got
    assert complete([b, "record", "-F", "leaf_m", "--", calltree], cword=3) == ["leaf_mul"]
