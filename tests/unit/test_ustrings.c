// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ustrings: strings a probe could not read, from the mapped file (found
 * among the attached binaries when the process is gone) or from the live
 * process's memory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "symbols/ustrings.h"

/* No process has this pid (above PID_MAX_LIMIT): only the file can answer. */
#define GONE_PID 0x7ffffff0u

static char tmp[] = "/tmp/test_ustrings.XXXXXX";

static struct bp_usdt_where where_of(const char *path, uint64_t off)
{
	struct bp_usdt_where w = { .off = off };
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	w.ino = st.st_ino;
	w.dev = major(st.st_dev) << 20 | minor(st.st_dev);	/* as the kernel gives it */
	return w;
}

static int setup(void **state)
{
	static const char data[] = "\x7f" "ELF....first\0second label\0";
	int fd = mkstemp(tmp);

	(void)state;
	if (fd < 0 || write(fd, data, sizeof(data)) != (ssize_t)sizeof(data))
		return -1;
	return close(fd);
}

static int teardown(void **state)
{
	(void)state;
	return unlink(tmp);
}

static void test_file_of_an_exited_process(void **state)
{
	struct ustrings *u = ustrings__new();
	struct bp_usdt_where w = where_of(tmp, 8);
	char buf[BP_USDT_STR + 1];

	(void)state;
	/* unknown file, process gone: nothing to read */
	assert_int_not_equal(ustrings__read(u, GONE_PID, 0x1000, &w, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	ustrings__add_file(u, tmp);
	assert_int_equal(ustrings__read(u, GONE_PID, 0x1000, &w, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "first");
	w.off = 14;
	assert_int_equal(ustrings__read(u, GONE_PID, 0x1000, &w, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "second label");
	/* a short buffer is cut and terminated */
	assert_int_equal(ustrings__read(u, GONE_PID, 0x1000, &w, buf, 7), 0);
	assert_string_equal(buf, "second");
	/* another file with the same inode number elsewhere is not this one */
	w.dev ^= 1;
	assert_int_not_equal(ustrings__read(u, GONE_PID, 0x1000, &w, buf, sizeof(buf)), 0);
	ustrings__free(u);
}

static void test_cached_per_file_offset(void **state)
{
	struct ustrings *u = ustrings__new();
	struct bp_usdt_where w = where_of(tmp, 8);
	char buf[BP_USDT_STR + 1];
	FILE *f;

	(void)state;
	ustrings__add_file(u, tmp);
	assert_int_equal(ustrings__read(u, GONE_PID, 0, &w, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "first");
	/* the file changes in place (same inode): the label read once stays */
	f = fopen(tmp, "r+");
	assert_non_null(f);
	fseek(f, 8, SEEK_SET);
	fputs("FIRST", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(ustrings__read(u, GONE_PID, 0, &w, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "first");
	ustrings__free(u);
}

static void test_live_process_memory(void **state)
{
	static char heap_like[] = "in anonymous memory";
	struct bp_usdt_where none = { 0 };
	struct ustrings *u = ustrings__new();
	char buf[BP_USDT_STR + 1];

	(void)state;
	assert_int_equal(ustrings__read(u, getpid(), (uintptr_t)heap_like, &none, buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "in anonymous memory");
	assert_int_equal(ustrings__read(u, getpid(), (uintptr_t)heap_like, NULL, buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "in anonymous memory");
	/* an unmapped address is an error and an empty string */
	assert_int_not_equal(ustrings__read(u, getpid(), 8, NULL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	ustrings__free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_of_an_exited_process),
		cmocka_unit_test(test_cached_per_file_offset),
		cmocka_unit_test(test_live_process_memory),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
