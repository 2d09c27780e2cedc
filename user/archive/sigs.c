// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The SIGS section (format 1.3): each function's typed signature
 * (model/argsig.h), in a section of its own so that older readers skip it.
 * Written by writer.c (write_sigs).  And the BUILDIDS section (1.4): each
 * module's build-id, which bpfprof symbolize looks debug files up by.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
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

/* 1.4: BUILDIDS, the build-ids of modules already read (writer.c, write_build_ids). */
int archive_read_build_ids(struct archive_reader *r)
{
	struct bp_session *s = r->s;
	uint32_t n, i, mod;
	char *id;
	int err;

	err = archive_rd_u32(r, &n);
	if (!err && (uint64_t)n * 8 > r->left)
		return corrupt(r, "%" PRIu32 " build-ids in a section of %" PRIu64 " bytes", n,
			       (uint64_t)r->left);
	for (i = 0; !err && i < n; i++) {
		err = archive_rd_u32(r, &mod);
		if (!err)
			err = archive_rd_str(r, &id);
		if (err)
			break;
		if (mod >= s->nmodules || !id || !*id || strlen(id) > ARCHIVE_MAX_BUILD_ID ||
		    strspn(id, "0123456789abcdef") != strlen(id)) {
			free(id);
			return corrupt(r, "a build-id for module %" PRIu32 " of %zu is not a build-id",
				       mod, s->nmodules);
		}
		free(s->modules[mod].build_id);
		s->modules[mod].build_id = id;
	}
	return err;
}
