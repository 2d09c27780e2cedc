#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The size rule, checked (make check-size; run by make unit and make test):
#   - no .c file over 700 lines in user/, exporters/, bpf/ and tests/unit/;
#   - no function over 120 lines in user/, exporters/ and bpf/, counted as
#     ctags does, from the line with the function's name to its closing brace.
# A file past the limit is split by concern, a function by meaning (each piece
# a function whose name says what it does), never at an arbitrary line.
#
# A function is found by the layout the code is written in (docs/style):
# its body opens with "{" alone at column 0 and closes with "}" at column 0;
# its name is on the last line before that "{" that starts at column 0.
#
# usage: scripts/check-size.sh [-C DIR]
# Prints each file and function over its limit and exits 1; silent and 0 when none.
set -uo pipefail

MAX_FILE=700
MAX_FUNC=120

dir=.
while getopts "C:" opt; do
	case $opt in
	C) dir=$OPTARG ;;
	*) echo "usage: $0 [-C DIR]" >&2; exit 2 ;;
	esac
done
cd "$dir" || exit 2

code=$(ls user/*/*.c exporters/*.c bpf/*.c bpf/*.h 2>/dev/null)
[ -n "$code" ] || { echo "check-size: no sources under $dir" >&2; exit 2; }
tests=$(ls tests/unit/*.c 2>/dev/null)

out=$(awk -v max_file=$MAX_FILE -v max_func=$MAX_FUNC '
	function end_file() {
		if (file ~ /\.c$/ && lines > max_file)
			printf "%s: %d lines (the limit is %d): split it by concern\n",
			       file, lines, max_file
	}
	FNR == 1 { end_file(); file = FILENAME; lines = 0; head = 0; body = 0
		   code = (FILENAME !~ /^tests\//) }
	{ lines = FNR }
	!code { next }
	/^[A-Za-z_]/ && !body { head = FNR; name = $0 }
	/^\{/ && head { body = head; start = name }
	/^\}/ && body {
		if (FNR - body + 1 > max_func) {
			sub(/\(.*/, "", start); n = split(start, w, /[ \t*]+/)
			printf "%s:%d: %s: %d lines (the limit is %d): split it by meaning\n",
			       FILENAME, body, w[n], FNR - body + 1, max_func
		}
		body = 0; head = 0
	}
	END { end_file() }
' $code $tests)
# awk reports a file at the start of the next one: the last one in END
[ -z "$out" ] && exit 0
echo "$out"
exit 1
