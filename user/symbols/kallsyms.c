// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* /proc/kallsyms (see kallsyms.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "base/util.h"
#include "kallsyms.h"

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void kallsyms__load(struct kallsyms *k)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	size_t cap = 0;

	if (!f)
		return;
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	/* ~200k lines: parsed by hand, sscanf would take a good part of a second */
	while (fgets_unlocked(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, *p, *name;

		addr = strtoull(line, &p, 16);
		if (!addr || *p != ' ')
			continue;
		type = p[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = p + 3;
		name[strcspn(name, " \t\n")] = 0;
		if (k->n == cap) {
			cap = cap ? cap * 2 : 65536;
			k->v = xrealloc(k->v, cap * sizeof(*k->v));
		}
		k->v[k->n].addr = addr;
		k->v[k->n].name = xstrdup(name);
		k->n++;
	}
	fclose(f);
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
