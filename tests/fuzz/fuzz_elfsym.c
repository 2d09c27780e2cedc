// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the ELF reader: any bytes given to elfsym__read() as
 * a binary (symbols, program headers, .eh_frame FDEs, PLT sections, IFUNCs)
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
#include "fuzz_util.h"
#include "symbols/debugsyms.h"
#include "symbols/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_funcs f;
	char path[64];
	size_t i;
	int fd;

	fd = fuzz__memfd(data, size, path, sizeof(path));
	fuzz__quiet();
	if (!elfsym__read(path, &f)) {
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
	close(fd);
	return 0;
}
