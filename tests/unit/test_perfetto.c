// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The Perfetto exporter: calls arrive children first, and the slices a
 * reader builds from the file (events sorted by timestamp, ties in file
 * order, a stack per track: what Perfetto's trace processor does) must nest
 * as the calls did.  The file is read by tests/e2e/perfetto_util.py, which
 * decodes it with `protoc` against tests/perfetto_subset.proto: an
 * independent reader, not this encoder's idea of the format.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exporters/exporter.h"
#include "model/session.h"
#include "helpers.h"

struct fixture {
	char dir[64];
	char path[128];
	struct bp_session s;
	uint32_t f[8];
};

static const char *const names[] = { "main", "loop", "work", "leaf", "outer", "inner" };

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct bp_func f = {0};
	uint32_t mod, i;

	if (!fx || unit__mkdtemp(fx->dir, fx->path, sizeof(fx->path), "perfetto", "t.pftrace"))
		return -1;
	mod = unit__demo_session(&fx->s);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		f.name = (char *)names[i];
		f.module = mod;
		fx->f[i] = session__add_func(&fx->s, &f);
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	return unit__fixture_free(fx->dir, &fx->s, fx);
}

/* A call on thread 100, its path not computed. */
static struct bp_event call(uint64_t id, uint64_t parent, uint32_t func, uint64_t begin,
			    uint64_t end, uint32_t depth, uint32_t flags)
{
	return unit__call(id, parent, func, 0, 100, begin, end, 0, depth, flags);
}

static void write_trace(struct fixture *fx, const struct bp_event *evs, int n)
{
	struct exporter *e = NULL;
	int i;

	assert_ptr_equal(exporter__for_path(fx->path), &perfetto_exporter);
	assert_int_equal(exporter__new(&perfetto_exporter, fx->path, &fx->s, &e), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(exporter__event(e, &fx->s, &evs[i]), 0);
	assert_int_equal(exporter__finish(e, &fx->s), 0);
	exporter__free(e);
}

/* The slices as the independent reader sees them, one line each. */
static char *read_slices(const char *path)
{
	struct unit_mem mem;
	char cmd[512];
	FILE *p, *m;
	int c;

	if (system("command -v protoc >/dev/null 2>&1") != 0)
		skip();
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 tests/e2e/perfetto_util.py '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	m = unit__mem_open(&mem);
	while ((c = fgetc(p)) != EOF)
		fputc(c, m);
	assert_int_equal(pclose(p), 0);
	return unit__mem_close(&mem);
}

static void assert_slices(struct fixture *fx, const char *want)
{
	char *got = read_slices(fx->path);

	if (strcmp(got, want))
		fail_msg("slices:\n%s\nwant:\n%s", got, want);
	free(got);
}

/* Children before parents, siblings, recursion: nesting as entered. */
static void test_nesting(void **state)
{
	struct fixture *fx = *state;
	struct bp_event evs[] = {
		call(3, 2, fx->f[2], 120, 200, 2, 0),	/* work */
		call(4, 2, fx->f[2], 210, 300, 2, 0),	/* work */
		call(2, 1, fx->f[1], 110, 400, 1, 0),	/* loop */
		call(6, 5, fx->f[3], 520, 530, 2, 0),	/* leaf */
		call(5, 1, fx->f[1], 500, 600, 1, 0),	/* loop */
		call(1, 0, fx->f[0], 100, 1000, 0, BP_CALL_UNFINISHED),	/* main */
		call(7, 0, fx->f[3], 1000, 1000, 0, 0),	/* leaf, 0 ns, where main ended */
	};

	write_trace(fx, evs, sizeof(evs) / sizeof(evs[0]));
	assert_slices(fx,
		      "100 main 0 100 1000 unfinished\n"
		      "100 loop 1 110 400 -\n"
		      "100 work 2 120 200 -\n"
		      "100 work 2 210 300 -\n"
		      "100 loop 1 500 600 -\n"
		      "100 leaf 2 520 530 -\n"
		      "100 leaf 0 1000 1000 -\n");
}

/*
 * Calls whose entry was not seen begin where their caller began (or at the
 * start of the recording) and arrive before the call that encloses them:
 * ties that file order alone would nest the wrong way round.
 */
static void test_no_entry_ties(void **state)
{
	struct fixture *fx = *state;
	uint32_t ne = BP_CALL_NO_ENTRY;
	struct bp_event evs[] = {
		/* under loop (id 2, begins at 100): two returns without entry */
		call(10, 2, fx->f[3], 100, 150, 2, ne),	/* leaf */
		call(11, 2, fx->f[2], 100, 180, 2, ne),	/* work: encloses the leaf */
		call(12, 2, fx->f[3], 190, 195, 2, 0),	/* leaf, entered normally */
		call(2, 0, fx->f[1], 100, 300, 1, 0),	/* loop */
		/* without a traced caller: from the start of the recording */
		call(13, 0, fx->f[4], 0, 400, 0, ne),	/* outer: encloses loop */
		call(14, 0, fx->f[5], 0, 500, 0, ne),	/* inner (a name only): encloses outer */
		call(15, 0, fx->f[3], 500, 510, 0, ne),	/* begins where the previous ended */
	};

	write_trace(fx, evs, sizeof(evs) / sizeof(evs[0]));
	assert_slices(fx,
		      "100 inner 0 0 500 began_before_recording\n"
		      "100 outer 1 0 400 began_before_recording\n"
		      "100 loop 2 100 300 -\n"
		      "100 work 3 100 180 began_before_recording\n"
		      "100 leaf 4 100 150 began_before_recording\n"
		      "100 leaf 3 190 195 -\n"
		      "100 leaf 0 500 510 began_before_recording\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nesting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_entry_ties, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
