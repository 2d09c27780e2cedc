// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The replay loop (see replay.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <stddef.h>
#include "archive.h"
#include "replay.h"
#include "base/log.h"
#include "report/diff.h"
#include "report/report.h"

/* Events between two calls of a progress hook: its cost is nothing beside theirs. */
#define PROGRESS_EVERY	65536

static int run(const char *path, const struct event_filter *f, struct bp_session *s,
	       int (*begin)(void *ctx, struct bp_session *s), replay_fn fn, void *ctx,
	       uint64_t *nkept, const struct replay_progress *pr)
{
	struct archive_reader *r = NULL;
	struct bp_event ev;
	uint64_t kept = 0, n = 0;
	int err;

	err = archive__open(path, s, &r);
	if (err)
		goto out;
	if (begin) {
		err = begin(ctx, s);
		if (err)
			goto out;
	}
	while ((err = archive__next(r, &ev)) > 0) {
		if (pr && ++n % PROGRESS_EVERY == 0) {
			uint64_t done, size;

			archive__progress(r, &done, &size);
			pr->fn(pr->ctx, done, size, n);
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
	archive__close(r);
	if (nkept)
		*nkept = kept;
	return err;
}

int replay__run(const char *path, const struct event_filter *f, struct bp_session *s,
		int (*begin)(void *ctx, struct bp_session *s), replay_fn fn, void *ctx,
		uint64_t *nkept)
{
	return run(path, f, s, begin, fn, ctx, nkept, NULL);
}

struct export_ctx {
	const struct exporter_ops *ops;
	const char *out;
	struct exporter *e;
};

static int export_begin(void *ctx, struct bp_session *s)
{
	struct export_ctx *x = ctx;

	return exporter__new(x->ops, x->out, s, &x->e);
}

static int export_event(void *ctx, const struct bp_session *s, const struct bp_event *ev)
{
	struct export_ctx *x = ctx;

	return exporter__event(x->e, s, ev);
}

int replay__export(const char *path, const struct event_filter *f, const struct exporter_ops *ops,
		   const char *out, uint64_t *nkept)
{
	struct export_ctx x = { .ops = ops, .out = out };
	struct bp_session s;
	int err;

	session__init(&s);
	err = replay__run(path, f, &s, export_begin, export_event, &x, nkept);
	if (!err)
		err = exporter__finish(x.e, &s);
	exporter__free(x.e);
	session__free(&s);
	return err;
}

struct report_ctx {
	const char *path;
	struct report *rep;
};

static int report_event(void *ctx, const struct bp_session *s, const struct bp_event *ev)
{
	struct report_ctx *x = ctx;
	int err = report__add(x->rep, s, ev);

	if (err)
		p_err("%s: corrupt archive: a call of unknown function %u", x->path, ev->call.func);
	return err;
}

int replay__report(const char *path, const struct event_filter *f, struct bp_session *s,
		   struct report *rep)
{
	return replay__report_progress(path, f, s, rep, NULL);
}

int replay__report_progress(const char *path, const struct event_filter *f, struct bp_session *s,
			    struct report *rep, const struct replay_progress *pr)
{
	struct report_ctx x = { .path = path, .rep = rep };

	return run(path, f, s, NULL, report_event, &x, NULL, pr);
}

/* One side being read: by the main thread (base) and a second one (new). */
struct side_job {
	struct diff *d;
	int side;
	char **paths;		/* its recordings, read one after the other */
	size_t npaths;
	const char *path;	/* the one being read */
	int err;
};

static int add_event(void *ctx, const struct bp_session *s, const struct bp_event *ev)
{
	struct side_job *j = ctx;
	int err = diff__add(j->d, j->side, s, ev);

	if (err)
		p_err("%s: corrupt archive: an event names an unknown function or call path",
		      j->path);
	return err;
}

/*
 * Streams a side's archives into it, one after the other (the replay loop,
 * no filter), each folded in by diff__side_done() once read: that takes the
 * diff's lock, so the other side's thread may fold at the same time.
 */
static void *read_side(void *arg)
{
	struct side_job *j = arg;
	struct bp_session s;
	size_t i;

	for (i = 0; i < j->npaths && !j->err; i++) {
		j->path = j->paths[i];
		session__init(&s);
		/* the reader or add_event() printed why, in one line */
		j->err = replay__run(j->path, NULL, &s, NULL, add_event, j, NULL);
		if (!j->err) {
			j->err = diff__side_done(j->d, j->side, &s, j->path);
			if (j->err)
				p_err("%s: corrupt archive: its call paths are not a tree", j->path);
		}
		session__free(&s);
	}
	return NULL;
}

/*
 * Both sides at once, one thread each: reading (inflating, decoding) is
 * nearly all of the time, and the sides share nothing until a recording is
 * read.
 */
int replay__diff(struct diff *d, char **base, size_t nbase, char **new, size_t nnew)
{
	struct side_job j[2] = {
		{ .d = d, .side = 0, .paths = base, .npaths = nbase },
		{ .d = d, .side = 1, .paths = new, .npaths = nnew },
	};
	pthread_t t;
	bool threaded;

	threaded = !pthread_create(&t, NULL, read_side, &j[1]);
	read_side(&j[0]);
	if (threaded)
		pthread_join(t, NULL);
	else
		read_side(&j[1]);
	return j[0].err ? j[0].err : j[1].err;
}
