// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The replay loop (see replay.h). */
#include <errno.h>
#include <stddef.h>
#include "archive.h"
#include "replay.h"
#include "base/log.h"
#include "report/report.h"

int replay__run(const char *path, const struct event_filter *f, struct bp_session *s,
		int (*begin)(void *ctx, struct bp_session *s), replay_fn fn, void *ctx,
		uint64_t *nkept)
{
	struct archive_reader *r = NULL;
	struct bp_event ev;
	uint64_t kept = 0;
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
	struct report_ctx x = { .path = path, .rep = rep };

	return replay__run(path, f, s, NULL, report_event, &x, NULL);
}
