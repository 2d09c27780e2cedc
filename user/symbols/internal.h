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
#include <sys/types.h>
#include <time.h>
#include "debugsyms.h"
#include "dwarfinfo.h"
#include "kallsyms.h"
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

/*
 * The symbolizer's state, shared by symbolize.c (frames and stacks) and
 * symbolize_maps.c (each process's mappings: read from /proc, merged from
 * BP_REC_MMAP records, copied at fork, dropped at exec).
 */
struct bp_session;
struct unwinder;

struct mapping {
	uint64_t start, end, pgoff;
	int file;		/* index into files, -1: anonymous or special */
	char *special;		/* "[vdso]", "[heap]", ... (not a file) */
};

struct proc_maps {
	uint32_t pid;
	struct mapping *v;
	size_t n;
	int reread;		/* misses since the last read: re-read at most a few times */
	char *text;		/* /proc/PID/maps as last read, for the unwinder */
	uint64_t gen;		/* changes with text */
};

struct symfile {
	char *path;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;	/* with size: a file rebuilt in place is another file */
	off_t size;
	uint32_t module;	/* session module id */
	struct elf_funcs syms;	/* sorted by addr; offsets ascending with addr */
	struct dwarf_funcs dw;	/* file:line of its functions, where it has DWARF */
	int err;
};

/* (module, symbol address) -> session function id */
struct fkey {
	uint64_t key;		/* module << 48 ^ addr, 0 = empty */
	uint32_t func;
};

struct symbolizer {
	struct bp_session *s;
	struct proc_maps *procs;
	size_t nprocs;
	struct symfile *files;
	size_t nfiles;
	struct kallsyms ksyms;
	int kloaded;
	uint32_t kmodule;
	struct fkey *ftab;
	size_t ftab_cap, ftab_used;
	uint32_t truncated_func, nostack_func;
	bool have_truncated, have_nostack;
	struct unwinder *uw;	/* created by the first sample with a stack copy */
	bool uw_failed;
	uint64_t nustack, nfallback;	/* stack copies unwound; fp stacks used instead */
	uint32_t max_copy;	/* the largest stack copy seen */
};

/* The mappings of pid (read from /proc the first time it is asked for). */
struct proc_maps *symbolizer_proc(struct symbolizer *sy, uint32_t pid);
/* The mapping that holds addr in pid, re-reading /proc a few times; NULL if none. */
const struct mapping *symbolizer_find_map(struct symbolizer *sy, uint32_t pid, uint64_t addr);

#endif
