// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Recordings read into a report or a diff, through the one replay loop
 * (archive/replay.h): the report and the diff read the archive, never the
 * other way round.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include "diff.h"
#include "report.h"
#include "internal.h"
#include "archive/replay.h"
#include "base/log.h"

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

int report__read(struct report *rep, const char *path, bool partial,
		 const struct event_filter *f, struct bp_session *s,
		 const struct replay_progress *pr)
{
	struct report_ctx x = { .path = path, .rep = rep };
	int err = replay__run_progress(path, partial, f, s, report_event, &x, pr);

	/* report's own --pid/--tid: a typo is an error, as convert's (filter.h) */
	if (!err)
		err = filter__check(&rep->filter, s, path);
	return err;
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
		j->err = replay__run(j->path, false, NULL, &s, NULL, add_event, j, NULL);
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
int diff__read(struct diff *d, char **base, size_t nbase, char **new, size_t nnew)
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
