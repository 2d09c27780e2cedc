// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The records that hold a process or thread, read for the live side (hold.h). */
#include <string.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "hold.h"

_Static_assert(sizeof(((struct hold *)0)->filename) == BP_PATH_LEN + 1, "hold.filename");

enum hold_kind hold__read(const void *rec, size_t size, struct hold *h)
{
	const struct bp_rec_hdr *hdr = rec;
	const struct bp_rec_exec *x = rec;
	const struct bp_rec_unwind *u = rec;

	h->kind = HOLD_NONE;
	if (size < sizeof(*hdr))
		return HOLD_NONE;
	switch (hdr->type) {
	case BP_REC_EXEC:
	case BP_REC_DLOPEN:
		if (size < sizeof(*x))
			return HOLD_NONE;
		h->kind = hdr->type == BP_REC_EXEC ? HOLD_EXEC : HOLD_DLOPEN;
		h->stopped = x->stopped;
		h->filename[0] = 0;
		if (h->kind == HOLD_EXEC) {
			memcpy(h->filename, x->filename, BP_PATH_LEN);
			h->filename[BP_PATH_LEN] = 0;
		}
		h->n = 0;
		h->slot = h->orig = NULL;
		break;
	case BP_REC_UNWIND:
	case BP_REC_REARM:
		if (size < sizeof(*u))
			return HOLD_NONE;
		h->kind = hdr->type == BP_REC_UNWIND ? HOLD_UNWIND : HOLD_REARM;
		h->stopped = u->stopped;
		h->filename[0] = 0;
		h->trampoline = u->trampoline;
		h->n = u->n < BP_UNWIND_SLOTS ? u->n : BP_UNWIND_SLOTS;
		h->slot = (const uint64_t *)u->slot;
		h->orig = (const uint64_t *)u->orig;
		break;
	default:
		return HOLD_NONE;
	}
	h->pid = hdr->pid_tgid >> 32;
	h->tid = (uint32_t)hdr->pid_tgid;
	h->ts = hdr->ts;
	return h->kind;
}
