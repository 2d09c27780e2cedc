// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <gelf.h>
#include <elfutils/libdw.h>
#include "dwarfinfo.h"
#include "dwarfargs.h"
#include "dwarfxmm.h"
#include "debugsyms.h"
#include "base/log.h"
#include "base/util.h"

static void add(struct dwarf_funcs *df, size_t *cap, Dwarf_Die *die, Dwarf_Files *files, Elf *elf)
{
	Dwarf_Addr low;
	Dwarf_Die child;
	struct dwarf_func *f;
	int n = 0, line = 0;
	Dwarf_Attribute a;
	Dwarf_Word fileidx;

	if (dwarf_lowpc(die, &low) || !low)
		return;
	if (dwarf_child(die, &child) == 0) {
		do {
			int tag = dwarf_tag(&child);

			if (tag == DW_TAG_formal_parameter)
				n++;
			else if (tag == DW_TAG_unspecified_parameters)
				n = -1000;	/* variadic: any register may be an argument */
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	if (df->n == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		df->v = xrealloc(df->v, *cap * sizeof(*df->v));
	}
	f = &df->v[df->n++];
	f->addr = low;
	f->nparams = n < 0 ? -1 : n;
	f->file = NULL;
	f->line = 0;
	f->sig = dwarfargs__sig(die);
	dwarfxmm__places(die, elf, &f->sig);
	if (dwarf_decl_line(die, &line) == 0)
		f->line = line;
	if (files && dwarf_attr(die, DW_AT_decl_file, &a) && dwarf_formudata(&a, &fileidx) == 0) {
		const char *name = dwarf_filesrc(files, fileidx, NULL, NULL);

		if (name)
			f->file = xstrdup(name);
	}
}

static int by_addr(const void *a, const void *b)
{
	const struct dwarf_func *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int dwarfinfo__read_elf(Elf *elf, struct dwarf_funcs *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;
	Dwarf *dw;

	memset(out, 0, sizeof(*out));
	dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	if (!dw)
		return 0;	/* no debug information: nothing to say */
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die;
		Dwarf_Files *files = NULL;
		size_t nfiles;

		if (dwarf_offdie(dw, off + hsize, &cu)) {
			dwarf_getsrcfiles(&cu, &files, &nfiles);
			if (dwarf_child(&cu, &die) == 0) {
				do {
					if (dwarf_tag(&die) == DW_TAG_subprogram)
						add(out, &cap, &die, files, elf);
				} while (dwarf_siblingof(&die, &die) == 0);
			}
		}
		off = next;
	}
	dwarf_end(dw);
	if (out->n)	/* (qsort's array must not be NULL, even empty: DWARF without a subprogram) */
		qsort(out->v, out->n, sizeof(*out->v), by_addr);
	return 0;
}

/* True when elf has a section of type `type` with contents. */
static bool has_section(Elf *elf, GElf_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return true;
	return false;
}

/*
 * A stripped file (no .symtab, no DWARF): the DWARF of the debug file its
 * names came from (debugsyms.h: by build-id, debuglink or debuginfod), whose
 * addresses are the file's own.  0 and nothing when it has none.
 */
static int from_debug_file(const char *path, Elf *elf, const struct stat *st,
			   struct dwarf_funcs *out)
{
	const struct debug_names *dn;

	if (has_section(elf, SHT_SYMTAB))
		return 0;
	dn = debugsyms__names(path, elf, st);
	if (!dn || !dn->file || !strcmp(dn->file, path))
		return 0;
	return dwarfinfo__read_file(dn->file, out);
}

int dwarfinfo__read_file(const char *path, struct dwarf_funcs *out)
{
	Elf *elf;
	int fd, err;

	memset(out, 0, sizeof(*out));
	fd = open_binary(path, NULL);
	if (fd < 0)
		return fd;
	/*
	 * Our own Elf, read with pread: dwarf_begin() would map the file, and
	 * its owner truncating it meanwhile would be a SIGBUS.
	 */
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	err = dwarfinfo__read_elf(elf, out);
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int dwarfinfo__read(const char *path, struct dwarf_funcs *out)
{
	struct stat st;
	Elf *elf;
	int fd, err;

	memset(out, 0, sizeof(*out));
	fd = open_binary(path, &st);
	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	err = dwarfinfo__read_elf(elf, out);
	if (!err && !out->n && elf && elf_kind(elf) == ELF_K_ELF)
		err = from_debug_file(path, elf, &st, out);
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

const struct dwarf_func *dwarfinfo__find(const struct dwarf_funcs *df, uint64_t addr)
{
	size_t lo = lower_bound(df->n, df->v[at].addr < addr);

	return lo < df->n && df->v[lo].addr == addr ? &df->v[lo] : NULL;
}

void dwarfinfo__free(struct dwarf_funcs *df)
{
	size_t i;

	if (!df)
		return;
	for (i = 0; i < df->n; i++) {
		free(df->v[i].file);
		free(df->v[i].sig);
	}
	free(df->v);
	memset(df, 0, sizeof(*df));
}
