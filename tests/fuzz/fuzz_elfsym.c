// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the ELF reader: any bytes given to elfsym__read_elf()
 * (elfsym__read's work on an image in memory, fuzz_elf.h) as a binary (symbols, program headers, .eh_frame FDEs, PLT sections, IFUNCs)
 * must end in a function table or an error, never a crash, a leak or a hang;
 * every function it returns must map to a file offset inside the file.
 *
 *   make fuzz FUZZER=elfsym     long run
 *   make fuzz-smoke             a few seconds of each target, part of make test
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz_elf.h"
#include "fuzz_util.h"
#include "symbols/debugsyms.h"
#include "symbols/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_funcs f;
	char *copy;
	size_t i;
	Elf *elf;

	elf = fuzz__elf(data, size, &copy);
	fuzz__quiet();
	/* (a debug link is looked for beside the name: a folder that is not there) */
	if (!elfsym__read_elf("/nonexistent/fuzz-input", elf, &f)) {
		for (i = 0; i < f.n; i++) {
			if (!f.v[i].name)
				abort();
			(void)elfsym__addr_to_offset(&f, f.v[i].addr);
		}
		elfsym__free(&f);
	}
	/* the stripped-file names are cached by build-id: parse them for every input */
	debugsyms__reset();
	fuzz__loud();
	if (elf)
		elf_end(elf);
	free(copy);
	return 0;
}
