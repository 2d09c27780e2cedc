// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The overhead governor's compensated inclusive times (cost/governor_comp.c):
 * the table that carries finished children's shares to their caller's call
 * by call id, and the time a call would have lasted untraced.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cost/internal.h"

/* The slot of the table that holds id, or -1. */
static long slot_of(const struct governor *g, uint64_t id)
{
	size_t i;

	for (i = 0; i < g->nest_cap; i++)
		if (g->nest[i].id == id)
			return (long)i;
	return -1;
}

static void take(struct governor *g, uint64_t id, double *out, double *comp)
{
	gov_nest_take(g, id, out, comp);
}

/* Shares add up per call id; a call taken is gone. */
static void test_nest_sums(void **state)
{
	struct governor *g = calloc(1, sizeof(*g));
	double out, comp;

	(void)state;
	gov_nest_add(g, 7, 100, 1000);
	gov_nest_add(g, 7, 50, 500);
	gov_nest_add(g, 9, 1, 2);
	take(g, 7, &out, &comp);
	assert_true(out == 150 && comp == 1500);
	take(g, 7, &out, &comp);
	assert_true(out == 0 && comp == 0);
	take(g, 9, &out, &comp);
	assert_true(out == 1 && comp == 2);
	free(g->nest);
	free(g);
}

/*
 * A slot emptied by a deletion (its neighbour shifted back into the deleted
 * one's place) must not lend its old figures to the next call that lands
 * there: it did, and a request handler's children summed the probe costs of
 * calls long gone, growing without end (nginx at --max-overhead 100: every
 * caller read as less than its probe, ngx_http_process_request dropped).
 */
static void test_nest_slot_emptied_by_a_shift(void **state)
{
	struct governor *g = calloc(1, sizeof(*g));
	uint64_t a = 1, b, d;
	long i, j;
	double out, comp;

	(void)state;
	gov_nest_add(g, a, 1, 1);
	i = slot_of(g, a);
	assert_true(i >= 0 && g->nest_cap >= 4);
	j = (long)(((size_t)i + 1) & (g->nest_cap - 1));
	/* b: an id that lands right after a because its home is a's slot */
	for (b = 2;; b++) {
		gov_nest_add(g, b, 1000, 1000000);
		if (slot_of(g, b) == j) {
			take(g, a, &out, &comp);
			assert_true(out == 1 && comp == 1);
			if (slot_of(g, b) == i)
				break;	/* shifted back: its old slot j is empty now */
			gov_nest_add(g, a, 1, 1);	/* b's home was j: a back, try another */
			assert_int_equal(slot_of(g, a), i);
		}
		take(g, b, &out, &comp);
		assert_true(b < 1000000);
	}
	assert_int_equal(g->nest[j].id, 0);
	/* d: an id whose home is j */
	for (d = b + 1;; d++) {
		gov_nest_add(g, d, 3, 4);
		if (slot_of(g, d) == j)
			break;
		take(g, d, &out, &comp);
		assert_true(d < 2000000);
	}
	take(g, d, &out, &comp);
	assert_true(out == 3 && comp == 4);
	take(g, b, &out, &comp);
	assert_true(out == 1000 && comp == 1000000);
	free(g->nest);
	free(g);
}

/*
 * A call's untraced time: its self time less its own probe's inside share
 * and its children's probe cost outside them, never under 0, plus its
 * children's own times.  (fn NULL: no inside share.)
 */
static void test_comp_time(void **state)
{
	struct governor g;

	(void)state;
	memset(&g, 0, sizeof(g));
	assert_true(gov_comp_time(&g, NULL, 1500, 500, 2000) == 3000);
	/* the children's probes calibrated dearer than the self time: 0 for its own, not less */
	assert_true(gov_comp_time(&g, NULL, 100, 500, 1000) == 1000);
	assert_true(gov_comp_time(&g, NULL, 100, 500, 0) == 0);
	/* the decoder compensates already: nothing more goes */
	g.comp_clock = true;
	assert_true(gov_comp_time(&g, NULL, 100, 500, 1000) == 1100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nest_sums),
		cmocka_unit_test(test_nest_slot_emptied_by_a_shift),
		cmocka_unit_test(test_comp_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
