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
		cmocka_unit_test(test_source_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
