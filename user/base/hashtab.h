/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Open addressing with linear probing, the growth written once: a table is
 * the caller's array of slots (a slot whose key is zero/NULL is empty), its
 * capacity a power of two, kept at most half full.  Lookups stay with each
 * table (they compare its own keys); hashtab__reserve() before an insert
 * doubles the array and re-places every used slot at its hash.
 */
#ifndef BPFPROF_HASHTAB_H
#define BPFPROF_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashtab_ops {
	size_t slot;				/* bytes per slot */
	size_t initial;				/* first capacity, a power of two */
	bool (*empty)(const void *slot);
	uint64_t (*hash)(const void *slot);	/* of a used slot's key */
};

/* Room for one more (used + 1 at most half of *cap): grows *tab if needed. */
void hashtab__reserve(void **tab, size_t *cap, size_t used, const struct hashtab_ops *ops);

/* Empties used slot i (a table whose empty slots are all-zero bytes); the caller counts it. */
void hashtab__remove(void *tab, size_t cap, size_t i, const struct hashtab_ops *ops);

/* The probe sequence: start at hash, step by one. */
static inline size_t hashtab__first(uint64_t hash, size_t cap)
{
	return hash & (cap - 1);
}

static inline size_t hashtab__next(size_t i, size_t cap)
{
	return (i + 1) & (cap - 1);
}

#endif
