// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The SIGS section (format 1.3): each function's typed signature
 * (model/argsig.h), in a section of its own so that older readers skip it.
 * Written by writer.c (write_sigs).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "internal.h"
#include "model/session.h"

/* 1.3: SIGS, the typed signatures of functions already read (writer.c, write_sigs). */
int archive_read_sigs(struct archive_reader *r)
{
	struct bp_session *s = r->s;
	uint32_t n, i, func;
	char *sig;
	int err;

	err = archive_rd_u32(r, &n);
	if (!err && (uint64_t)n * 8 > r->left)
		return corrupt(r, "%" PRIu32 " signatures in a section of %" PRIu64 " bytes", n,
			       (uint64_t)r->left);
	for (i = 0; !err && i < n; i++) {
		err = archive_rd_u32(r, &func);
		if (!err)
			err = archive_rd_str(r, &sig);
		if (err)
			break;
		if (func >= s->nfuncs || !sig) {
			free(sig);
			return corrupt(r, "a signature names function %" PRIu32 " of %zu", func,
				       s->nfuncs);
		}
		free(s->funcs[func].sig);
		s->funcs[func].sig = sig;
	}
	return err;
}
