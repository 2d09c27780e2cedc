#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# scripts/check-size.sh passes on the tree as it is, and fails on a function
# of 121 lines or a .c file of 701 lines planted in a copy of it, while a
# function of 120 lines and a file of 700 pass (make unit).
CHECK=check-size.sh
COPY="user exporters bpf tests/unit"
source "$(dirname "$0")/tree_check.sh"

# a function of N lines, its name's line to its closing brace, as the code writes them
function_of() {		# NAME LINES
	local i
	printf 'static int\n%s(int x)\n{\n' "$1"
	for ((i = 0; i < $2 - 3; i++)); do
		echo "	x++;"
	done
	echo "}"
}

fresh
check 0 "the tree as it is"

fresh
function_of long_one 120 >> "$tmp/tree/exporters/csv.c"
check 0 "a function of 120 lines"

fresh
function_of long_one 121 >> "$tmp/tree/user/base/util.c"
check 1 "a function of 121 lines" 'user/base/util.c:'
check 1 "its name" 'long_one: 121 lines'

fresh
function_of long_bpf 130 >> "$tmp/tree/bpf/common.bpf.h"
check 1 "a function of a BPF header" 'long_bpf: 130 lines'

fresh
for ((i = 0; i < 700; i++)); do echo "/* $i */"; done > "$tmp/tree/user/base/big.c"
check 0 "a file of 700 lines"
echo "/* 700 */" >> "$tmp/tree/user/base/big.c"
check 1 "a file of 701 lines" 'user/base/big.c: 701 lines'

fresh
for ((i = 0; i < 701; i++)); do echo "/* $i */"; done > "$tmp/tree/tests/unit/test_big.c"
check 1 "a unit test file of 701 lines" 'tests/unit/test_big.c: 701 lines'

[ "$fails" = 0 ] && echo "test_check_size: ok"
exit $((fails > 0))
