/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the debug information of a binary (libdw) says about its functions:
 * how many parameters each takes (so --deps looks only at registers that
 * carry arguments, not at values left over from earlier calls) and where it
 * is defined (file:line).  Binaries without DWARF give nothing, silently.
 */
#ifndef BPFPROF_DWARFINFO_H
#define BPFPROF_DWARFINFO_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

struct dwarf_func {
	uint64_t addr;		/* DW_AT_low_pc */
	int nparams;		/* formal parameters; -1: variadic or unknown */
	uint32_t line;		/* DW_AT_decl_line, 0 unknown */
	char *file;		/* DW_AT_decl_file, NULL unknown */
	char *sig;		/* typed signature (model/argsig.h), NULL unknown */
};

struct dwarf_funcs {
	struct dwarf_func *v;	/* sorted by addr */
	size_t n;
};

/*
 * Reads the subprograms of `path`; returns 0 (also when there is no DWARF) or
 * -errno.  A stripped file gets those of its debug file (debugsyms.h).
 */
int dwarfinfo__read(const char *path, struct dwarf_funcs *out);
/* The subprograms of `path` itself only (a debug file). */
int dwarfinfo__read_file(const char *path, struct dwarf_funcs *out);
/* The same from an open ELF (an image in memory: the fuzz target); elf stays the caller's. */
int dwarfinfo__read_elf(Elf *elf, struct dwarf_funcs *out);
/* The entry at addr, or NULL. */
const struct dwarf_func *dwarfinfo__find(const struct dwarf_funcs *df, uint64_t addr);
void dwarfinfo__free(struct dwarf_funcs *df);

#endif
