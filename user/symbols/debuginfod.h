/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Debug files fetched by build-id from debuginfod servers (elfutils'
 * libdebuginfod), the last of the debug sources (debugsyms.h): asked only
 * when DEBUGINFOD_URLS is set or --debuginfod URL is given, and only for a
 * file no local source names.
 *
 * Cache: libdebuginfod's own, in DEBUGINFOD_CACHE_PATH when set; else, as
 * root, /var/cache/bpfprof/debuginfod (never a home root may not own: under
 * sudo -E, HOME is the user's); else libdebuginfod's default
 * ($XDG_CACHE_HOME/debuginfod_client, ~/.cache/debuginfod_client).
 *
 * Time: each file gets a budget (2 s, --debuginfod-timeout or
 * BPFPROF_DEBUGINFOD_TIMEOUT), so an attach or a process held at a dlopen
 * waits no longer; a fetch that runs out of it is cancelled and the file
 * stays unnamed (said on stderr: `bpfprof symbolize` can name it later),
 * or, when late names are wanted (an archive output), goes on in a thread
 * whose file names the archive at the end (cmd/record.c).  After a server
 * failure (timeout, refused connection) none is asked again in this run
 * (but in the background, after a timeout, with late names): each file
 * would pay the same wait.
 *
 * The file fetched is parsed as every other debug file: by the hardened
 * readers (debugsyms.c, dwarfinfo.c), checked against the build-id asked
 * for; libdebuginfod is told its size limit (DEBUGINFOD_MAXSIZE, 1 GiB,
 * unless set) so that a server cannot fill the disk.
 */
#ifndef BPFPROF_DEBUGINFOD_H
#define BPFPROF_DEBUGINFOD_H

#include <stddef.h>

/*
 * --debuginfod URL (NULL: DEBUGINFOD_URLS as set) and the per-file budget
 * in ms (0: BPFPROF_DEBUGINFOD_TIMEOUT, else 2000).  Called before any
 * thread starts (it sets the environment libdebuginfod reads).
 */
void debuginfod__setup(const char *urls, unsigned budget_ms);
/* True when a server is configured (and none failed in this run). */
int debuginfod__enabled(void);
/*
 * The path of the debug file of build-id `id` (lowercase hex) in the cache,
 * fetched now if not there, malloc'd; NULL when none could be had (said on
 * stderr, except a plain "the server has none").  `what`: the file it is
 * for, in messages.
 */
char *debuginfod__fetch(const char *id, const char *what);
/*
 * Late names (record into an archive): a fetch past its budget goes on in a
 * thread (60 s at most), and so does each later one once a fetch timed out;
 * debuginfod__fetch() then returns what arrived.
 */
#include <stdbool.h>
void debuginfod__want_late(bool on);
/* Late fetches not done yet. */
size_t debuginfod__late_pending(void);
/* Waits at most ms for the late fetches; how many brought a file. */
size_t debuginfod__wait_late(unsigned ms);
/* Ends the client (the end of a command). */
void debuginfod__reset(void);

#endif
