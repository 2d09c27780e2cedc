// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Open addressing tables: their growth (hashtab.h). */
#include <stdlib.h>
#include <string.h>
#include "hashtab.h"
#include "log.h"

void hashtab__reserve(void **tab, size_t *cap, size_t used, const struct hashtab_ops *ops)
{
	char *old = *tab, *new;
	size_t oldcap = *cap, newcap, i, j;

	if ((used + 1) * 2 <= oldcap)
		return;
	newcap = oldcap ? oldcap * 2 : ops->initial;
	new = xcalloc(newcap, ops->slot);
	for (i = 0; i < oldcap; i++) {
		const char *s = old + i * ops->slot;

		if (ops->empty(s))
			continue;
		for (j = hashtab__first(ops->hash(s), newcap); !ops->empty(new + j * ops->slot);
		     j = hashtab__next(j, newcap))
			;
		memcpy(new + j * ops->slot, s, ops->slot);
	}
	free(old);
	*tab = new;
	*cap = newcap;
}

void hashtab__remove(void *tab, size_t cap, size_t i, const struct hashtab_ops *ops)
{
	char *t = tab;
	size_t j, h;

	/* backward-shift deletion: an entry after i moves back into the hole unless its
	 * home slot lies in (hole, its slot], cyclically; no tombstones */
	for (j = hashtab__next(i, cap); !ops->empty(t + j * ops->slot); j = hashtab__next(j, cap)) {
		h = hashtab__first(ops->hash(t + j * ops->slot), cap);
		if (i < j ? h > i && h <= j : h > i || h <= j)
			continue;
		memcpy(t + i * ops->slot, t + j * ops->slot, ops->slot);
		i = j;
	}
	memset(t + i * ops->slot, 0, ops->slot);
}
