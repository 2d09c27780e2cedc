// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the USDT note reader: any bytes given to
 * usdt__notes() as a binary (its .note.stapsdt section: probe site, base,
 * semaphore, provider, name, argument spec) must end in a list of probes
 * or an error, never a crash, a leak or a hang.  Every probe it returns has
 * its three strings.  The seeds are the built test programs with bpfprof.h
 * probes (annotate, coldlabels) and committed regressions.
 *
 *   make fuzz          long runs of every target (FUZZ_TIME seconds each)
 *   make fuzz-smoke    a few seconds of each, part of make test
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "fuzz_elf.h"
#include "fuzz_util.h"
#include "probes/usdt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct usdt_notes notes;
	char *copy;
	size_t i;
	Elf *elf;

	/* an image in memory (fuzz_elf.h): ASan sees a read past it */
	elf = fuzz__elf(data, size, &copy);
	fuzz__quiet();
	if (!usdt__notes_elf(elf, &notes)) {
		for (i = 0; i < notes.n; i++) {
			if (!notes.v[i].provider || !notes.v[i].name || !notes.v[i].args)
				abort();
			(void)usdt__bpfprof_kind(notes.v[i].name);
		}
		usdt__notes_free(&notes);
	}
	fuzz__loud();
	if (elf)
		elf_end(elf);
	free(copy);
	return 0;
}
