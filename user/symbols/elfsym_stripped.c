// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The functions of a stripped file (elfsym.h): those a debug source names
 * (debugsyms.h), and those only an FDE of .eh_frame knows (ehframe.h),
 * named FILE+0xADDR.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>
#include "binfile.h"
#include "ehframe.h"
#include "internal.h"
#include "base/log.h"
#include "base/util.h"

static bool in_code(const struct code_range *code, size_t ncode, uint64_t addr)
{
	size_t i;

	for (i = 0; i < ncode; i++)
		if (addr >= code[i].addr && addr - code[i].addr < code[i].size)
			return true;
	return false;
}

/*
 * The functions a debug source names, filtered as collect_syms() filters a
 * symbol table, by address: a debug file's section headers describe the
 * debug file (its .text is NOBITS), the code is the stripped file's.
 */
void elfsym_add_debug_names(const struct debug_names *dn, const struct code_range *code,
			    size_t ncode, const struct elf_seg *segs, size_t nsegs,
			    struct cands *cs, struct elf_funcs *out)
{
	size_t i;

	for (i = 0; i < dn->n; i++) {
		const struct debug_sym *d = &dn->v[i];
		struct cand *c;
		int64_t off;

		/* "memcpy@@GLIBC_2.14": the versioned twin of a .dynsym IFUNC, which names it */
		if (d->type == STT_GNU_IFUNC) {
			if (!strchr(d->name, '@'))
				elfsym_add_ifunc(out, d->name);
			continue;
		}
		if (!in_code(code, ncode, d->addr))
			continue;
		off = elfsym_seg_offset(segs, nsegs, d->addr);
		if (off < 0)
			continue;
		c = elfsym_new_cand(cs);
		c->name = d->name;	/* the cache keeps it for the life of the process */
		c->addr = d->addr;
		c->size = d->size;
		c->offset = (uint64_t)off;
		c->bind_rank = d->bind == STB_GLOBAL ? 0 : d->bind == STB_WEAK ? 1 : 2;
		c->flags = d->bind == STB_WEAK ? ELFSYM_F_WEAK : d->bind == STB_LOCAL ? ELFSYM_F_LOCAL : 0;
		if (!d->size || elfsym_is_cold_fragment(d->name))
			c->flags |= ELFSYM_F_NOPROBE;
		c->source = dn->source;
	}
}

/* What unnamed functions of the file are called: its DT_SONAME, else its file name. */
static void file_label(Elf *elf, const char *path, char *buf, size_t size)
{
	const char *base = strrchr(path, '/');
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	snprintf(buf, size, "%s", base ? base + 1 : path);
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *name;

			if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag != DT_SONAME)
				continue;
			name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (name && *name && !strchr(name, '/'))
				snprintf(buf, size, "%s", name);
			return;
		}
	}
}

/*
 * A symbol without a size (hand-written assembly such as ld.so's _start)
 * names the code up to the next function or the end of its section: samples
 * there get its name.  `c` is sorted by address.
 */
void elfsym_size_unsized(struct cand *c, size_t n, const struct code_range *code, size_t ncode)
{
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		if (c[i].size)
			continue;
		for (j = i + 1; j < n && c[j].addr == c[i].addr; j++)
			;
		for (k = 0; k < ncode; k++) {
			uint64_t end = code[k].addr + code[k].size;

			if (c[i].addr < code[k].addr || c[i].addr >= end)
				continue;
			c[i].size = (j < n && c[j].addr < end ? c[j].addr : end) - c[i].addr;
		}
	}
}

static int cand_addr_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * A stripped file: every function with an FDE whose start no symbol of any
 * source names, and that no named function's range covers, becomes
 * FILE+0xADDR.  The entry point is start-up glue (_start).  FDEs that do not
 * start like a function name samples only (ELFSYM_F_NOPROBE).
 */
void elfsym_add_unnamed(Elf *elf, const char *path, uint64_t entry, const struct code_range *code,
			size_t ncode, const struct elf_seg *segs, size_t nsegs, struct cands *cs)
{
	struct fde_range *r = NULL;
	size_t nr = 0, i, nsorted = cs->n, phnum;
	bool is_program = false;
	char label[256];
	GElf_Phdr ph;

	ehframe__funcs(elf, &r, &nr);
	if (!nr)
		return;
	/* a program has an interpreter; a library's entry point (libc's) is something else */
	for (i = 0; !elf_getphdrnum(elf, &phnum) && i < phnum; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_INTERP)
			is_program = true;
	file_label(elf, binfile__name(path), label, sizeof(label));	/* not its /proc/self/fd */
	if (cs->n)	/* (qsort's array must not be NULL, even empty) */
		qsort(cs->v, cs->n, sizeof(*cs->v), cand_addr_cmp);
	for (i = 0; i < nr; i++) {
		size_t lo = 0, hi = nsorted;
		char name[300];
		struct cand *c;
		int64_t off;

		/* the last named function starting at or before r[i].start */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (cs->v[mid].addr <= r[i].start)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && (cs->v[lo - 1].addr == r[i].start ||
			   r[i].start - cs->v[lo - 1].addr < cs->v[lo - 1].size))
			continue;
		if (!in_code(code, ncode, r[i].start) ||
		    (off = elfsym_seg_offset(segs, nsegs, r[i].start)) < 0)
			continue;
		/* the ELF entry point of a program is _start whatever the symbol tables say */
		if (r[i].start == entry && is_program)
			snprintf(name, sizeof(name), "_start");
		else
			snprintf(name, sizeof(name), "%s+0x%" PRIx64, label, r[i].start);
		cs->owned = xrealloc(cs->owned, (cs->nowned + 1) * sizeof(*cs->owned));
		cs->owned[cs->nowned++] = xstrdup(name);
		c = elfsym_new_cand(cs);
		c->name = cs->owned[cs->nowned - 1];
		c->addr = r[i].start;
		c->size = r[i].end - r[i].start;
		c->offset = (uint64_t)off;
		c->bind_rank = 2;
		c->flags = ELFSYM_F_LOCAL | ELFSYM_F_UNNAMED |
			   (r[i].start == entry ? ELFSYM_F_STARTUP : 0) |
			   (r[i].entry ? 0 : ELFSYM_F_NOPROBE);
		c->source = SYMSRC_EHFRAME;
	}
	free(r);
}
