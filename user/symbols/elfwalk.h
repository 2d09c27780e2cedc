/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The entries of an ELF file's tables (symbols, relocations, dynamic
 * entries), section after section, through libelf: a caller writes what it
 * looks for in an entry, not the walk over sections and their data.
 *
 *	struct elfwalk w;
 *	GElf_Sym sym;
 *
 *	elfwalk__init(&w, elf, ELFWALK_SYMBOLS);
 *	while (elfwalk__next(&w))
 *		if (gelf_getsym(w.data, w.i, &sym)) ...
 */
#ifndef BPFPROF_ELFWALK_H
#define BPFPROF_ELFWALK_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

#define ELFWALK_TYPE(t)		(1u << (t))
#define ELFWALK_SYMBOLS		(ELFWALK_TYPE(SHT_SYMTAB) | ELFWALK_TYPE(SHT_DYNSYM))

struct elfwalk {
	Elf *elf;
	uint32_t types;		/* ELFWALK_TYPE() of the section types walked */
	Elf_Scn *scn;
	GElf_Shdr sh;		/* the current entry's section (sh_link: its string table) */
	Elf_Data *data;		/* and its data, for gelf_getsym() & co. */
	size_t i, n;		/* the current entry's index, the section's count */
};

void elfwalk__init(struct elfwalk *w, Elf *elf, uint32_t types);
/* Moves to the next entry (w->data, w->i): false when there is none left. */
bool elfwalk__next(struct elfwalk *w);
/* The current symbol table entry's name (w->sh.sh_link's strings), or NULL. */
const char *elfwalk__name(const struct elfwalk *w, uint32_t offset);

#endif
