// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The replay loop (see replay.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <stddef.h>
#include "archive.h"
#include "replay.h"
#include "base/log.h"
#include "base/status.h"

/* Events between two calls of a progress hook: its cost is nothing beside theirs. */
#define PROGRESS_EVERY	65536

static int run(const char *path, bool partial, const struct event_filter *f,
	       struct bp_session *s, int (*begin)(void *ctx, struct bp_session *s), replay_fn fn,
	       void *ctx, uint64_t *nkept, const struct replay_progress *pr)
{
	struct archive_reader *r = NULL;
	struct bp_event ev;
	struct status_read sr;
	uint64_t kept = 0, n = 0;
	int err;

	/* without a hook of the caller's, the status line says how far it has read */
	if (!pr)
		status__read_begin(&sr, path);
	err = archive__open(path, partial, s, &r);
	if (err)
		goto out;
	if (begin) {
		err = begin(ctx, s);
		if (err)
			goto out;
	}
	while ((err = archive__next(r, &ev)) > 0) {
		if (++n % PROGRESS_EVERY == 0) {
			uint64_t done, size;

			archive__progress(r, &done, &size);
			if (pr)
				pr->fn(pr->ctx, done, size, n);
			else
				status__read_tick(&sr, done, size, n);
		}
		if (!filter__keep(f, &ev))
			continue;
		err = fn(ctx, s, &ev);
		if (err)
			goto out;
		kept++;
	}
	if (!err)
		err = filter__check(f, s, path);
	if (!err)
		filter__tables(f, s);
out:
	if (!pr)
		status__read_end(&sr);
	archive__close(r);
	if (nkept)
		*nkept = kept;
	return err;
}

int replay__run(const char *path, bool partial, const struct event_filter *f,
		struct bp_session *s, int (*begin)(void *ctx, struct bp_session *s), replay_fn fn,
		void *ctx, uint64_t *nkept)
{
	return run(path, partial, f, s, begin, fn, ctx, nkept, NULL);
}

int replay__run_progress(const char *path, bool partial, const struct event_filter *f,
			 struct bp_session *s, replay_fn fn, void *ctx,
			 const struct replay_progress *pr)
{
	return run(path, partial, f, s, NULL, fn, ctx, NULL, pr);
}
