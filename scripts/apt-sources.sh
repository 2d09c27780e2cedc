# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Sourced by scripts/setup.sh and scripts/fresh-check.sh: what the machine's
# own apt sources say, so that bpfprof never names a mirror itself.
#
#   apt_suite_uri SUITE [COMPONENT]
#     prints the first URI of an enabled "deb" entry for SUITE with COMPONENT
#     (default main), read from sources.list, sources.list.d/*.list (one-line
#     format) and sources.list.d/*.sources (deb822); prints nothing if none.
#     APT_ETC (default /etc/apt) is where the sources are read (tests).

apt_suite_uri() {
	local suite=$1 comp=${2:-main} etc=${APT_ETC:-/etc/apt} f
	local -a files=()

	[ -f "$etc/sources.list" ] && files+=("$etc/sources.list")
	for f in "$etc"/sources.list.d/*.list; do
		[ -f "$f" ] && files+=("$f")
	done
	if [ ${#files[@]} -gt 0 ]; then
		# deb [opt=v ...] URI SUITE COMPONENT...   (options may hold spaces inside [])
		awk -v suite="$suite" -v comp="$comp" '
			{ sub(/#.*/, "") }
			$1 != "deb" { next }
			{
				line = $0
				sub(/^[ \t]*deb[ \t]+/, "", line)
				if (line ~ /^\[/) {
					if (!sub(/^\[[^]]*\][ \t]*/, "", line))
						next
				}
				n = split(line, w, /[ \t]+/)
				if (n < 3 || w[2] != suite)
					next
				for (i = 3; i <= n; i++)
					if (w[i] == comp) { print w[1]; exit }
			}' "${files[@]}" | head -n 1 | grep . && return 0
	fi
	for f in "$etc"/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# deb822: paragraphs of "Field: value" (continued on indented lines),
		# separated by blank lines; Types, URIs, Suites, Components, Enabled
		awk -v suite="$suite" -v comp="$comp" '
			function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
			function words(s, arr) { return split(trim(s), arr, /[ \t]+/) }
			function has(list, x,   a, n, i) {
				n = words(list, a)
				for (i = 1; i <= n; i++)
					if (a[i] == x)
						return 1
				return 0
			}
			function flush(   u, n) {
				if (has(f["types"], "deb") && has(f["suites"], suite) &&
				    has(f["components"], comp) && tolower(f["enabled"]) != "no") {
					n = words(f["uris"], u)
					if (n >= 1 && u[1] != "") { print u[1]; found = 1; exit }
				}
				delete f
				key = ""
			}
			/^#/ { next }
			/^[ \t]*$/ { flush(); next }
			/^[ \t]/ { if (key != "") f[key] = f[key] " " trim($0); next }
			{
				i = index($0, ":")
				if (!i) next
				key = tolower(substr($0, 1, i - 1))
				f[key] = trim(substr($0, i + 1))
			}
			END { if (!found) flush() }' "$f" | head -n 1 | grep . && return 0
	done
	return 1
}
