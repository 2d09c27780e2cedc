#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Seeds of the fuzz targets, made from real files: OUT/seeds_<target>/ for
# each target named.  Whole binaries where they are small; for big ones, only
# the sections the target reads (objcopy --only-section), so the seeds stay
# under the fuzzers' -max_len and mutations land in the bytes that matter.
set -euo pipefail
out=$1
shift
progs=tests/progs
libdir=/usr/lib/$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)

# only SECTIONS... of file $1 into $2 (skipped when the file has none of them)
sections() {
	local src=$1 dst=$2 args=()
	shift 2
	for s in "$@"; do
		args+=(--only-section="$s")
	done
	[ -r "$src" ] && objcopy "${args[@]}" "$src" "$dst" 2>/dev/null || rm -f "$dst"
}

for t in "$@"; do
	d=$out/seeds_$t
	rm -rf "$d"
	mkdir -p "$d"
	case $t in
	export)
		cp tests/fuzz/corpus_archive/* "$d/"
		;;
	elfsym)
		cp $progs/calltree $progs/nosyms $progs/ifunc "$d/"
		;;
	usdt)
		cp $progs/annotate "$d/"
		sections $progs/annotate "$d/annotate.notes" .note.stapsdt .stapsdt.base
		sections $progs/coldlabels "$d/coldlabels.notes" .note.stapsdt .stapsdt.base
		sections "$libdir/libc.so.6" "$d/libc.notes" .note.stapsdt .stapsdt.base
		sections "$libdir/libstdc++.so.6" "$d/libstdc++.notes" .note.stapsdt .stapsdt.base
		for py in /usr/bin/python3.*; do
			case $py in *-config) continue ;; esac
			sections "$py" "$d/$(basename "$py").notes" .note.stapsdt .stapsdt.base
			break
		done
		;;
	esac
done
