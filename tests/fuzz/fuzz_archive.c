// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the archive reader: any bytes given to archive__open()
 * and archive__next() must end in an event stream and 0, or an error, never a
 * crash, a leak, a hang or an unbounded allocation.  Every index an event
 * carries must be usable as the reader promises (call paths walk to the root).
 *
 *   make fuzz          long run (FUZZ_TIME=600 seconds)
 *   make fuzz-smoke    30 s, part of make test
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz_util.h"
#include "archive/archive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct archive_reader *r = NULL;
	struct bp_session s;
	struct bp_event ev;
	uint32_t funcs[64];
	char path[64];
	int fd, err;

	fd = fuzz__memfd(data, size, path, sizeof(path));

	fuzz__quiet();

	err = archive__open(path, false, &s, &r);
	if (!err) {
		while ((err = archive__next(r, &ev)) > 0) {
			if (ev.kind != BP_EV_CALL)
				continue;
			if (ev.call.func >= s.nfuncs || (ev.call.path && ev.call.path >= s.npaths))
				abort();
			session__path_funcs(&s, ev.call.path, funcs, 64);
			if (!session__func_name(&s, ev.call.func))
				abort();
		}
		archive__close(r);
		session__free(&s);
	}
	fuzz__loud();
	close(fd);
	return 0;
}
