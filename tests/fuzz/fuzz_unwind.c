// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the DWARF unwinder of sampled stacks (user/symbols/
 * unwind.c on libdw): the CFI of a mapped binary (.eh_frame, .eh_frame_hdr,
 * .debug_frame) and the registers and stack bytes a sample copied from the
 * traced process are all the traced program's to choose.  Any of them must
 * give frames and an end reason, never a crash, a leak, UB or a hang, and
 * never more frames than asked for.
 *
 * The input has three parts (fuzz__split): the load address (u64), the
 * stack copy's flags (u32) and the 17 registers (u64, DWARF order); the
 * stack bytes; the ELF file, mapped at the load address as the only module
 * (read from an exactly-sized copy with elf_memory, unwinder__set_image).
 * Seed: tests/fuzz/mkseed_unwind.c, a real stack four calls deep in a
 * program without frame pointers, with that program.
 *
 *   make fuzz          long runs of every target (FUZZ_TIME seconds each)
 *   make fuzz-smoke    a few seconds of each, part of make test
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include "fuzz_util.h"
#include "bpf/events.h"
#include "symbols/unwind.h"

#define MAX_FRAMES	64

static struct unwinder *u;
static uint64_t gen;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part parts[3];
	struct bp_ustack *us;
	uint64_t ips[MAX_FRAMES], base = 0;
	enum unwind_end end;
	static const char path[] = "/fuzz/input";
	char maps[256], *copy;
	uint32_t pid = getpid(), n;

	if (!u && unwinder__new(&u))
		abort();
	fuzz__split(data, size, parts, 3);
	us = calloc(1, sizeof(*us) + parts[1].len);
	if (!us)
		abort();
	if (parts[0].len >= 8)
		memcpy(&base, parts[0].p, 8);
	if (parts[0].len >= 12)
		memcpy(&us->flags, parts[0].p + 8, 4);
	if (parts[0].len > 12)
		memcpy(us->regs, parts[0].p + 12,
		       parts[0].len - 12 < sizeof(us->regs) ? parts[0].len - 12 : sizeof(us->regs));
	us->len = parts[1].len;
	if (parts[1].len)
		memcpy(us + 1, parts[1].p, parts[1].len);
	/* an exactly-sized copy read with elf_memory: ASan sees a read past it */
	copy = malloc(parts[2].len ? parts[2].len : 1);
	if (!copy)
		abort();
	if (parts[2].len)
		memcpy(copy, parts[2].p, parts[2].len);
	unwinder__set_image(u, path, copy, parts[2].len);
	/* one module, as /proc/PID/maps shows a file mapped from offset 0 */
	base &= ~0xfffull;
	snprintf(maps, sizeof(maps), "%llx-%llx r-xp 00000000 00:01 1 %s\n",
		 (unsigned long long)base, (unsigned long long)(base + 0x1000000), path);
	fuzz__quiet();
	n = unwinder__unwind(u, pid, pid, maps, ++gen, us, ips, MAX_FRAMES, &end);
	if (n > MAX_FRAMES || end >= UNWIND_NEND)
		abort();
	/* the next input's file has the same name: no Dwfl may outlive this one */
	unwinder__forget(u, pid);
	unwinder__set_image(u, NULL, NULL, 0);
	fuzz__loud();
	free(copy);
	free(us);
	return 0;
}
