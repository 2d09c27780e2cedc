#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The layer rule, checked (make check-layers; run by make unit and make test).
#
# User space is one folder per layer, and a layer uses only the layers below
# it (docs/how-it-works.md):
#
#   cmd → capture, web → cost → cpython → probes → target
#       → report, exporters → archive, decode → symbols → model → base
#
# capture/ is the live pipeline; below it, what tracing is made of: the
# cost model (cost/), CPython support (cpython/), the BPF objects' loaders
# (probes/) and the processes that control the targets (target/).  web and
# the tracing layers never use each other.  Layers on one step (capture and
# web, report and exporters, archive and decode) do not use each other.  The
# matrix below is that chain written out: each folder and the folders it may
# use; a new folder needs its row.
# Two folders are not layers, and only the rows that name them may use them:
# bpf/ (the records the BPF programs write, bpf/events.h) and skel/ (the
# generated BPF skeletons, for the BPF objects' loaders and the keeper that
# holds their maps).
#
# Checked, for every file of user/<layer>/ and exporters/:
#   - each #include "folder/x.h" names a folder its row allows;
#   - a private header (a folder's internal.h; no other name) is included
#     only from its own folder;
#   - the record format (BP_REC_*, struct bp_rec_*: bpf/events.h) is read in
#     decode/ alone; the others get what they need from it through decode/
#     (decode/hold.h for the records that hold a process).  One exception:
#     probes/ reads the count of the batches map's values (bp_rec_batch).
#   - with -o OUTPUT (the build's object folder): each symbol an object uses
#     from another folder's object is defined in a folder its row allows
#     (nm), so a call or a table entry cannot go upward either.
#
# usage: scripts/check-layers.sh [-C DIR] [-o OUTPUT]
# Prints each arrow that breaks the rule and exits 1; silent and 0 when none.
set -uo pipefail

declare -A MAY=(
	[base]=""
	[model]="base"
	[symbols]="model base bpf"
	[decode]="symbols model base bpf"
	[archive]="symbols model base"
	[exporters]="archive decode symbols model base"
	[report]="archive decode symbols model base"
	[target]="symbols model base bpf skel"
	[probes]="target decode symbols model base bpf skel"
	[cpython]="probes symbols model base bpf"
	[cost]="cpython probes decode symbols model base bpf"
	[capture]="cost cpython probes target report exporters archive decode symbols model base bpf"
	[web]="report exporters archive decode symbols model base"
	[cmd]="capture cost cpython probes target web report exporters archive decode symbols model base"
)

dir=. objs=
while getopts "C:o:" opt; do
	case $opt in
	C) dir=$OPTARG ;;
	o) objs=$OPTARG ;;
	*) echo "usage: $0 [-C DIR] [-o OUTPUT]" >&2; exit 2 ;;
	esac
done
cd "$dir" || exit 2

# The matrix as "from to" pairs, for awk; a folder may always use itself.
pairs() {
	local from to
	for from in "${!MAY[@]}"; do
		echo "$from $from"
		for to in ${MAY[$from]}; do
			echo "$from $to"
		done
	done
}

files=$(ls user/*/*.[ch] exporters/*.[ch] 2>/dev/null)
[ -n "$files" ] || { echo "check-layers: no sources under $dir" >&2; exit 2; }

# The folder of a path is the name before its last slash:
# user/<layer>/x.c -> layer, exporters/x.c -> exporters, .output/user/base/log.o -> base.
out=$(pairs | awk '
	function folder(p) { sub(/\/[^\/]*$/, "", p); sub(/.*\//, "", p); return p }
	FNR == NR { may[$1 " " $2] = 1; row[$1] = 1; next }
	FNR == 1 && !(folder(FILENAME) in row) {
		print FILENAME ": folder \047" folder(FILENAME) "\047 has no row in the layer matrix"
	}
	FNR == 1 && FILENAME ~ /_internal\.h$/ {
		print FILENAME ": a private header is named internal.h, one per folder"
	}
	match($0, /^[ \t]*#[ \t]*include[ \t]*"[^"\/]*\/[^"]*"/) {
		inc = substr($0, RSTART, RLENGTH); sub(/^[^"]*"/, "", inc); sub(/"$/, "", inc)
		from = folder(FILENAME); to = inc; sub(/\/.*/, "", to)
		if (to == from)
			next
		if (inc ~ /(^|\/|_)internal\.h$/)
			print FILENAME ":" FNR ": includes " inc ", private to " to "/"
		else if (!((from " " to) in may))
			print FILENAME ":" FNR ": " from " may not include " inc
	}' - $files)

# The record format outside decode/ (comments aside).
out+=$(printf '\n'; awk '
	function folder(p) { sub(/\/[^\/]*$/, "", p); sub(/.*\//, "", p); return p }
	/^[ \t]*(\/\*|\*|\/\/)/ { next }
	/BP_REC_|bp_rec_/ {
		f = folder(FILENAME)
		if (f == "decode" || (f == "probes" && $0 ~ /bp_rec_batch/ && $0 !~ /BP_REC_/))
			next
		print FILENAME ":" FNR ": " f " reads the record format (decode/ alone does)"
	}' $files)

# Link arrows: each global symbol an object uses, and the folder that defines it.
if [ -n "$objs" ]; then
	o=$(ls "$objs"/user/*/*.o "$objs"/exporters/*.o 2>/dev/null)
	[ -n "$o" ] || { echo "check-layers: no objects under $objs" >&2; exit 2; }
	out+=$(printf '\n'; { pairs | sed 's/^/P /'
		nm -A --defined-only -g $o | sed 's/^/D /'
		nm -A -u $o | sed 's/^/U /'; } | awk '
	function folder(p) { sub(/:.*/, "", p); sub(/\/[^\/]*$/, "", p); sub(/.*\//, "", p); return p }
	$1 == "P" { may[$2 " " $3] = 1; next }
	$1 == "D" && NF == 4 { def[$4] = folder($2); next }
	$1 == "U" { use[++n] = $2; sym[n] = $NF }
	END {
		for (i = 1; i <= n; i++) {
			if (!(sym[i] in def))
				continue
			from = folder(use[i]); to = def[sym[i]]
			if (!((from " " to) in may)) {
				f = use[i]; sub(/:.*/, "", f)
				print f ": " from " may not use " sym[i] ", defined in " to "/"
			}
		}
	}')
fi

out=$(printf '%s\n' "$out" | sed '/^$/d')
if [ -n "$out" ]; then
	printf 'check-layers: %s\n' "$out" | sed '2,$s/^/check-layers: /' >&2
	echo "check-layers: layers use only the layers below them: see the matrix in scripts/check-layers.sh" >&2
	exit 1
fi
exit 0
