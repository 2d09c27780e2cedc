/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Output formats behind one ops table.  One replay loop (the live decoder, or
 * the archive reader) drives an exporter: begin() once, event() per decoded
 * event, end() once with the final tables (thread names, losses).  Every
 * callback returns 0 or -errno; a write error stops the loop.
 *
 * The output is written to a temporary file beside the destination and
 * renamed into place only when end() succeeded, so a failed or crashed run
 * never leaves a file that looks complete.
 */
#ifndef BPFPROF_EXPORTER_H
#define BPFPROF_EXPORTER_H

#include <stdbool.h>
#include <stdio.h>
#include "model/session.h"

struct exporter;

struct exporter_ops {
	const char *name;	/* --format value: "chrome" */
	const char *suffix;	/* output name ending that selects it: ".json" */
	const char *suffix2;	/* another one, or NULL */
	const char *help;	/* one line for --help */
	size_t priv_size;	/* bytes of zeroed private state given to begin() */
	int (*begin)(struct exporter *e, const struct bp_session *s);
	int (*event)(struct exporter *e, const struct bp_session *s, const struct bp_event *ev);
	int (*end)(struct exporter *e, const struct bp_session *s);
	void (*free)(struct exporter *e);	/* optional: release priv's contents */
	/* optional: bytes kept in files of its own so far (speedscope's spill) */
	uint64_t (*held)(struct exporter *e);
};

struct exporter {
	const struct exporter_ops *ops;
	FILE *out;
	void *priv;
	char *path;		/* final path */
	char *tmp_path;		/* written here, renamed at exporter__finish() */
};

/* Format by --format name, or NULL. */
const struct exporter_ops *exporter__find(const char *name);
/* Format by the output name's ending ("x.speedscope.json" before "x.json"), or NULL. */
const struct exporter_ops *exporter__for_path(const char *path);
/*
 * The format of an output: --format FMT when given, else from the name of
 * `path`; NULL with one line saying why ("see 'bpfprof CMD --help'").
 */
const struct exporter_ops *exporter__choose(const char *format, const char *path, const char *cmd);
/* NULL-terminated table of every format, for --help. */
extern const struct exporter_ops *const exporter_table[];

/*
 * Opens the temporary output for `path` ("-" is stdout) and calls begin().
 * Returns 0 or -errno (the message is already printed).
 */
int exporter__new(const struct exporter_ops *ops, const char *path, const struct bp_session *s,
		  struct exporter **out);
int exporter__event(struct exporter *e, const struct bp_session *s, const struct bp_event *ev);
/* Calls end(), flushes, checks for write errors, renames into place. */
int exporter__finish(struct exporter *e, const struct bp_session *s);
/*
 * Bytes the exporter holds on disk so far: its output written until now,
 * and files of its own (serve caps what all its captures hold).
 */
uint64_t exporter__bytes(struct exporter *e);
/* Frees; removes the temporary file if exporter__finish() did not succeed. */
void exporter__free(struct exporter *e);
/*
 * An exporter as the sink of the replay loop (archive/replay.h) or of a
 * merge (archive/merge.h): begin opens it to `out` on the tables known at
 * the start (*e), event writes one event.  The caller finishes and frees e.
 */
struct exporter_sink {
	const struct exporter_ops *ops;
	const char *out;
	struct exporter *e;
};
int exporter__sink_begin(void *sink, struct bp_session *s);
int exporter__sink_event(void *sink, const struct bp_session *s, const struct bp_event *ev);
/*
 * The recording at `path` (`partial`: an unfinished one read up to its last
 * complete block, archive__open), through the filter f (may be NULL), written
 * by exporter `ops` to `out`; *nkept (may be NULL): the events written.  0 or
 * -errno (printed).
 */
struct event_filter;
int exporter__replay(const char *path, bool partial, const struct event_filter *f,
		     const struct exporter_ops *ops, const char *out, uint64_t *nkept);
/*
 * Removes the temporaries BASE.tmp.PID.XXXXXX in the directory dfd of
 * bpfprofs that died, but the newest archive among them: the crash copy of
 * a recording (stale.c).
 */
void exporter__clean_stale(int dfd, const char *base);

/* The formats. */
extern const struct exporter_ops chrome_exporter;
extern const struct exporter_ops speedscope_exporter;
extern const struct exporter_ops pprof_exporter;
extern const struct exporter_ops folded_exporter;
extern const struct exporter_ops csv_exporter;
extern const struct exporter_ops dot_exporter;
extern const struct exporter_ops archive_exporter;
extern const struct exporter_ops perfetto_exporter;

#endif
