// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Function symbols of an ELF file, for attaching uprobes: name, address,
 * file offset and the class of the first instruction.  libelf does the ELF
 * parsing; this file only filters, de-duplicates and annotates.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gelf.h>
#include "binfile.h"
#include "debugsyms.h"
#include "elfsym.h"
#include "internal.h"
#include "base/log.h"
#include "base/util.h"

/* abi::__cxa_demangle from libstdc++, through its C symbol. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Enough bytes for every instruction pattern elfsym__classify_insn() knows. */
#define INSN_PEEK 32	/* endbr64 (4) or a Go stack check (<= 18) + the instruction after it */

static const char *const startup_glue[] = {
	"_start",
	"_init",
	"_fini",
	"frame_dummy",
	"register_tm_clones",
	"deregister_tm_clones",
	"__do_global_dtors_aux",
	"__libc_csu_init",
	"__libc_csu_fini",
	"_dl_relocate_static_pie",
};

bool elfsym__is_startup_glue(const char *name)
{
	size_t i;

	if (!name)
		return false;
	/* i386 PIC helpers, one per register: __x86.get_pc_thunk.bx, .cx, ... */
	if (!strncmp(name, "__x86.get_pc_thunk.", strlen("__x86.get_pc_thunk.")))
		return true;
	for (i = 0; i < sizeof(startup_glue) / sizeof(startup_glue[0]); i++)
		if (!strcmp(name, startup_glue[i]))
			return true;
	return false;
}

bool elfsym__func_matches(const struct elf_func *f, const char *glob)
{
	uint32_t i;

	if (elfsym__match(glob, f->name) || elfsym__match(glob, f->raw_name))
		return true;
	for (i = 0; i < f->naliases; i++)
		if (elfsym__match(glob, f->aliases[i]))
			return true;
	return false;
}

bool elfsym__match(const char *glob, const char *name)
{
	return glob && name && fnmatch(glob, name, 0) == 0;
}

void elfsym__free(struct elf_funcs *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->n; i++) {
		uint32_t j;

		free(f->v[i].name);
		free(f->v[i].raw_name);
		for (j = 0; j < f->v[i].naliases; j++)
			free(f->v[i].aliases[j]);
		free(f->v[i].aliases);
	}
	for (i = 0; i < f->nifuncs; i++)
		free(f->ifuncs[i]);
	free(f->ifuncs);
	free(f->segs);
	free(f->plts);
	free(f->build_id);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

/* Sections a function may be traced in: executable code, but not the PLT stubs. */
static bool section_is_code(Elf *elf, size_t shstrndx, Elf_Scn *scn)
{
	GElf_Shdr shdr;
	const char *name;

	if (!gelf_getshdr(scn, &shdr))
		return false;
	if (shdr.sh_type != SHT_PROGBITS || !(shdr.sh_flags & SHF_EXECINSTR))
		return false;
	name = elf_strptr(elf, shstrndx, shdr.sh_name);
	if (!name)
		return true;
	return strcmp(name, ".plt") && strcmp(name, ".plt.sec") && strcmp(name, ".plt.got") &&
	       strcmp(name, ".iplt");
}

/*
 * GCC splits unlikely paths into "foo.cold" / "foo.cold.3": entered by a jump
 * from foo, not by a call, so there is no return address on the stack.
 */
bool elfsym_is_cold_fragment(const char *name)
{
	const char *p = name;

	while ((p = strstr(p, ".cold"))) {
		p += strlen(".cold");
		if (*p == '\0' || *p == '.')
			return true;
	}
	return false;
}

static int load_segments(Elf *elf, struct elf_seg **segs, size_t *nsegs)
{
	size_t phnum, i;
	GElf_Phdr phdr;

	*segs = NULL;
	*nsegs = 0;
	if (elf_getphdrnum(elf, &phnum))
		return -ENOEXEC;
	*segs = xcalloc(phnum, sizeof(**segs));
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, i, &phdr))
			return -ENOEXEC;
		if (phdr.p_type != PT_LOAD)
			continue;
		(*segs)[*nsegs].vaddr = phdr.p_vaddr;
		(*segs)[*nsegs].filesz = phdr.p_filesz;
		(*segs)[*nsegs].offset = phdr.p_offset;
		(*nsegs)++;
	}
	return 0;
}

/* File offset of `addr`, or -1 when no PT_LOAD maps it from the file (e.g. .bss). */
int64_t elfsym_seg_offset(const struct elf_seg *segs, size_t nsegs, uint64_t addr)
{
	size_t i;

	for (i = 0; i < nsegs; i++)
		if (addr >= segs[i].vaddr && addr - segs[i].vaddr < segs[i].filesz)
			return (int64_t)(addr - segs[i].vaddr + segs[i].offset);
	return -1;
}

/* Aliases end up adjacent with the preferred name first. */
/*
 * The names already given to one function, while its aliases are collected:
 * a hash set, so that 160,000 aliases of one address (generated code) cost
 * linear time, not quadratic.  Slots carry the generation (the function)
 * that filled them, so moving to the next function clears nothing.
 */
struct name_set {
	struct name_slot {
		const char *name;
		uint32_t gen;
	} *slot;
	size_t cap, n;		/* cap: a power of two */
	uint32_t gen;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* Starts the set of a new function. */
static void name_set_next(struct name_set *ns)
{
	ns->gen++;
	ns->n = 0;
}

/* Adds name (not copied); false when it is in the set already. */
static bool name_set_add(struct name_set *ns, const char *name)
{
	size_t i, mask;

	if ((ns->n + 1) * 2 > ns->cap) {
		struct name_set grown = { .cap = ns->cap ? ns->cap * 2 : 64, .gen = ns->gen };

		grown.slot = xcalloc(grown.cap, sizeof(*grown.slot));
		for (i = 0; i < ns->cap; i++)
			if (ns->slot[i].gen == ns->gen && ns->slot[i].name)
				name_set_add(&grown, ns->slot[i].name);
		free(ns->slot);
		*ns = grown;
	}
	mask = ns->cap - 1;
	for (i = name_hash(name) & mask; ns->slot[i].gen == ns->gen && ns->slot[i].name;
	     i = (i + 1) & mask)
		if (!strcmp(ns->slot[i].name, name))
			return false;
	ns->slot[i].name = name;
	ns->slot[i].gen = ns->gen;
	ns->n++;
	return true;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	size_t lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* a name that can be probed is the one that decides (a sized one) */
	if ((x->flags & ELFSYM_F_NOPROBE) != (y->flags & ELFSYM_F_NOPROBE))
		return x->flags & ELFSYM_F_NOPROBE ? 1 : -1;
	if ((x->name[0] == '_') != (y->name[0] == '_'))
		return x->name[0] == '_' ? 1 : -1;
	if (x->bind_rank != y->bind_rank)
		return x->bind_rank - y->bind_rank;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Appends the function symbols of one symbol table section to `*cands`. */
void elfsym_add_ifunc(struct elf_funcs *out, const char *name)
{
	size_t i;

	for (i = 0; i < out->nifuncs; i++)
		if (!strcmp(out->ifuncs[i], name))
			return;	/* another version of it */
	out->ifuncs = xrealloc(out->ifuncs, (out->nifuncs + 1) * sizeof(*out->ifuncs));
	out->ifuncs[out->nifuncs++] = xstrdup(name);
}

struct cand *elfsym_new_cand(struct cands *cs)
{
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? cs->cap * 2 : 256;
		cs->v = xrealloc(cs->v, cs->cap * sizeof(*cs->v));
	}
	memset(&cs->v[cs->n], 0, sizeof(cs->v[0]));
	return &cs->v[cs->n++];
}

static int collect_syms(Elf *elf, Elf_Scn *symscn, const bool *code_scn, size_t nscn,
			const struct elf_seg *segs, size_t nsegs, uint32_t source,
			struct cands *cs, struct elf_funcs *out)
{
	GElf_Shdr shdr;
	Elf_Data *data;
	size_t i, nsyms;
	GElf_Sym sym;

	if (!gelf_getshdr(symscn, &shdr) || !shdr.sh_entsize)
		return -ENOEXEC;
	data = elf_getdata(symscn, NULL);
	if (!data)
		return -ENOEXEC;
	nsyms = shdr.sh_size / shdr.sh_entsize;

	for (i = 0; i < nsyms; i++) {
		struct cand *c;
		const char *name;
		int64_t off;
		int bind;

		if (!gelf_getsym(data, i, &sym))
			continue;
		if (GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC && sym.st_shndx != SHN_UNDEF) {
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (name && *name)
				elfsym_add_ifunc(out, name);
			out->ifunc_source = source;
			continue;
		}
		/* NOTYPE without a size: an assembly label (ld.so's _start), for samples */
		if ((GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		     (GELF_ST_TYPE(sym.st_info) != STT_NOTYPE || sym.st_size)) || !sym.st_value)
			continue;
		/* SHN_UNDEF: imported; SHN_ABS/SHN_XINDEX...: not code we can map */
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
		    sym.st_shndx >= nscn || !code_scn[sym.st_shndx])
			continue;
		name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		off = elfsym_seg_offset(segs, nsegs, sym.st_value);
		if (off < 0)
			continue;

		c = elfsym_new_cand(cs);
		c->source = source;
		bind = GELF_ST_BIND(sym.st_info);
		c->name = name;
		c->addr = sym.st_value;
		c->size = sym.st_size;
		c->offset = (uint64_t)off;
		c->bind_rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
		c->flags = bind == STB_WEAK ? ELFSYM_F_WEAK : bind == STB_LOCAL ? ELFSYM_F_LOCAL : 0;
		if (!sym.st_size || elfsym_is_cold_fragment(name))
			c->flags |= ELFSYM_F_NOPROBE;
	}
	return 0;
}

static char *demangle(const char *raw, uint32_t *flags)
{
	char *d;
	int status = 0;

	if (strncmp(raw, "_Z", 2))
		return xstrdup(raw);
	d = __cxa_demangle(raw, NULL, NULL, &status);
	if (!d || status) {
		free(d);
		return xstrdup(raw);
	}
	*flags |= ELFSYM_F_DEMANGLED;
	return d;
}

/* Where a function's first bytes are read from: a descriptor, or an image in memory. */
struct bytes_src {
	int fd;			/* -1: img */
	const uint8_t *img;
	size_t len;
};

static ssize_t read_bytes(const struct bytes_src *b, void *buf, size_t want, uint64_t off)
{
	if (b->fd >= 0)
		return pread(b->fd, buf, want, (off_t)off);
	if (off >= b->len)
		return 0;
	if (want > b->len - off)
		want = b->len - off;
	memcpy(buf, b->img + off, want);
	return (ssize_t)want;
}

static void fill_func(struct elf_func *f, const struct cand *c, const struct bytes_src *b,
		      bool x86_64)
{
	uint8_t code[INSN_PEEK];
	size_t want = c->size < INSN_PEEK ? c->size : INSN_PEEK;
	ssize_t got;

	f->raw_name = xstrdup(c->name);
	f->addr = c->addr;
	f->size = c->size;
	f->offset = c->offset;
	f->flags = c->flags;
	f->name = demangle(c->name, &f->flags);
	if (elfsym__is_startup_glue(c->name))
		f->flags |= ELFSYM_F_STARTUP;
	f->insn = ELFSYM_INSN_OTHER;
	if (!x86_64)
		return;
	/* only the function's own bytes: a 1-byte "ret" must not borrow its neighbour's */
	got = read_bytes(b, code, want, c->offset);
	if (got > 0)
		f->insn = elfsym__classify_insn(code, (size_t)got);
	f->insn_next = ELFSYM_INSN_OTHER;
	if (f->insn == ELFSYM_INSN_ENDBR64 && got > 4)
		f->insn_next = elfsym__classify_insn(code + 4, (size_t)got - 4);
	if (got > 0) {
		f->go_prologue = elfsym__go_prologue(code, (size_t)got);
		if (f->go_prologue && f->go_prologue < (size_t)got)
			f->insn_next = elfsym__classify_insn(code + f->go_prologue,
							     (size_t)got - f->go_prologue);
	}
}

int64_t elfsym__addr_to_offset(const struct elf_funcs *f, uint64_t addr)
{
	return elfsym_seg_offset(f->segs, f->nsegs, addr);
}

int elfsym__func_at(const char *path, const char *name, uint64_t addr, uint64_t offset,
		    struct elf_func *out)
{
	struct cand c = { .name = name, .addr = addr, .size = INSN_PEEK, .offset = offset };
	int fd = open_binary(path, NULL);
	struct bytes_src b = { .fd = fd };

	memset(out, 0, sizeof(*out));
	if (fd < 0)
		return fd;
	fill_func(out, &c, &b, true);
	out->size = 0;	/* unknown: no symbol */
	out->flags |= ELFSYM_F_IFUNC;
	close(fd);
	return 0;
}

/*
 * The ELF header of an executable or shared library, and its program and
 * section header tables within the file (file_size bytes): *ehdr, the
 * section names' index and the sections' count.  0, or -ENOEXEC (said).
 */
static int check_headers(const char *path, Elf *elf, uint64_t file_size, GElf_Ehdr *ehdr,
			 size_t *shstrndx, size_t *nscn)
{
	size_t nphdr = 0;

	if (!gelf_getehdr(elf, ehdr)) {
		p_err("%s: corrupt ELF header: %s", path, elf_errmsg(-1));
		return -ENOEXEC;
	}
	if (ehdr->e_type != ET_EXEC && ehdr->e_type != ET_DYN) {
		p_err("%s: ELF type %u is not an executable or shared library", path,
		      (unsigned int)ehdr->e_type);
		return -ENOEXEC;
	}
	if (elf_getshdrstrndx(elf, shstrndx) || elf_getshdrnum(elf, nscn) ||
	    elf_getphdrnum(elf, &nphdr)) {
		p_err("%s: corrupt ELF headers: %s", path, elf_errmsg(-1));
		return -ENOEXEC;
	}
	/*
	 * libelf reports a section header table cut short by the end of the
	 * file as zero sections, not as an error: a truncated file would look
	 * like one without symbols.  e_shnum is 0 only with extended numbering,
	 * where libelf's count comes from section 0 and is the one to check.
	 */
	if (ehdr->e_phoff + (uint64_t)nphdr * ehdr->e_phentsize > file_size ||
	    ehdr->e_shoff + (uint64_t)(ehdr->e_shnum ? ehdr->e_shnum : *nscn) * ehdr->e_shentsize >
		    file_size) {
		p_err("%s: truncated ELF file", path);
		return -ENOEXEC;
	}
	return 0;
}

/*
 * One pass over the sections: which hold code (code_scn, nscn entries; their
 * ranges appended to *code), where the symbol tables are, the PLTs and
 * whether it is a Go binary (out).
 */
static void scan_sections(Elf *elf, size_t shstrndx, size_t nscn, bool *code_scn, Elf_Scn **symtab,
			  Elf_Scn **dynsym, struct code_range **code, size_t *ncode,
			  struct elf_funcs *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		size_t idx = elf_ndxscn(scn);

		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_type == SHT_PROGBITS) {
			const char *name = elf_strptr(elf, shstrndx, shdr.sh_name);

			if (name && (!strcmp(name, ".go.buildinfo") || !strcmp(name, ".gopclntab")))
				out->go = true;
		}
		if (shdr.sh_type == SHT_SYMTAB && !*symtab)
			*symtab = scn;
		else if (shdr.sh_type == SHT_DYNSYM && !*dynsym)
			*dynsym = scn;
		if (idx < nscn)
			code_scn[idx] = section_is_code(elf, shstrndx, scn);
		if (idx < nscn && shdr.sh_type == SHT_PROGBITS && (shdr.sh_flags & SHF_EXECINSTR) &&
		    !code_scn[idx] && shdr.sh_size) {
			/* a PLT: sampled stacks name its stubs (symbolize.c) */
			out->plts = xrealloc(out->plts, (out->nplts + 1) * sizeof(*out->plts));
			out->plts[out->nplts].vaddr = shdr.sh_addr;
			out->plts[out->nplts].filesz = shdr.sh_size;
			out->plts[out->nplts++].offset = shdr.sh_offset;
		}
		if (idx < nscn && code_scn[idx]) {
			*code = xrealloc(*code, (*ncode + 1) * sizeof(**code));
			(*code)[*ncode].addr = shdr.sh_addr;
			(*code)[(*ncode)++].size = shdr.sh_size;
		}
	}
}

/* elf's build-id in hex (malloc'd), NULL: none. */
static char *build_id_of(Elf *elf)
{
	char id[96];

	debugsyms__build_id(elf, id, sizeof(id));
	return *id ? xstrdup(id) : NULL;
}

/*
 * The work of elfsym__read() on elf, open from `path`: fd its descriptor and
 * st its fstat, or fd -1 and st NULL for an image in memory (elfsym__read_elf).
 */
static int read_elf(const char *path, Elf *elf, int fd, const struct stat *st,
		    struct elf_funcs *out)
{
	struct elf_seg *segs = NULL;
	struct cands cs = { 0 };
	struct name_set names = { 0 };
	struct cand *cands;
	struct code_range *code = NULL;
	bool *code_scn = NULL;
	size_t nsegs = 0, ncands = 0, ncode = 0, nscn = 0, shstrndx, i, n;
	Elf_Scn *symtab = NULL, *dynsym = NULL;
	struct bytes_src bytes = { .fd = fd };
	uint64_t file_size;
	GElf_Ehdr ehdr;
	/* in messages, the file the user named, not the /proc/self/fd/N it is read through */
	const char *shown = binfile__name(path);
	int err;

	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		p_err("%s: not an ELF file", shown);
		err = -ENOEXEC;
		goto cleanup;
	}
	if (st) {
		file_size = (uint64_t)st->st_size;
	} else {
		bytes.img = (const uint8_t *)elf_rawfile(elf, &bytes.len);
		file_size = bytes.len;
	}
	err = check_headers(shown, elf, file_size, &ehdr, &shstrndx, &nscn);
	if (err)
		goto cleanup;
	err = load_segments(elf, &segs, &nsegs);
	if (err) {
		p_err("%s: corrupt ELF program headers: %s", shown, elf_errmsg(-1));
		goto cleanup;
	}

	/* one pass over the sections: which hold code, and where the symbol tables are */
	code_scn = xcalloc(nscn, sizeof(*code_scn));
	scan_sections(elf, shstrndx, nscn, code_scn, &symtab, &dynsym, &code, &ncode, out);

	if (symtab || dynsym) {
		err = collect_syms(elf, symtab ? symtab : dynsym, code_scn, nscn, segs, nsegs,
				   symtab ? SYMSRC_SYMTAB : SYMSRC_DYNSYM, &cs, out);
		if (err) {
			p_err("%s: corrupt symbol table: %s", shown, elf_errmsg(-1));
			goto cleanup;
		}
	}
	/* stripped: names from the debug sources, then the functions only an FDE knows */
	if (!symtab) {
		const struct debug_names *dn = debugsyms__names(path, elf, st);

		if (dn)
			elfsym_add_debug_names(dn, code, ncode, segs, nsegs, &cs, out);
		elfsym_add_unnamed(elf, path, ehdr.e_entry, code, ncode, segs, nsegs, &cs);
	}
	cands = cs.v;
	ncands = cs.n;
	if (!ncands) {
		err = -ENODATA;
		goto cleanup;
	}

	qsort(cands, ncands, sizeof(*cands), cand_cmp);
	elfsym_size_unsized(cands, ncands, code, ncode);
	out->v = xcalloc(ncands, sizeof(*out->v));
	for (i = 0, n = 0; i < ncands; i++) {
		if (n && out->v[n - 1].addr == cands[i].addr) {
			struct elf_func *f = &out->v[n - 1];
			uint32_t k = f->naliases;

			/* the same symbol listed twice (versions) is not an alias */
			if (!name_set_add(&names, cands[i].name))
				continue;
			/* capacity doubles at each power of two: no field needed to keep it */
			if (!(k & (k - 1)))
				f->aliases = xrealloc(f->aliases, (k ? 2 * k : 1) * sizeof(*f->aliases));
			f->aliases[f->naliases++] = xstrdup(cands[i].name);
			f->flags |= ELFSYM_F_ALIASED;
			continue;
		}
		name_set_next(&names);
		name_set_add(&names, cands[i].name);
		fill_func(&out->v[n++], &cands[i], &bytes, ehdr.e_machine == EM_X86_64);
		out->v[n - 1].source = cands[i].source;
	}
	out->n = n;
	out->from_dynsym = !symtab;
	out->pie = ehdr.e_type == ET_DYN;
	out->build_id = build_id_of(elf);
	/* (out->go was set by the section pass) */
	out->segs = segs;	/* for elfsym__addr_to_offset() */
	out->nsegs = nsegs;
	segs = NULL;
	err = 0;

cleanup:
	if (err)
		elfsym__free(out);
	free(cs.v);
	for (i = 0; i < cs.nowned; i++)
		free(cs.owned[i]);
	free(cs.owned);
	free(code);
	free(names.slot);
	free(code_scn);
	free(segs);
	return err;
}

int elfsym__read_elf(const char *name, Elf *elf, struct elf_funcs *out)
{
	memset(out, 0, sizeof(*out));
	return read_elf(name, elf, -1, NULL, out);
}

int elfsym__read(const char *path, struct elf_funcs *out)
{
	struct stat st;
	Elf *elf;
	int fd, err;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE) {
		p_err("%s: libelf initialisation failed: %s", path, elf_errmsg(-1));
		return -EINVAL;
	}
	/* non-blocking: a FIFO named as a binary must not hang the open */
	fd = open_binary(path, &st);
	if (fd == -ENOEXEC)
		p_err("%s: not a regular file", binfile__name(path));
	if (fd < 0)
		return fd;
	/*
	 * Read with pread, not mapped: the file is its owner's, who may truncate
	 * it while it is read (a mapping would then be a SIGBUS).
	 */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	err = read_elf(path, elf, fd, &st, out);
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}
