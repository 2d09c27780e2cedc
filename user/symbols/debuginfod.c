// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Debug files by build-id from debuginfod servers (debuginfod.h): elfutils'
 * libdebuginfod does the HTTP, the cache and the server list; this file adds
 * the time budget (its progress callback cancels a fetch past it), the
 * messages, and giving up after a failed server.
 *
 * libdebuginfod 0.192 (bookworm-backports) calls the progress callback only
 * once a server sends something: a server that accepts and never answers
 * held a fetch far past its budget (for libdebuginfod's own 90 s).  Unless
 * the user set DEBUGINFOD_TIMEOUT, it is set (whole seconds, read at every
 * query) to the budget rounded up, and to the late budget before a fetch
 * goes on in the background (after which the foreground asks no more).
 */
#include <errno.h>
#include <pthread.h>
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
#define LATE_BUDGET_MS		60000	/* a fetch gone on in the background */
#define MAXSIZE_DEFAULT		"1073741824"	/* bytes: debugsyms.c's largest debug file */
/* root's cache, unless DEBUGINFOD_CACHE_PATH says otherwise (debuginfod.h) */
#define ROOT_CACHE_PARENT	"/var/cache/bpfprof"
#define ROOT_CACHE		ROOT_CACHE_PARENT "/debuginfod"

/*
 * A fetch that outlived its budget, continued in a thread of its own (with
 * its own client) when late names are wanted (debuginfod__want_late).
 */
struct late {
	char id[132];
	char *path;		/* the debug file once done, NULL: none came */
	bool done;
	uint64_t deadline;
	pthread_t th;
};

static debuginfod_client *client;
static bool want_late;
static struct late **lates;
static size_t nlates;
static pthread_mutex_t late_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t late_cond = PTHREAD_COND_INITIALIZER;
static unsigned budget_ms = BUDGET_DEFAULT_MS;
static uint64_t deadline;	/* CLOCK_MONOTONIC ns: the fetch under way ends here */
static bool gave_up;		/* a server failed: not asked again */
static bool timed_out;		/* ...by running out of time (late fetches may still come) */
static bool own_timeout;	/* DEBUGINFOD_TIMEOUT is ours to set (the user set none) */

/*
 * DEBUGINFOD_TIMEOUT at ms rounded up to seconds, unless the user set it;
 * never rewritten while a late fetch's thread may read it (getenv).
 */
static void set_timeout(unsigned ms)
{
	char v[16];

	if (!own_timeout || debuginfod__late_pending())
		return;
	snprintf(v, sizeof(v), "%u", (ms + 999) / 1000);
	setenv("DEBUGINFOD_TIMEOUT", v, 1);
}

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
	own_timeout = !getenv("DEBUGINFOD_TIMEOUT");
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

static int late_progress(debuginfod_client *c, long done, long total)
{
	const struct late *l = debuginfod_get_user_data(c);

	(void)done, (void)total;
	return now_ns(CLOCK_MONOTONIC) > l->deadline;
}

static void *late_fetch(void *arg)
{
	struct late *l = arg;
	unsigned char bin[64];
	size_t n = strlen(l->id) / 2, i;
	debuginfod_client *c = debuginfod_begin();
	char *path = NULL;
	int fd = -1;

	for (i = 0; i < n; i++) {
		unsigned v = 0;

		sscanf(l->id + 2 * i, "%2x", &v);
		bin[i] = (unsigned char)v;
	}
	if (c) {
		debuginfod_set_user_data(c, l);
		debuginfod_set_progressfn(c, late_progress);
		fd = debuginfod_find_debuginfo(c, bin, (int)n, &path);
		debuginfod_end(c);
	}
	if (fd >= 0)
		close(fd);
	else if (path) {
		free(path);
		path = NULL;
	}
	pthread_mutex_lock(&late_lock);
	l->path = path;
	l->done = true;
	pthread_cond_broadcast(&late_cond);
	pthread_mutex_unlock(&late_lock);
	return NULL;
}

void debuginfod__want_late(bool on)
{
	want_late = on;
}

/* Goes on with id's fetch in a thread; false when none could start. */
static bool start_late(const char *id)
{
	struct late *l = xcalloc(1, sizeof(*l));
	pthread_attr_t attr;
	bool ok;

	snprintf(l->id, sizeof(l->id), "%s", id);
	set_timeout(LATE_BUDGET_MS);
	l->deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t)LATE_BUDGET_MS * 1000000;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_mutex_lock(&late_lock);
	ok = !pthread_create(&l->th, &attr, late_fetch, l);
	if (ok) {
		lates = xrealloc(lates, (nlates + 1) * sizeof(*lates));
		lates[nlates++] = l;
	}
	pthread_mutex_unlock(&late_lock);
	pthread_attr_destroy(&attr);
	if (!ok)
		free(l);
	return ok;
}

size_t debuginfod__late_pending(void)
{
	size_t i, n = 0;

	pthread_mutex_lock(&late_lock);
	for (i = 0; i < nlates; i++)
		n += !lates[i]->done;
	pthread_mutex_unlock(&late_lock);
	return n;
}

size_t debuginfod__wait_late(unsigned ms)
{
	struct timespec until;
	size_t i, got = 0;
	bool all;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&late_lock);
	for (;;) {
		all = true;
		for (i = 0; i < nlates; i++)
			all &= lates[i]->done;
		if (all || pthread_cond_timedwait(&late_cond, &late_lock, &until))
			break;
	}
	for (i = 0; i < nlates; i++)
		got += lates[i]->done && lates[i]->path;
	pthread_mutex_unlock(&late_lock);
	return got;
}

/* The debug file a finished late fetch brought for id (malloc'd), or NULL. */
static char *late_path(const char *id)
{
	char *p = NULL;
	size_t i;

	pthread_mutex_lock(&late_lock);
	for (i = 0; i < nlates && !p; i++)
		if (lates[i]->done && lates[i]->path && !strcmp(lates[i]->id, id))
			p = xstrdup(lates[i]->path);
	pthread_mutex_unlock(&late_lock);
	return p;
}

char *debuginfod__fetch(const char *id, const char *what)
{
	unsigned char bin[64];
	size_t n = strlen(id) / 2, i;
	char *path = NULL;
	uint64_t t0;
	int fd;

	if (n < 2 || n > sizeof(bin) || strlen(id) % 2)
		return NULL;
	path = late_path(id);
	if (path)
		return path;
	if (gave_up && want_late && getenv("DEBUGINFOD_URLS") && timed_out && start_late(id)) {
		p_info("debug info for %s (build-id %s) asked from debuginfod in the background",
		       what, id);
		return NULL;
	}
	if (!debuginfod__enabled())
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
	set_timeout(budget_ms);
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
		timed_out = true;
		forget_miss(id);
		if (want_late && start_late(id)) {
			p_warn("no debug info for %s from debuginfod within %.1f s: recording "
			       "unnamed, the fetch goes on in the background and names the "
			       "archive at the end if it arrives", what, budget_ms / 1000.0);
			return NULL;
		}
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
