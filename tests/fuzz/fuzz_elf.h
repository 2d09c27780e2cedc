/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The input of an ELF-reading fuzz target as an ELF image in memory:
 * libelf's elf_memory on an exactly-sized heap copy, so that ASan sees any
 * read past the end of the input.  Through a memfd mapped by libelf
 * (ELF_C_READ_MMAP) a read past a section but inside the last page was
 * invisible (the 4 bytes .gopclntab read past its end went unseen).
 * Inline here: fuzz_util.c is also linked into targets without libelf.
 */
#ifndef BPFPROF_FUZZ_ELF_H
#define BPFPROF_FUZZ_ELF_H

#include <stdlib.h>
#include <string.h>
#include <libelf.h>

/* NULL when libelf will not take it; *copy is set either way, for free() after elf_end(). */
static inline Elf *fuzz__elf(const void *data, size_t size, char **copy)
{
	*copy = malloc(size ? size : 1);
	if (!*copy)
		abort();
	if (size)
		memcpy(*copy, data, size);
	elf_version(EV_CURRENT);
	return size ? elf_memory(*copy, size) : NULL;
}

#endif
