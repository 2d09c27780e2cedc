// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The live status line (see status.h). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "status.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int tty = -1;		/* stderr a terminal: -1 not asked yet */
static char line[512];		/* what the line says, "" when erased */
static bool drawn;		/* line is on the screen */
static int hidden;		/* status__hide() depth */
static double last;		/* when it was drawn */
static bool reading;		/* a status_read owns the line */

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

bool status__on(void)
{
	if (quiet || log_muted)
		return false;
	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	return tty;
}

bool status__due(void)
{
	return status__on() && (!last || mono_s() - last >= STATUS_PERIOD);
}

/* Under the lock: the line on the screen, cut to the terminal (a wrapped line cannot be erased). */
static void draw(void)
{
	struct winsize ws;
	int width = sizeof(line) - 1;

	if (!ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col > 1 && ws.ws_col - 1 < width)
		width = ws.ws_col - 1;
	fprintf(stderr, "\r%.*s\033[K", width, line);
	fflush(stderr);
	drawn = true;
}

static void erase(void)
{
	if (!drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	drawn = false;
}

void status__show(const char *fmt, ...)
{
	va_list ap;

	if (!status__on())
		return;
	pthread_mutex_lock(&lock);
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	last = mono_s();
	if (!hidden)
		draw();
	pthread_mutex_unlock(&lock);
}

void status__clear(void)
{
	if (tty <= 0)
		return;
	pthread_mutex_lock(&lock);
	erase();
	line[0] = 0;
	last = 0;
	pthread_mutex_unlock(&lock);
}

void status__hide(void)
{
	if (tty <= 0)
		return;
	pthread_mutex_lock(&lock);
	hidden++;
	erase();
	pthread_mutex_unlock(&lock);
}

void status__unhide(void)
{
	if (tty <= 0)
		return;
	pthread_mutex_lock(&lock);
	if (hidden && !--hidden && line[0])
		draw();
	pthread_mutex_unlock(&lock);
}

void status__read_begin(struct status_read *r, const char *path)
{
	const char *slash = strrchr(path, '/');

	memset(r, 0, sizeof(*r));
	if (!status__on())
		return;
	r->name = slash ? slash + 1 : path;
	r->start = mono_s();
	pthread_mutex_lock(&lock);
	r->owner = !reading;
	reading = true;
	pthread_mutex_unlock(&lock);
}

void status__read_tick(struct status_read *r, uint64_t done, uint64_t size, uint64_t events)
{
	char pct[64] = "";

	if (!r->owner || !status__due() || mono_s() - r->start < STATUS_READ_AFTER)
		return;
	if (size)
		snprintf(pct, sizeof(pct), "%d%% (%.0f of %.0f MB), ",
			 (int)(done >= size ? 100 : done * 100 / size), done / 1e6, size / 1e6);
	status__show("bpfprof: reading %s: %s%.1f M events", r->name, pct, events / 1e6);
	r->shown = true;
}

bool status__read_end(struct status_read *r)
{
	if (!r->owner)
		return false;
	if (r->shown)
		status__clear();
	pthread_mutex_lock(&lock);
	reading = false;
	pthread_mutex_unlock(&lock);
	r->owner = false;
	return r->shown;
}
