#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The Debian package on a fresh bookworm: `apt install ./bpfprof_*.deb` in a
# debootstrap'ed root (fresh-check.sh's base.tar, made when missing), with
# bookworm-backports in its sources for libbpf1 (apt resolving it), then
# `bpfprof record` of a test program there, then `apt remove --purge`, after
# which none of the package's files may be left.
#   scripts/deb-check.sh DEB [PROGRAM]     (root; PROGRAM default tests/progs/calltree)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/apt-sources.sh"
deb=$(realpath "${1:?usage: deb-check.sh DEB [PROGRAM]}")
prog=$(realpath "${2:-$here/tests/progs/calltree}")
work=/var/tmp/bpfprof-fresh
base=$work/base.tar
[ "$(id -u)" = 0 ] || { echo "deb-check: must run as root" >&2; exit 1; }
if [ ! -s "$base" ]; then	# fresh-check.sh makes the base and keeps it
	bash "$here/scripts/fresh-check.sh" --steps "" >/dev/null
fi
mirror=$(apt_suite_uri bookworm main)
root=$(mktemp -d "$work/deb.XXXXXX")
chmod 755 "$root"
log=$root.log
: >"$log"
cleanup() {
	for m in "$root/dev" "$root/sys" "$root/proc"; do
		umount -R "$m" 2>/dev/null || umount -R -l "$m" 2>/dev/null || true
	done
	grep -q " $root/" /proc/mounts || rm -rf --one-file-system "$root"
}
trap cleanup EXIT
tar -C "$root" -xf "$base"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
for m in sys dev; do
	mount --rbind "/$m" "$root/$m" && mount --make-rslave "$root/$m"
done
echo "deb $mirror bookworm-backports main" >"$root/etc/apt/sources.list.d/backports.list"
cp "$deb" "$root/tmp/" && cp "$prog" "$root/tmp/prog"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
step() {	# step NAME COMMAND...
	local what=$1
	shift
	echo "== $what: $*" >>"$log"
	if in_root /bin/sh -c "$*" >>"$log" 2>&1; then
		echo "deb-check: $what ok"
	else
		echo "deb-check: $what FAILED (log $log)" >&2
		tail -n 30 "$log" >&2
		trap - EXIT; cleanup; exit 1
	fi
}
name=$(basename "$deb")
step "apt install ./$name" "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q -t bookworm-backports ./tmp/$name"
step "bpfprof --version" "bpfprof --version"
step "bpfprof record" "cd /tmp && bpfprof record -o /tmp/t.json -- /tmp/prog && test -s /tmp/t.json"
step "man bpfprof-record" "test -s /usr/share/man/man1/bpfprof-record.1.gz"
in_root dpkg -L bpfprof >"$root/tmp/files"
step "apt remove --purge" "DEBIAN_FRONTEND=noninteractive apt-get remove --purge -y -q bpfprof"
left=$(while read -r f; do [ -e "$root$f" ] && [ ! -d "$root$f" ] && echo "$f"; done <"$root/tmp/files"; \
	[ -e "$root/usr/share/bpfprof" ] && echo /usr/share/bpfprof; [ -e "$root/etc/bpfprof" ] && echo /etc/bpfprof; true)
if [ -n "$left" ]; then
	echo "deb-check: left behind after apt remove: $left" >&2
	exit 1
fi
echo "deb-check: nothing left after apt remove"
