// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Debug files by build-id from debuginfod servers (debuginfod.h): elfutils'
 * libdebuginfod does the HTTP, the cache and the server list; this file adds
 * the time budget (its progress callback cancels a fetch past it), the
 * messages, and giving up after a failed server.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <elfutils/debuginfod.h>
#include "debuginfod.h"
#include "base/log.h"
#include "base/util.h"

#define BUDGET_DEFAULT_MS	2000
#define MAXSIZE_DEFAULT		"1073741824"	/* bytes: debugsyms.c's largest debug file */
/* root's cache, unless DEBUGINFOD_CACHE_PATH says otherwise (debuginfod.h) */
#define ROOT_CACHE_PARENT	"/var/cache/bpfprof"
#define ROOT_CACHE		ROOT_CACHE_PARENT "/debuginfod"

static debuginfod_client *client;
static unsigned budget_ms = BUDGET_DEFAULT_MS;
static uint64_t deadline;	/* CLOCK_MONOTONIC ns: the fetch under way ends here */
static bool gave_up;		/* a server failed: not asked again */

void debuginfod__setup(const char *urls, unsigned ms)
{
	const char *env = getenv("BPFPROF_DEBUGINFOD_TIMEOUT");

	if (urls)
		setenv("DEBUGINFOD_URLS", urls, 1);
	if (ms)
		budget_ms = ms;
	else if (env && *env) {
		char *end;
		double s = strtod(env, &end);

		if (*end || s <= 0 || s > 3600)
			p_warn("BPFPROF_DEBUGINFOD_TIMEOUT=%s is not a number of seconds in (0, 3600]: "
			       "%u ms", env, budget_ms);
		else
			budget_ms = (unsigned)(s * 1000 + 0.5) ? (unsigned)(s * 1000 + 0.5) : 1;
	}
	if (!getenv("DEBUGINFOD_MAXSIZE"))
		setenv("DEBUGINFOD_MAXSIZE", MAXSIZE_DEFAULT, 1);
	/*
	 * Root never keeps its cache under a home it may not own (sudo -E keeps
	 * the user's HOME and XDG_CACHE_HOME): the user could plant debug files
	 * there, or links that root would write through.
	 */
	if (geteuid() == 0 && !getenv("DEBUGINFOD_CACHE_PATH")) {
		if (mkdir(ROOT_CACHE_PARENT, 0755) && errno != EEXIST)
			p_dbg("cannot create %s: %s", ROOT_CACHE_PARENT, strerror(errno));
		if (mkdir(ROOT_CACHE, 0700) && errno != EEXIST)
			p_dbg("cannot create %s: %s", ROOT_CACHE, strerror(errno));
		setenv("DEBUGINFOD_CACHE_PATH", ROOT_CACHE, 1);
	}
	/* libdebuginfod's own timeout is per stall, not per file: ours, in whole seconds */
	if (!getenv("DEBUGINFOD_TIMEOUT")) {
		char t[16];

		snprintf(t, sizeof(t), "%u", (budget_ms + 999) / 1000);
		setenv("DEBUGINFOD_TIMEOUT", t, 1);
	}
}

int debuginfod__enabled(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && *urls && !gave_up;
}

/* Called by libdebuginfod as the transfer goes on: non-zero cancels it. */
static int progress(debuginfod_client *c, long done, long total)
{
	(void)c, (void)done, (void)total;
	return now_ns(CLOCK_MONOTONIC) > deadline;
}

/*
 * A fetch cancelled at the budget ends in libdebuginfod as "not found", which
 * it caches as an empty file that suppresses the build-id for its
 * cache_miss_s (10 minutes): removed, so that a later run (or symbolize)
 * asks again.  Through descriptors opened without following links, in
 * directories of our own only.
 */
static void forget_miss(const char *id)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH"), *base;
	char *cache = NULL;
	struct stat st;
	int dir, sub;

	if (env && *env)
		cache = xstrdup(env);
	else if ((base = getenv("XDG_CACHE_HOME")) && *base)
		cache = xasprintf("%s/debuginfod_client", base);
	else if ((base = getenv("HOME")) && *base)
		cache = xasprintf("%s/.cache/debuginfod_client", base);
	if (!cache)
		return;
	dir = open(cache, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	free(cache);
	if (dir < 0)
		return;
	sub = fstat(dir, &st) || st.st_uid != geteuid() ? -1 :
	      openat(dir, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub >= 0 && !fstat(sub, &st) && st.st_uid == geteuid() &&
	    !fstatat(sub, "debuginfo", &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
	    !st.st_size)
		unlinkat(sub, "debuginfo", 0);
	if (sub >= 0)
		close(sub);
	close(dir);
}

char *debuginfod__fetch(const char *id, const char *what)
{
	unsigned char bin[64];
	size_t n = strlen(id) / 2, i;
	char *path = NULL;
	uint64_t t0;
	int fd;

	if (!debuginfod__enabled() || n < 2 || n > sizeof(bin) || strlen(id) % 2)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(id + 2 * i, "%2x", &v) != 1)
			return NULL;
		bin[i] = (unsigned char)v;
	}
	if (!client) {
		client = debuginfod_begin();
		if (!client) {
			p_warn("cannot start the debuginfod client: %s", strerror(errno));
			gave_up = true;
			return NULL;
		}
		debuginfod_set_progressfn(client, progress);
	}
	p_info("fetching debug info for %s (build-id %s) from debuginfod", what, id);
	t0 = now_ns(CLOCK_MONOTONIC);
	deadline = t0 + (uint64_t)budget_ms * 1000000;
	fd = debuginfod_find_debuginfo(client, bin, (int)n, &path);
	if (fd >= 0) {
		close(fd);	/* read again by path, by the same readers as a local file */
		p_dbg("debuginfod: %s in %.3f ms", path, (now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
		return path;
	}
	free(path);
	if (now_ns(CLOCK_MONOTONIC) > deadline || fd == -ECANCELED) {
		/* (a cancelled transfer is "not found" to libdebuginfod: the time says) */
		gave_up = true;
		forget_miss(id);
		p_warn("no debug info for %s from debuginfod within %.1f s: its functions stay "
		       "unnamed, and debuginfod is not asked again in this run (bpfprof "
		       "symbolize names a recording later)", what, budget_ms / 1000.0);
		return NULL;
	}
	if (fd == -ENOENT) {
		p_info("debuginfod has no debug info for %s: its functions stay unnamed", what);
		return NULL;
	}
	gave_up = true;
	p_warn("cannot fetch debug info for %s from debuginfod: %s: its functions stay "
		       "unnamed, and debuginfod is not asked again in this run (bpfprof "
		       "symbolize names a recording later)", what, strerror(-fd));
	return NULL;
}

void debuginfod__reset(void)
{
	if (client)
		debuginfod_end(client);
	client = NULL;
	gave_up = false;
}
