// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The "archive" output format: the archive's own writer (user/archive/writer.c). */
#include "exporter.h"
#include "archive/archive.h"

/* priv: the writer */
static struct archive_writer **writer(struct exporter *e)
{
	return e->priv;
}

static int archive_begin(struct exporter *e, const struct bp_session *s)
{
	return archive_writer__new(e->out, writer(e));
}

static int archive_event(struct exporter *e, const struct bp_session *s, const struct bp_event *ev)
{
	return archive_writer__event(*writer(e), s, ev);
}

static int archive_end(struct exporter *e, const struct bp_session *s)
{
	return archive_writer__end(*writer(e), s);
}

static void archive_free(struct exporter *e)
{
	if (e->priv)
		archive_writer__free(*writer(e));
}

const struct exporter_ops archive_exporter = {
	.name = "archive",
	.suffix = ".bpfprof",
	.help = "bpfprof archive (convert, merge, report read it)",
	.priv_size = sizeof(struct archive_writer *),
	.begin = archive_begin,
	.event = archive_event,
	.end = archive_end,
	.free = archive_free,
};
