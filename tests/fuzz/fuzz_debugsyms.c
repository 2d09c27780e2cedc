// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the readers of stripped files (user/symbols/
 * debugsyms.c, ehframe.c): the build-id note, .gnu_debuglink (the name and
 * CRC of a debug file), MiniDebugInfo (.gnu_debugdata: an xz-compressed ELF
 * inside the ELF), Go's .gopclntab, and the function starts of .eh_frame.
 * Any bytes given as a binary must give names, ranges or nothing -- never
 * a crash, a leak, UB or a hang.  The input is an image in memory
 * (fuzz_elf.h: ASan sees a read past it), named as a file in a folder that
 * does not exist, so a debug link leads nowhere (a link naming a FIFO:
 * tests/unit/test_stripped.c); the names of such an image are never
 * cached, and the cache is emptied after each input anyway.  The crafted
 * regress-gopclntab-past-end (mkgopclntab.py --past-end) ends the file
 * with a function table that lacks its end entry.
 *
 * Seeds (tests/fuzz/seeds.sh): a stripped test program with a debug link,
 * the same with MiniDebugInfo, nosyms (.eh_frame only); the committed Go
 * seed (tests/fuzz/corpus_debugsyms/go-pclntab, see mkgopclntab.py).
 *
 *   make fuzz          long runs of every target (FUZZ_TIME seconds each)
 *   make fuzz-smoke    a few seconds of each, part of make test
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <gelf.h>
#include "fuzz_elf.h"
#include "fuzz_util.h"
#include "symbols/debugsyms.h"
#include "symbols/ehframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct debug_names *dn;
	struct fde_range *r = NULL;
	char *copy;
	Elf *elf;
	size_t i, n = 0;

	elf = fuzz__elf(data, size, &copy);
	fuzz__quiet();
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		/* (a debug link is looked for beside the name: a folder that is not there) */
		dn = debugsyms__names("/nonexistent/fuzz-input", elf, NULL);
		for (i = 0; dn && i < dn->n; i++)
			if (!dn->v[i].name)
				abort();
		ehframe__funcs(elf, &r, &n);
		for (i = 0; i < n; i++)
			if (r[i].end < r[i].start || (i && r[i].start < r[i - 1].start))
				abort();
		free(r);
	}
	if (elf)
		elf_end(elf);
	debugsyms__reset();
	fuzz__loud();
	free(copy);
	return 0;
}
