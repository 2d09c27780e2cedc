#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The README's two commands on a fresh Debian bookworm, as a new user runs them:
# a debootstrap'ed root with only git, make, sudo and ca-certificates (and this
# machine's own CA certificates, which its network may need), the repository
# cloned into it, then `make demo` and `make test` run there as root with a bare
# environment (env -i; bash -l sets PATH as a login does), the root as the / of
# a mount namespace of their own (pivot_root, not chroot: paths as on a machine).
#
#   scripts/fresh-check.sh [options]
#     --where root|tmp     clone under /root (mode 0700, the default) or under /tmp
#     --backports-first    first `apt-get install -t bookworm-backports libbpf-dev
#                          bpftool`, as an eBPF user may have done by hand
#     --steps LIST         the commands to run, in order (default: "demo test")
#     --rev REV            the commit to clone (default: HEAD of this repository)
#     --work DIR           where the roots go (default /var/tmp/bpfprof-fresh);
#                          the debootstrap'ed base is kept there as base.tar and
#                          reused; each run gets a new root from it
#     --keep               keep the run's root (default: removed at the end)
#
# The mirror is the one this machine's apt sources name for bookworm main
# (scripts/apt-sources.sh).  Needs root; installs debootstrap when missing.
# Prints one result line per step; exits non-zero when one fails.  A step's
# full output is in the run's log (path printed).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/apt-sources.sh"

where=root backports=0 steps="demo test" rev=HEAD work=/var/tmp/bpfprof-fresh keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--where) where=$2; shift ;;
	--backports-first) backports=1 ;;
	--steps) steps=$2; shift ;;
	--rev) rev=$2; shift ;;
	--work) work=$2; shift ;;
	--keep) keep=1 ;;
	-h|--help) awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	*) echo "fresh-check: unknown option $1 (--help)" >&2; exit 2 ;;
	esac
	shift
done
case $where in
root) clone=/root/bpfprof ;;
tmp) clone=/tmp/bpfprof ;;
*) echo "fresh-check: --where root or tmp" >&2; exit 2 ;;
esac
if [ "$(id -u)" != 0 ]; then
	echo "fresh-check: must run as root (debootstrap, chroot, mounts)" >&2
	exit 1
fi

suite=bookworm
mirror=$(apt_suite_uri "$suite" main) || {
	echo "fresh-check: no '$suite main' entry in this machine's apt sources" >&2
	exit 1
}
commit=$(git -C "$here" rev-parse --verify "$rev^{commit}")

if ! command -v debootstrap >/dev/null; then
	log=$(mktemp)
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >"$log" 2>&1 ||
		{ cat "$log" >&2; rm -f "$log"; exit 1; }
	rm -f "$log"
fi

mkdir -p "$work"
base=$work/base.tar
if [ ! -s "$base" ]; then
	echo "fresh-check: debootstrap $suite (minbase + git make sudo ca-certificates) from $mirror"
	tmp=$(mktemp -d "$work/base.XXXXXX")
	if ! debootstrap --variant=minbase --include=git,make,sudo,ca-certificates \
		"$suite" "$tmp" "$mirror" >"$tmp.log" 2>&1; then
		tail -n 30 "$tmp.log" >&2
		echo "fresh-check: debootstrap failed (log $tmp.log)" >&2
		rm -rf "$tmp"
		exit 1
	fi
	chmod 755 "$tmp"
	tar -C "$tmp" -cf "$base.part" . && mv "$base.part" "$base"
	rm -rf "$tmp" "$tmp.log"
fi

name=$where$([ $backports = 1 ] && echo -bp || true)
root=$(mktemp -d "$work/$name.XXXXXX")
log=$root.log
: >"$log"
mounted=()
cleanup() {
	local m i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		m=${mounted[i]}
		umount -R "$m" 2>/dev/null || umount -R -l "$m" 2>/dev/null || true
	done
	if grep -q " $root/" /proc/mounts; then
		echo "fresh-check: $root still has mounts: left in place" >&2
	elif [ $keep = 0 ]; then
		rm -rf --one-file-system "$root"
	else
		echo "fresh-check: root kept in $root"
	fi
}
trap cleanup EXIT
tar -C "$root" -xf "$base"
# mktemp -d makes a directory 0700, and the base's "./" entry is one too
# (tar -x gives "." the archived mode, after any chmod made before it): as
# /, it would let no user but root reach a file (every test run as nobody
# failed on it: "libbpf.so.1: cannot open shared object file: Permission
# denied")
chmod 755 "$root"

# the machine's network as the host has it: its resolver and its local CAs
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
if compgen -G "/usr/local/share/ca-certificates/*" >/dev/null; then
	cp -r /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
	chroot "$root" update-ca-certificates >>"$log" 2>&1
fi

# the root a mount point, as / is on a machine (unshare --propagation needs it)
mount --bind "$root" "$root"
mounted+=("$root")
# what tracing needs of the kernel: /proc, /sys (its BTF, bpffs, tracefs and
# debugfs mounts come along: rbind), /dev; rslave: nothing goes back to the host
for m in proc sys dev; do
	mkdir -p "$root/$m"
	if [ $m = proc ]; then
		mount -t proc proc "$root/proc"
	else
		mount --rbind "/$m" "$root/$m"
		mount --make-rslave "$root/$m"
	fi
	mounted+=("$root/$m")
done
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm" && mounted+=("$root/dev/shm")

# the clone, as a user makes it (git clone of this repository at $commit)
git clone -q --no-local "$here" "$root$clone" >>"$log" 2>&1
git -C "$root$clone" checkout -q --detach "$commit" >>"$log" 2>&1
chmod 700 "$root/root"

# in_root COMMAND...: COMMAND with the root as the / of a mount namespace of
# its own (pivot_root), not a chroot: a process there that makes another mount
# namespace (unshare -m) sees its files under the same paths, as on a machine
# (under a chroot, the kernel names them by the host's paths)
in_root() {
	unshare --mount --propagation private -- /bin/sh -c '
		cd "$1" && mkdir -p .host && pivot_root . .host || exit 125
		shift
		umount -l /.host && rmdir /.host || exit 125
		exec "$@"' in_root "$root" "$@"
}

run() {	# run NAME COMMAND: COMMAND in the root, bare environment, timed, logged
	local what=$1 cmd=$2 t0 rc
	t0=$(date +%s)
	echo "== $what: $cmd" >>"$log"
	set +e
	in_root /usr/bin/env -i HOME=/root TERM=dumb /bin/bash -l -c "$cmd" >>"$log" 2>&1
	rc=$?
	set -e
	printf 'fresh-check: %-28s %s in %ds\n' "$what" "$([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)")" \
		$(($(date +%s) - t0))
	return $rc
}

echo "fresh-check: $suite from $mirror; clone $clone at ${commit:0:12}$([ $backports = 1 ] && echo ", backports first" || true); log $log"
rc=0
if [ $backports = 1 ]; then
	echo "deb $mirror $suite-backports main" >"$root/etc/apt/sources.list.d/backports.list"
	run "backports libbpf-dev bpftool" \
		"apt-get update -q && apt-get install -y -q -t $suite-backports libbpf-dev bpftool" || rc=1
fi
for s in $steps; do
	[ $rc = 0 ] || break
	run "make $s ($where)" "cd $clone && make $s" || rc=1
done
if [ $rc != 0 ]; then
	echo "fresh-check: last lines of $log:" >&2
	tail -n 40 "$log" >&2
fi
exit $rc
