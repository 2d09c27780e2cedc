# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What the tests of the tree's checks share (sourced by test_check_layers.sh
# and test_check_size.sh; not a test itself): a copy of the tree to plant
# faults in, and one case of the check on it.
#
# Set CHECK (the script under scripts/) and COPY (what fresh copies) first.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

check() {		# WANT(0|1) WHAT [GREP]: the check on $tmp/tree
	local rc out
	out=$(bash "$root/scripts/$CHECK" -C "$tmp/tree" 2>&1)
	rc=$?
	if [ "$rc" != "$1" ] || { [ -n "${3:-}" ] && ! grep -qF -- "$3" <<<"$out"; }; then
		echo "FAIL ($2): exit $rc, want $1; output:" >&2
		echo "$out" >&2
		fails=$((fails + 1))
	fi
}

fresh() {		# $tmp/tree: a copy of $COPY (paths from the root)
	local p
	rm -rf "$tmp/tree"
	mkdir -p "$tmp/tree"
	for p in $COPY; do
		mkdir -p "$tmp/tree/$(dirname "$p")"
		cp -r "$root/$p" "$tmp/tree/$p"
	done
}
