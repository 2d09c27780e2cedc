/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The .bpfprof archive: one recording (session tables + decoded event
 * stream), written streaming (archive_writer__*, the "archive" output
 * format) and read streaming.  The byte layout is documented in writer.c.
 *
 * Reading never trusts the file: every length is bounded, every index is
 * checked against its table, and a corrupt, truncated or hostile file gives
 * -EBADMSG (or -ENOEXEC for "not an archive", -ENOTSUP for a newer major
 * version) with a message, never a crash or an unbounded allocation.
 */
#ifndef BPFPROF_ARCHIVE_H
#define BPFPROF_ARCHIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/session.h"

struct archive_reader;

/*
 * Opens `path` and reads the header and the tables known at the start of the
 * recording (modules, functions) into `s` (which it initialises).  Tables
 * written at the end (threads, processes, paths, losses, counters) are filled
 * in as archive__next() reaches them, at the latest when it returns 0.
 * `partial` (`--partial`): a file that ends before its END section (a
 * recording whose bpfprof was killed: the writer flushes every complete
 * events block) is read up to its last complete block, with a warning,
 * instead of being an error.  A cut inside the file header stays an error.
 */
int archive__open(const char *path, bool partial, struct bp_session *s,
		  struct archive_reader **out);
/* The next event: 1 and *ev filled, 0 at the end (s complete), or -errno. */
int archive__next(struct archive_reader *r, struct bp_event *ev);
void archive__close(struct archive_reader *r);
/* How far reading has gone: bytes of the file consumed, and its size (0: not a regular file). */
void archive__progress(const struct archive_reader *r, uint64_t *done, uint64_t *size);

/*
 * Reads only the tables of `path` into `s` (initialised here), stepping over
 * the event blocks without decompressing them, but checking the file to its
 * end: merge's first pass.  0 or -errno (printed); on error `s` is empty.
 */
int archive__read_tables(const char *path, struct bp_session *s);

/* True when the file starts with the archive magic. */
int archive__probe(const char *path);

/*
 * The writer (writer.c), streaming to `out`: the file header at once, then
 * the tables as events need them, an events block at a time (flushed, so a
 * killed bpfprof leaves every complete block readable), and at
 * archive_writer__end() the final tables and the END section.  Every call
 * returns 0 or -errno (of the write that failed); nothing is printed.  The
 * "archive" output format (exporters/archive.c) is this writer.
 */
struct archive_writer;
/* *w is NULL on error. */
int archive_writer__new(FILE *out, struct archive_writer **w);
int archive_writer__event(struct archive_writer *w, const struct bp_session *s,
			  const struct bp_event *ev);
int archive_writer__end(struct archive_writer *w, const struct bp_session *s);
void archive_writer__free(struct archive_writer *w);

#endif
