// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the reader of a binary's DWARF subprograms
 * (user/symbols/dwarfinfo.c: parameter counts for --deps, file:line): any
 * bytes given as a binary with debug information must give a table sorted
 * by address in which each entry is found again, or nothing -- never a
 * crash, a leak, UB or a hang.  Seeds: the test programs (built with -g)
 * and the debug-only copy of one (objcopy --only-keep-debug).
 *
 *   make fuzz          long runs of every target (FUZZ_TIME seconds each)
 *   make fuzz-smoke    a few seconds of each, part of make test
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "fuzz_elf.h"
#include "fuzz_util.h"
#include "symbols/dwarfinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarf_funcs df;
	char *copy;
	size_t i;
	Elf *elf;

	/* an image in memory (fuzz_elf.h): ASan sees a read past it */
	elf = fuzz__elf(data, size, &copy);
	fuzz__quiet();
	if (!dwarfinfo__read_elf(elf, &df)) {
		for (i = 0; i < df.n; i++)
			if ((i && df.v[i].addr < df.v[i - 1].addr) ||
			    !dwarfinfo__find(&df, df.v[i].addr) || df.v[i].nparams < -1)
				abort();
		dwarfinfo__free(&df);
	}
	fuzz__loud();
	if (elf)
		elf_end(elf);
	free(copy);
	return 0;
}
