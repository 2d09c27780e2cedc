// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* /proc/kallsyms (see kallsyms.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "base/util.h"
#include "kallsyms.h"

#define KALLSYMS_BUF	(1 << 20)

/*
 * /proc/kallsyms with a buffer of 1 MiB: setvbuf() with no buffer of its
 * own keeps glibc's, the file's block size (1 KiB for /proc): 5,300 reads
 * for this kernel's table.  *buf: to free after fclose().
 */
static FILE *open_kallsyms(char **buf)
{
	FILE *f = fopen("/proc/kallsyms", "re");

	*buf = NULL;
	if (!f)
		return NULL;
	*buf = xmalloc(KALLSYMS_BUF);
	setvbuf(f, *buf, _IOFBF, KALLSYMS_BUF);
	return f;
}

/*
 * The next function symbol of f (t, T, w or W): its name, in line (len
 * bytes), and *addr; NULL at the end.  ~200k lines: parsed by hand, sscanf
 * would take a good part of a second.
 */
static char *next_func(FILE *f, char *line, int len, uint64_t *addr)
{
	while (fgets_unlocked(line, len, f)) {
		char type, *p, *name;

		*addr = strtoull(line, &p, 16);
		if (!*addr || *p != ' ')
			continue;
		type = p[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = p + 3;
		name[strcspn(name, " \t\n")] = 0;
		return name;
	}
	return NULL;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void kallsyms__load(struct kallsyms *k)
{
	char line[512], *buf, *name;
	FILE *f = open_kallsyms(&buf);
	size_t cap = 0;
	uint64_t addr;

	if (!f)
		return;
	while ((name = next_func(f, line, sizeof(line), &addr))) {
		if (k->n == cap) {
			cap = cap ? cap * 2 : 65536;
			k->v = xrealloc(k->v, cap * sizeof(*k->v));
		}
		k->v[k->n].addr = addr;
		k->v[k->n].name = xstrdup(name);
		k->n++;
	}
	fclose(f);
	free(buf);
	qsort(k->v, k->n, sizeof(*k->v), ksym_cmp);
}

const struct ksym *kallsyms__find(const struct kallsyms *k, uint64_t ip)
{
	size_t lo = lower_bound(k->n, k->v[at].addr <= ip);

	return lo ? &k->v[lo - 1] : NULL;
}

void kallsyms__free(struct kallsyms *k)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		free(k->v[i].name);
	free(k->v);
	k->v = NULL;
	k->n = 0;
}

/*
 * One pass over /proc/kallsyms without keeping names: each of names[] found
 * gets lo[i] = its address, hi[i] = the next function symbol's address
 * above it (its end; weak ones too); one not found keeps lo = hi = 0.
 * The count found.
 */
size_t kallsyms__ranges(const char *const *names, size_t n, uint64_t *lo, uint64_t *hi)
{
	uint64_t *all = NULL, addr;
	size_t nall = 0, cap = 0, found = 0, i, j;
	char line[512], *buf, *name;
	FILE *f = open_kallsyms(&buf);

	memset(lo, 0, n * sizeof(*lo));
	memset(hi, 0, n * sizeof(*hi));
	if (!f)
		return 0;
	while ((name = next_func(f, line, sizeof(line), &addr))) {
		if (nall == cap) {
			cap = cap ? cap * 2 : 65536;
			all = xrealloc(all, cap * sizeof(*all));
		}
		all[nall++] = addr;
		for (i = 0; i < n; i++)
			if (!lo[i] && !strcmp(name, names[i])) {
				lo[i] = addr;
				found++;
			}
	}
	fclose(f);
	free(buf);
	for (i = 0; i < n; i++)
		for (j = 0; lo[i] && j < nall; j++)
			if (all[j] > lo[i] && (!hi[i] || all[j] < hi[i]))
				hi[i] = all[j];
	for (i = 0; i < n; i++)
		if (lo[i] && !hi[i])
			lo[i] = 0, found--;
	free(all);
	return found;
}
