#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make deb: a Debian binary package of `make install DESTDIR=ROOT PREFIX=/usr`
# (already done by the Makefile), with the serve unit, the copyright file, man
# pages compressed, and Depends computed by dpkg-shlibdeps from the binary's
# libraries (libbpf1 from bookworm-backports on bookworm).
#   scripts/mkdeb.sh ROOT VERSION OUTDIR
set -euo pipefail
root=$(cd "${1:?ROOT}" && pwd) version=${2:?VERSION} out=${3:?OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
arch=$(dpkg --print-architecture)

install -D -m 0644 "$here/packaging/bpfprof-serve@.service" \
	"$root/usr/lib/systemd/system/bpfprof-serve@.service"
install -D -m 0644 "$here/packaging/copyright" "$root/usr/share/doc/bpfprof/copyright"
gzip -9nf "$root"/usr/share/man/man1/*.1
# the pages' source, for `man -l` users: the README and docs/
install -m 0644 "$here/README.md" "$root/usr/share/doc/bpfprof/"
if [ -d "$here/docs" ]; then
	install -d "$root/usr/share/doc/bpfprof/docs"
	install -m 0644 "$here"/docs/*.md "$root/usr/share/doc/bpfprof/docs/"
fi

# Depends: dpkg-shlibdeps wants a debian/control of the package it works for
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debian"
printf 'Source: bpfprof\n\nPackage: bpfprof\nArchitecture: any\n' > "$work/debian/control"
(cd "$work" && dpkg-shlibdeps -O "$root/usr/bin/bpfprof" 2>/dev/null) > "$work/substvars"
depends=$(sed -n 's/^shlibs:Depends=//p' "$work/substvars")
[ -n "$depends" ] || { echo "mkdeb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
mkdir -p "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: bpfprof
Version: $version
Architecture: $arch
Maintainer: bpfprof developers <bpfprof@localhost>
Installed-Size: $size
Depends: $depends
Recommends: graphviz
Suggests: systemtap-sdt-dev
Section: devel
Priority: optional
Homepage: https://localhost/bpfprof
Description: eBPF function tracer and profiler
 bpfprof traces every call of the functions of a program with eBPF uprobes
 (exact counts, call trees, durations), samples stacks on and off CPU, and
 writes an archive or traces for Perfetto, Chrome, speedscope, pprof and
 flame graphs.  report, diff, view (a browser page: timeline, flame graph,
 call graph) and serve (Prometheus metrics of a running service) read them.
CONTROL
# the unit is a template (bpfprof-serve@SERVICE): nothing to enable or start
mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out/bpfprof_${version}_${arch}.deb" >/dev/null
echo "$out/bpfprof_${version}_${arch}.deb"
