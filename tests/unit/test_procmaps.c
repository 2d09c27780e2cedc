// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * procmaps__insert: the maps text a BP_REC_MMAP record leads to, as the
 * kernel would show it after the same mmap (the dynamic linker maps a whole
 * library read-only, then its segments over it with MAP_FIXED).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/procmaps.h"

static struct procmap map(uint64_t start, uint64_t end, const char *perms, uint64_t pgoff,
			  const char *path)
{
	struct procmap m = { .start = start, .end = end, .pgoff = pgoff, .inode = 42,
			     .dev_major = 8, .dev_minor = 1, .path = path };

	strcpy(m.perms, perms);
	return m;
}

/* The first mapping of a process, into nothing. */
static void test_insert_into_nothing(void **state)
{
	struct procmap m = map(0x400000, 0x41f000, "r--p", 0, "/usr/bin/python3.11");
	char *t = procmaps__insert(NULL, &m);

	assert_string_equal(t, "400000-41f000 r--p 00000000 08:01 42 /usr/bin/python3.11\n");
	free(t);
}

/* Kept in address order: a lower mapping goes first, a higher one last. */
static void test_insert_in_address_order(void **state)
{
	struct procmap lo = map(0x1000, 0x2000, "r-xp", 0, "/lo");
	struct procmap hi = map(0x9000, 0xa000, "r-xp", 0, "/hi");
	char *a = procmaps__insert("5000-6000 r--p 00000000 08:01 7 /mid\n", &hi);
	char *b = procmaps__insert(a, &lo);

	assert_string_equal(b, "1000-2000 r-xp 00000000 08:01 42 /lo\n"
			       "5000-6000 r--p 00000000 08:01 7 /mid\n"
			       "9000-a000 r-xp 00000000 08:01 42 /hi\n");
	free(a);
	free(b);
}

/*
 * ld.so maps libc whole (r--p, offset 0), then its code over the middle:
 * the header stays before it, the rest after it with its offset moved.
 */
static void test_insert_splits_what_it_maps_over(void **state)
{
	struct procmap whole = map(0x7000000, 0x71e2000, "r--p", 0, "/usr/lib/libc.so.6");
	struct procmap code = map(0x7026000, 0x717c000, "r-xp", 0x26000, "/usr/lib/libc.so.6");
	char *a = procmaps__insert(NULL, &whole);
	char *b = procmaps__insert(a, &code);

	assert_string_equal(b, "7000000-7026000 r--p 00000000 08:01 42 /usr/lib/libc.so.6\n"
			       "7026000-717c000 r-xp 00026000 08:01 42 /usr/lib/libc.so.6\n"
			       "717c000-71e2000 r--p 0017c000 08:01 42 /usr/lib/libc.so.6\n");
	free(a);
	free(b);
}

/* A new mapping over several old ones (dlclose, then dlopen of another file there). */
static void test_insert_replaces_what_it_covers(void **state)
{
	const char *old = "1000-2000 r--p 00000000 08:01 5 /old.so\n"
			  "2000-3000 r-xp 00001000 08:01 5 /old.so\n"
			  "3000-4000 rw-p 00002000 08:01 5 /old.so\n"
			  "8000-9000 r-xp 00000000 08:01 6 /other.so\n";
	struct procmap m = map(0x800, 0x3800, "r-xp", 0, "/new.so");
	char *t = procmaps__insert(old, &m);

	assert_string_equal(t, "800-3800 r-xp 00000000 08:01 42 /new.so\n"
			       "3800-4000 rw-p 00002800 08:01 5 /old.so\n"
			       "8000-9000 r-xp 00000000 08:01 6 /other.so\n");
	free(t);
}

/* Lines as /proc writes them: the path padded, anonymous mappings without one. */
static void test_insert_keeps_proc_lines(void **state)
{
	const char *proc = "7ffd000-7fff000 rw-p 00000000 00:00 0                          [stack]\n"
			   "9000000-9001000 rw-p 00000000 00:00 0 \n";
	struct procmap m = map(0x1000, 0x2000, "r-xp", 0, "/a b/with space.so");
	char *t = procmaps__insert(proc, &m);
	struct procmap got;
	char *line;

	assert_non_null(strstr(t, "1000-2000 r-xp 00000000 08:01 42 /a b/with space.so\n"));
	line = strstr(t, "7ffd000");
	assert_non_null(line);
	assert_true(procmaps__parse(line, &got));
	assert_string_equal(got.path, "[stack]");
	assert_int_equal(got.start, 0x7ffd000);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insert_into_nothing),
		cmocka_unit_test(test_insert_in_address_order),
		cmocka_unit_test(test_insert_splits_what_it_maps_over),
		cmocka_unit_test(test_insert_replaces_what_it_covers),
		cmocka_unit_test(test_insert_keeps_proc_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
