/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What elfsym.c (symbol tables, the first instructions) and
 * elfsym_stripped.c (the functions of a stripped file: debug sources and
 * FDEs) share.  Not for use outside user/symbols/.
 */
#ifndef BPFPROF_ELFSYM_INTERNAL_H
#define BPFPROF_ELFSYM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include "debugsyms.h"
#include "elfsym.h"

/* A function symbol before alias removal; names point into libelf's string table. */
struct cand {
	const char *name;
	uint64_t addr;
	uint64_t size;
	uint64_t offset;
	int bind_rank;	/* 0 GLOBAL, 1 WEAK, 2 anything else: lower wins among aliases */
	uint32_t flags;
	uint32_t source;	/* SYMSRC_* */
};

/* Candidates being collected, and the strings made up for unnamed functions. */
struct cands {
	struct cand *v;
	size_t n, cap;
	char **owned;
	size_t nowned;
};

/* An address range of code that may be traced (a section_is_code() section). */
struct code_range {
	uint64_t addr, size;
};

/* File offset of `addr`, or -1 when no PT_LOAD maps it from the file (e.g. .bss). */
int64_t elfsym_seg_offset(const struct elf_seg *segs, size_t nsegs, uint64_t addr);
/* A new zeroed candidate at the end of cs. */
struct cand *elfsym_new_cand(struct cands *cs);
/* GCC's "foo.cold" (or "foo.cold.N") fragment of a function. */
bool elfsym_is_cold_fragment(const char *name);
/* name joins out's IFUNC names. */
void elfsym_add_ifunc(struct elf_funcs *out, const char *name);

/* elfsym_stripped.c: the functions a debug source names, within the code ranges. */
void elfsym_add_debug_names(const struct debug_names *dn, const struct code_range *code,
			    size_t ncode, const struct elf_seg *segs, size_t nsegs,
			    struct cands *cs, struct elf_funcs *out);
/* Symbols without a size run to the next function or their section's end; c sorted by addr. */
void elfsym_size_unsized(struct cand *c, size_t n, const struct code_range *code, size_t ncode);
/* The functions only an FDE knows, named FILE+0xADDR (elfsym.h). */
void elfsym_add_unnamed(Elf *elf, const char *path, uint64_t entry, const struct code_range *code,
			size_t ncode, const struct elf_seg *segs, size_t nsegs, struct cands *cs);

#endif
