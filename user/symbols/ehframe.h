/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Function discovery without a symbol table: every function the compiler
 * emitted unwind information for has an FDE in .eh_frame.  libdw walks the
 * entries (dwarf_next_cfi) and runs their CFA programs (dwarf_cfi_addrframe),
 * which tells a function entry from a fragment jumped to mid-function; only
 * the FDE's pointer encoding (a CIE augmentation) is decoded here.
 */
#ifndef BPFPROF_EHFRAME_H
#define BPFPROF_EHFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

struct fde_range {
	uint64_t start;		/* link-time address of the first instruction */
	uint64_t end;		/* one past the last */
	bool entry;		/* starts in the state right after a call (see ehframe__funcs) */
};

/*
 * The FDE ranges of `elf` (x86-64 only; other machines: none).  `entry` is
 * set where the start is a function entry as far as the CFI says: CFA =
 * rsp + 8 and the return address at CFA - 8, not a signal frame.  Only there
 * does a uretprobe replace a return address and nothing else, whatever the
 * code is; the others only name samples.  Sorted by start.
 * *out is NULL and *n 0 when the file has no .eh_frame section.
 * A file whose CFI cannot be read simply has none.
 */
void ehframe__funcs(Elf *elf, struct fde_range **out, size_t *n);

#endif
