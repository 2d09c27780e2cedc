// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of function discovery and naming in stripped files (issue 18)
 * on Debian's own binaries: /usr/bin/gzip (no .symtab, no exported
 * function), libz.so.1 (.dynsym only) and, where libc6-dbg is installed,
 * libc.so.6 named from its debug file.  A file that is missing or not
 * stripped here skips its test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "symbols/debugsyms.h"
#include "symbols/elfsym.h"

static bool has_symtab(const char *path)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "readelf -SW %s 2>/dev/null | grep -q ' \\.symtab '", path);
	return system(cmd) == 0;
}

/* Sorted, disjoint, sized; unnamed functions are LABEL+0xADDR with their own address. */
static void check_table(const struct elf_funcs *f, const char *label)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct elf_func *e = &f->v[i];
		char want[300];

		assert_true(e->size > 0);
		if (i + 1 < f->n)
			assert_true(e->addr + e->size <= f->v[i + 1].addr);
		if (e->flags & ELFSYM_F_UNNAMED && strcmp(e->name, "_start")) {
			snprintf(want, sizeof(want), "%s+0x%" PRIx64, label, e->addr);
			assert_string_equal(e->name, want);
			assert_int_equal(e->source, SYMSRC_EHFRAME);
		}
	}
}

static void test_gzip(void **state)
{
	const char *path = "/usr/bin/gzip";
	struct elf_funcs f = { 0 };
	size_t i, probed = 0, entry = 0;

	(void)state;
	if (access(path, R_OK) || has_symtab(path))
		skip();
	assert_int_equal(elfsym__read(path, &f), 0);
	check_table(&f, "gzip");
	for (i = 0; i < f.n; i++) {
		probed += !(f.v[i].flags & ELFSYM_F_NOPROBE);
		/* _start: the ELF entry point, named so, never probed (its return address is argc) */
		if (!strcmp(f.v[i].name, "_start")) {
			entry++;
			assert_true(f.v[i].flags & ELFSYM_F_NOPROBE);
			assert_true(f.v[i].flags & ELFSYM_F_STARTUP);
		}
	}
	assert_int_equal(entry, 1);
	assert_true(probed > 50);	/* gzip 1.12 has ~120 */
	elfsym__free(&f);
}

static void test_libz_soname_label(void **state)
{
	const char *path = "/usr/lib/x86_64-linux-gnu/libz.so.1";
	struct elf_funcs f = { 0 };
	size_t i, unnamed = 0, dyn = 0;

	(void)state;
	if (access(path, R_OK) || has_symtab(path))
		skip();
	assert_int_equal(elfsym__read(path, &f), 0);
	check_table(&f, "libz.so.1");	/* its DT_SONAME, not libz.so.1.2.13 */
	for (i = 0; i < f.n; i++) {
		unnamed += f.v[i].source == SYMSRC_EHFRAME;
		dyn += f.v[i].source == SYMSRC_DYNSYM;
		if (!strcmp(f.v[i].name, "adler32"))
			assert_int_equal(f.v[i].source, SYMSRC_DYNSYM);
	}
	assert_true(unnamed > 0 && dyn > 0);
	elfsym__free(&f);
}

static void test_libc_debug_file(void **state)
{
	const char *path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct elf_funcs f = { 0 };
	size_t i, found = 0;

	(void)state;
	if (access(path, R_OK) || has_symtab(path) ||
	    system("ls /usr/lib/debug/.build-id/*/*.debug >/dev/null 2>&1"))
		skip();
	assert_int_equal(elfsym__read(path, &f), 0);
	for (i = 0; i < f.n; i++)
		if (!strcmp(f.v[i].name, "__libc_start_call_main")) {
			found++;
			assert_int_equal(f.v[i].source, SYMSRC_BUILDID);
		}
	if (!found) {	/* libc6-dbg not installed for this libc */
		elfsym__free(&f);
		skip();
	}
	assert_int_equal(found, 1);
	elfsym__free(&f);
}

/*
 * A debug link naming a FIFO beside the file (its owner's choice): the file
 * is read without waiting for a writer that never comes (alarm: the test dies).
 */
static void test_debuglink_fifo(void **state)
{
	const char *path = "/usr/bin/gzip";
	char dir[] = "/tmp/bpfprof-fifo-XXXXXX", copy[64], fifo[160], link[128], cmd[256];
	struct elf_funcs f = { 0 };
	FILE *p;

	(void)state;
	if (access(path, R_OK) || has_symtab(path))
		skip();
	snprintf(cmd, sizeof(cmd), "readelf -p .gnu_debuglink %s 2>/dev/null | "
		 "sed -n 's/^ *\\[ *0\\] *//p'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (!fgets(link, sizeof(link), p)) {
		pclose(p);
		skip();	/* no debug link */
	}
	pclose(p);
	link[strcspn(link, "\n")] = 0;
	assert_non_null(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/gzip", dir);
	snprintf(fifo, sizeof(fifo), "%s/%s", dir, link);
	snprintf(cmd, sizeof(cmd), "cp %s %s", path, copy);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	debugsyms__reset();
	alarm(20);
	assert_int_equal(elfsym__read(copy, &f), 0);
	alarm(0);
	assert_true(f.n > 0);
	elfsym__free(&f);
	debugsyms__reset();
	unlink(fifo);
	unlink(copy);
	rmdir(dir);
}

static void test_source_names(void **state)
{
	(void)state;
	assert_string_equal(debugsyms__source_name(SYMSRC_SYMTAB), "symtab");
	assert_string_equal(debugsyms__source_name(SYMSRC_BUILDID), "build-id");
	assert_string_equal(debugsyms__source_name(SYMSRC_GOPCLNTAB), "gopclntab");
	assert_string_equal(debugsyms__source_name(SYMSRC_EHFRAME), "eh_frame");
	assert_string_equal(debugsyms__source_name(99), "-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_libz_soname_label),
		cmocka_unit_test(test_libc_debug_file),
		cmocka_unit_test(test_debuglink_fifo),
		cmocka_unit_test(test_source_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
