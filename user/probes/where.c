// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Where the CPU time went, by file, for the thin-executable hint (where.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "where.h"
#include "trace.h"
#include "base/log.h"
#include "base/util.h"
#include "skel/where.skel.h"
#include "object.h"

struct where {
	struct where_bpf *skel;
	struct probe_obj po;
};

/* As the BPF side's (bpf/where.bpf.c). */
struct where_key {
	uint64_t ino;
	uint32_t dev;
	uint32_t pad;
};

struct where_val {
	uint64_t samples;
	char name[56];
};

struct where_file {
	struct where_key k;
	struct where_val v;
};

int where__new(const struct shared_maps *maps, struct where **out)
{
	struct where *w = xcalloc(1, sizeof(*w));
	int err;

	w->skel = where_bpf__open();
	err = probe_obj__opened(&w->po, "where", true, w->skel);
	if (!err)
		err = probe_obj__load_skel(&w->po, w->skel, maps);
	if (!err)
		err = probe_obj__attach_cpus(&w->po, w->skel->progs.where_sample, WHERE_HZ);
	if (err) {
		p_dbg("no thin-executable hint: cannot count where the time goes: %s",
		      strerror(-err));
		where__free(w);
		return err;
	}
	*out = w;
	return 0;
}

static int by_samples(const void *a, const void *b)
{
	const struct where_file *x = a, *y = b;

	return x->v.samples < y->v.samples ? 1 : x->v.samples > y->v.samples ? -1 :
	       strcmp(x->v.name, y->v.name);
}

/* The C runtime and the loader: where every program spends some time, nothing to trace. */
static bool runtime_file(const char *name)
{
	static const char *const rt[] = { "libc.so", "ld-linux", "libm.so", "libpthread.so",
					  "libdl.so", "librt.so", "ld64.so" };
	size_t i;

	for (i = 0; i < sizeof(rt) / sizeof(*rt); i++)
		if (!strncmp(name, rt[i], strlen(rt[i])))
			return true;
	return false;
}

/* Is a file of this name traced already (one of the session's modules with functions)? */
static bool traced_file(const struct bp_session *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nfuncs; i++) {
		const char *m = session__func_module(s, (uint32_t)i), *b;

		if (!m)
			continue;
		b = strrchr(m, '/');
		if (!strcmp(b ? b + 1 : m, name))
			return true;
	}
	return false;
}

void where__hint(struct where *w, const char *exe, const struct bp_session *s)
{
	struct where_file *f = NULL;
	struct where_key k, next, *prev = NULL;
	uint64_t total, own = 0;
	char libs[512] = "", flags[256] = "", real[PATH_MAX];
	const char *base;
	size_t n = 0, cap = 0, i, len = 0, flen = 0, nflags = 0;
	struct stat st;
	int fd;

	if (!w || !exe || stat(exe, &st))
		return;
	if (!realpath(exe, real))
		snprintf(real, sizeof(real), "%s", exe);
	base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	total = __atomic_load_n(&w->skel->bss->where_anon, __ATOMIC_RELAXED);
	fd = bpf_map__fd(w->skel->maps.where_files);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			f = xrealloc(f, cap * sizeof(*f));
		}
		f[n].k = k;
		if (bpf_map_lookup_elem(fd, &k, &f[n].v))
			continue;
		f[n].v.name[sizeof(f[n].v.name) - 1] = '\0';
		total += f[n].v.samples;
		if (f[n].k.ino == st.st_ino && f[n].k.dev == kdev_of(st.st_dev))
			own += f[n].v.samples;
		else
			n++;
	}
	if (total < WHERE_MIN_SAMPLES || own >= WHERE_THIN * total) {
		free(f);
		return;
	}
	qsort(f, n, sizeof(*f), by_samples);
	for (i = 0; i < n && f[i].v.samples >= WHERE_NAMED * total; i++) {
		const char *name = f[i].v.name;

		if (len < sizeof(libs) - 1)
			len += snprintf(libs + len, sizeof(libs) - len, "%s%s (%.0f%%)",
					len ? ", " : "", name, 100.0 * f[i].v.samples / total);
		if (runtime_file(name) || traced_file(s, name) || nflags >= 2 ||
		    flen >= sizeof(flags) - 1)
			continue;
		flen += snprintf(flags + flen, sizeof(flags) - flen, "%s-F '%s:*'",
				 nflags ? " " : "", name);
		nflags++;
	}
	if (!len) {
		free(f);
		return;
	}
	p_info("hint: %s's own code ran in %.0f%% of its CPU time (%llu samples at %d Hz); the "
	       "rest in %s%s%s%s", base, 100.0 * own / total, (unsigned long long)total, WHERE_HZ,
	       libs, nflags ? ": to trace its libraries' functions, " : "", flags,
	       nflags ? " (bpfprof list shows them; or sample stacks with --sample)" : "");
	free(f);
}

void where__free(struct where *w)
{
	if (!w)
		return;
	probe_obj__free(&w->po);
	where_bpf__destroy(w->skel);
	free(w);
}
