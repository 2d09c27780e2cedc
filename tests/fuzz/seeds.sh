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
		for f in tests/fuzz/corpus_archive/*; do
			cp "$f" "$d/"
			tests/fuzz/inflate_archive.py "$f" "$d/raw-$(basename "$f")"
		done
		;;
	elfsym)
		cp $progs/calltree $progs/nosyms $progs/ifunc "$d/"
		;;
	debugsyms)
		# a stripped program (names only in .dynsym, functions in .eh_frame),
		# with a debug link, and with MiniDebugInfo as Fedora builds it
		tmp=$(mktemp -d)
		cc -g -O2 -fPIC -shared $progs/stripped/libstripdemo.c -o "$tmp/libstripdemo.so"
		cc -g -O2 $progs/stripped/stripdemo.c -L"$tmp" -lstripdemo -o "$tmp/plain"
		nm --format=posix --defined-only "$tmp/plain" | awk '$2 ~ /[Tt]/ { print $1 }' > "$tmp/keep"
		objcopy --only-keep-debug "$tmp/plain" "$tmp/plain.debug"
		objcopy -S --remove-section .comment --keep-symbols="$tmp/keep" "$tmp/plain.debug" "$tmp/mini"
		xz -f "$tmp/mini"
		strip -o "$tmp/stripped" "$tmp/plain"
		objcopy --add-gnu-debuglink="$tmp/plain.debug" "$tmp/stripped" "$d/debuglink"
		objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/stripped" "$d/minidebuginfo"
		cp $progs/nosyms "$d/"
		rm -rf "$tmp"
		;;
	dwarfinfo)
		cp $progs/calltree $progs/deps "$d/"
		objcopy --only-keep-debug $progs/annotate "$d/annotate.debug"
		;;
	unwind)
		tmp=$(mktemp -d)
		cc -O2 -g0 -fomit-frame-pointer tests/fuzz/mkseed_unwind.c -o "$tmp/mkseed_unwind"
		"$tmp/mkseed_unwind" "$d/four-calls"
		rm -rf "$tmp"
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
