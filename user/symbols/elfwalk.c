// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The entries of an ELF file's tables, section after section (elfwalk.h). */
#include <stddef.h>
#include "elfwalk.h"

void elfwalk__init(struct elfwalk *w, Elf *elf, uint32_t types)
{
	*w = (struct elfwalk){ .elf = elf, .types = types };
}

bool elfwalk__next(struct elfwalk *w)
{
	if (w->data && ++w->i < w->n)
		return true;
	while (w->elf && (w->scn = elf_nextscn(w->elf, w->scn))) {
		if (!gelf_getshdr(w->scn, &w->sh) || w->sh.sh_type >= 32 ||
		    !(w->types & ELFWALK_TYPE(w->sh.sh_type)) || !w->sh.sh_entsize)
			continue;
		w->data = elf_getdata(w->scn, NULL);
		/* what libelf holds, not what a hostile header claims */
		w->n = w->data ? w->data->d_size / w->sh.sh_entsize : 0;
		w->i = 0;
		if (w->n)
			return true;
	}
	w->data = NULL;
	return false;
}

const char *elfwalk__name(const struct elfwalk *w, uint32_t offset)
{
	return elf_strptr(w->elf, w->sh.sh_link, offset);
}
