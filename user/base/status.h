/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The live status line: progress on long work, on stderr, one line rewritten
 * in place ("\r", the text, clear to the end of the line), only when stderr
 * is a terminal and not with -q.  record/attach/serve show the capture's
 * figures (capture/status.c); a replay shows how far it has read
 * (archive/replay.c).  Any other message on stderr (log.c) erases the line
 * first and draws it again after, so that the two never mix; status__clear()
 * erases it for good before a summary.  Thread-safe.
 */
#ifndef BPFPROF_STATUS_H
#define BPFPROF_STATUS_H

#include <stdbool.h>
#include <stdint.h>

/* Seconds between two redraws: about three a second. */
#define STATUS_PERIOD	0.3
/* A read shorter than this shows nothing: small files print nothing. */
#define STATUS_READ_AFTER	0.5

/* Would a status line be drawn: stderr a terminal, not -q, this thread not muted. */
bool status__on(void);
/* status__on() and STATUS_PERIOD gone since the last draw (or never drawn). */
bool status__due(void);
/* Draws the line now (cut to the terminal's width), replacing what it said. */
void status__show(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Erases the line (the cursor at the start of an empty line); nothing if none. */
void status__clear(void);

/* log.c, around a message: erases the line and holds it off; then draws it again. */
void status__hide(void);
void status__unhide(void);

/*
 * How far a replay has read, shown as "bpfprof: reading NAME: P% (X of Y MB),
 * N M events" once it has taken STATUS_READ_AFTER.  One read at a time owns
 * the line (diff reads its two sides at once: the second shows nothing).
 */
struct status_read {
	const char *name;
	double start;
	bool owner, shown;
};
void status__read_begin(struct status_read *r, const char *path);
void status__read_tick(struct status_read *r, uint64_t done, uint64_t size, uint64_t events);
/* Erases what it showed; true if it showed something. */
bool status__read_end(struct status_read *r);

#endif
