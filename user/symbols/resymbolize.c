// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Naming a recording's functions after the fact (resymbolize.h): the debug
 * file of each module, by build-id, read by the same readers as at record
 * time (debugsyms.c's symbol table, dwarfinfo.c's DWARF, libelf's program
 * headers for the file offsets of sample frames).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include "resymbolize.h"
#include "debugsyms.h"
#include "dwarfinfo.h"
#include "elfsym.h"
#include "base/log.h"
#include "base/util.h"

/* abi::__cxa_demangle from libstdc++, through its C symbol (as elfsym.c). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* The live symbolizer's key of an address no symbol held: its file offset, this bit set. */
#define UNKNOWN_OFF_BIT	(1ull << 47)

struct dbg {
	const struct debug_sym **v;	/* functions with a size, by address; one per address */
	size_t n;
	struct elf_seg *segs;		/* PT_LOAD: file offset -> address */
	size_t nsegs;
	struct dwarf_funcs dw;
};

/* The name a user calls it by, of two at one address (elfsym.c's order, shortened). */
static bool better(const struct debug_sym *a, const struct debug_sym *b)
{
	if ((a->name[0] == '_') != (b->name[0] == '_'))
		return b->name[0] == '_';
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	if (strlen(a->name) != strlen(b->name))
		return strlen(a->name) < strlen(b->name);
	return strcmp(a->name, b->name) < 0;
}

static int by_addr(const void *x, const void *y)
{
	const struct debug_sym *a = *(const struct debug_sym *const *)x;
	const struct debug_sym *b = *(const struct debug_sym *const *)y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static void load_segs(const char *file, struct dbg *d)
{
	size_t n, i;
	Elf *elf;
	int fd = open_binary(file, NULL);

	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_getphdrnum(elf, &n) == 0 && n < 4096) {
		d->segs = xcalloc(n + 1, sizeof(*d->segs));
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			d->segs[d->nsegs++] = (struct elf_seg){ ph.p_vaddr, ph.p_filesz, ph.p_offset };
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

static bool load(const struct debug_names *dn, struct dbg *d)
{
	size_t i, w;

	memset(d, 0, sizeof(*d));
	d->v = xcalloc(dn->n + 1, sizeof(*d->v));
	for (i = 0; i < dn->n; i++)
		if (dn->v[i].size && dn->v[i].name && dn->v[i].type != STT_NOTYPE)
			d->v[d->n++] = &dn->v[i];
	if (d->n)
		qsort(d->v, d->n, sizeof(*d->v), by_addr);
	for (i = 0, w = 0; i < d->n; i++) {	/* one per address: the better name stays */
		if (w && d->v[w - 1]->addr == d->v[i]->addr) {
			if (better(d->v[i], d->v[w - 1]))
				d->v[w - 1] = d->v[i];
			continue;
		}
		d->v[w++] = d->v[i];
	}
	d->n = w;
	if (dn->file) {
		dwarfinfo__read_file(dn->file, &d->dw);
		load_segs(dn->file, d);
	}
	return d->n > 0;
}

static void unload(struct dbg *d)
{
	free(d->v);
	free(d->segs);
	dwarfinfo__free(&d->dw);
}

/* The function holding addr, or NULL. */
static const struct debug_sym *holding(const struct dbg *d, uint64_t addr)
{
	size_t lo = lower_bound(d->n, d->v[at]->addr <= addr);

	if (!lo || addr >= d->v[lo - 1]->addr + d->v[lo - 1]->size)
		return NULL;
	return d->v[lo - 1];
}

static bool off_to_addr(const struct dbg *d, uint64_t off, uint64_t *addr)
{
	size_t i;

	for (i = 0; i < d->nsegs; i++) {
		if (off >= d->segs[i].offset && off - d->segs[i].offset < d->segs[i].filesz) {
			*addr = off - d->segs[i].offset + d->segs[i].vaddr;
			return true;
		}
	}
	return false;
}

static char *demangled(const char *raw)
{
	int status = 0;
	char *p;

	if (strncmp(raw, "_Z", 2))
		return xstrdup(raw);
	p = __cxa_demangle(raw, NULL, NULL, &status);
	if (!p || status) {
		free(p);
		return xstrdup(raw);
	}
	return p;
}

/* "FILE+0xADDR" of a function found by its FDE only: ADDR its own address. */
static bool unnamed(const struct bp_func *f)
{
	char tail[32];
	size_t n, t;

	if (f->flags & (BP_FUNC_UNKNOWN | BP_FUNC_KERNEL | BP_FUNC_MARKER | BP_FUNC_PYTHON |
			BP_FUNC_SPAN))
		return false;
	t = (size_t)snprintf(tail, sizeof(tail), "+0x%" PRIx64, f->addr);
	n = strlen(f->name);
	return n > t && !strcmp(f->name + n - t, tail) && !strchr(f->name, ' ');
}

/* Whether a module's function wants anything from a debug file. */
static bool wanting(const struct bp_func *f)
{
	return unnamed(f) || (f->flags & BP_FUNC_UNKNOWN) ||
	       (!(f->flags & (BP_FUNC_KERNEL | BP_FUNC_MARKER | BP_FUNC_PYTHON | BP_FUNC_SPAN)) &&
		(!f->file || !f->sig));
}

static void rename_func(struct bp_func *f, const struct debug_sym *ds)
{
	free(f->name);
	f->name = demangled(ds->name);
}

/* One function of a module whose debug file is d; true when named. */
static bool name_one(const struct dbg *d, struct bp_func *f, struct resymbolize_stats *st)
{
	const struct debug_sym *ds = NULL;
	const struct dwarf_func *df;
	bool named = false;
	uint64_t addr;

	if (f->flags & BP_FUNC_UNKNOWN) {
		if (off_to_addr(d, f->addr & ~UNKNOWN_OFF_BIT, &addr) && (ds = holding(d, addr))) {
			rename_func(f, ds);
			f->addr = ds->addr;
			f->size = ds->size;
			f->offset = 0;
			f->flags &= ~BP_FUNC_UNKNOWN;
			named = true;
		}
	} else if (unnamed(f) && (ds = holding(d, f->addr)) && ds->addr == f->addr) {
		rename_func(f, ds);
		named = true;
	}
	st->named += named;
	if (f->flags & (BP_FUNC_UNKNOWN | BP_FUNC_KERNEL | BP_FUNC_MARKER))
		return named;
	df = dwarfinfo__find(&d->dw, f->addr);
	if (df && ((!f->file && df->file) || (!f->sig && df->sig))) {
		if (!f->file && df->file) {
			f->file = xstrdup(df->file);
			f->line = df->line;
		}
		if (!f->sig && df->sig)
			f->sig = xstrdup(df->sig);
		if (f->nparams < 0)
			f->nparams = df->nparams;
		st->described++;
	}
	return named;
}

void resymbolize__session(struct bp_session *s, const struct debug_conf *debug,
			  struct resymbolize_stats *out)
{
	struct resymbolize_stats st = { 0 };
	size_t m, i;

	if (debug)
		debugsyms__configure(debug);
	elf_version(EV_CURRENT);
	for (m = 0; m < s->nmodules; m++) {
		const struct bp_module *mod = &s->modules[m];
		const struct debug_names *dn;
		bool want = false, need = false;
		struct dbg d;

		for (i = 0; i < s->nfuncs; i++) {
			if (s->funcs[i].module != m)
				continue;
			want |= wanting(&s->funcs[i]);
			need |= unnamed(&s->funcs[i]) || (s->funcs[i].flags & BP_FUNC_UNKNOWN);
		}
		if (!want || !mod->build_id)
			continue;
		dn = debugsyms__by_build_id(mod->build_id, mod->path);
		if (!dn || !load(dn, &d)) {
			if (dn)
				unload(&d);
			if (need) {
				st.missing++;
				p_warn("no debug file for %s (build-id %s): its functions stay unnamed",
				       mod->path, mod->build_id);
			}
			continue;
		}
		st.modules++;
		p_dbg("%s: names from %s", mod->path, dn->file ? dn->file : "?");
		for (i = 0; i < s->nfuncs; i++)
			if (s->funcs[i].module == m)
				name_one(&d, &s->funcs[i], &st);
		unload(&d);
	}
	if (out)
		*out = st;
}
