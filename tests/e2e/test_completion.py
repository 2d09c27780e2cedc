# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""bash completion (completion/bpfprof.bash), driven in a bash subprocess the way
readline calls it: COMP_WORDS/COMP_CWORD set, the function `complete -p` names
called, COMPREPLY read back."""
import os
import shutil
import shlex
import subprocess

import pytest

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


ZSH_SCRIPT = REPO / "completion" / "_bpfprof"
# compinit finds _bpfprof by its #compdef line; compadd (a builtin only inside
# a completion widget) is stood in for by a function printing what it is given
# that starts with PREFIX, as the widget would offer.
ZSH_DRIVER = r"""
fpath=(%s $fpath)
autoload -U compinit && compinit -u -D
[[ $_comps[bpfprof] == _bpfprof ]] || { print -u2 "not registered: $_comps[bpfprof]"; exit 3; }
compadd() {
	local -a out; local a
	while (($#)); do
		case $1 in
		-a) shift; out+=(${(P)1}) ;;
		--) shift; out+=("$@"); break ;;
		-*) ;;
		*) out+=("$1") ;;
		esac
		shift
	done
	for a in $out; do [[ $a == ${PREFIX}* ]] && print -r -- $a; done
	return 0
}
words=(%s); CURRENT=${#words}; PREFIX=${words[-1]}
_bpfprof
exit 0
"""


def zsh_complete(words):
    """What completion/_bpfprof offers for the last word of `words`, run by zsh -f."""
    if not shutil.which("zsh"):
        pytest.fail("zsh is not installed: bash scripts/setup.sh --test", pytrace=False)
    script = ZSH_DRIVER % (shlex.quote(str(ZSH_SCRIPT.parent)),
                           " ".join(shlex.quote(w) if w else "''" for w in words))
    r = subprocess.run(["zsh", "-f", "-c", script], capture_output=True, text=True, timeout=120,
                       cwd=REPO)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return [w for w in r.stdout.splitlines() if w]


def test_zsh_completion():
    """The zsh completion loads under compinit (registered for bpfprof, no
    error) and offers what the bash one does: commands, a command's options,
    an option's values, from the same tables (bpfprof --list-options)."""
    b = str(BPFPROF)
    assert zsh_complete([b, "rec"]) == ["record"]
    assert sorted(zsh_complete([b, "re"])) == ["record", "report"]
    assert zsh_complete([b, "record", "--form"]) == ["--format"]
    assert zsh_complete([b, "record", "--pi"]) == []
    assert zsh_complete([b, "attach", "--pi"]) == ["--pid"]
    assert sorted(zsh_complete([b, "report", "--format", ""])) == ["csv", "json", "pretty"]
    assert sorted(zsh_complete([b, "record", "--format", ""])) == \
        sorted(complete([b, "record", "--format", ""]))
