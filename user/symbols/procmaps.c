// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* /proc/PID/maps (see procmaps.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "base/log.h"
#include "procmaps.h"

bool procmaps__parse(char *line, struct procmap *m)
{
	unsigned long long start, end, pgoff, inode;
	unsigned int maj, min;
	int off = 0;

	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, m->perms, &pgoff, &maj,
		   &min, &inode, &off) < 7 || !off)
		return false;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->dev_major = maj;
	m->dev_minor = min;
	m->inode = inode;
	line[off + strcspn(line + off, "\n")] = 0;
	m->path = line + off;
	return true;
}

int procmaps__each(pid_t pid, int (*fn)(void *ctx, const struct procmap *m), void *ctx)
{
	char path[64], line[PATH_MAX + 128];
	struct procmap m;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		/* a line longer than the buffer (a path near PATH_MAX): its rest is skipped */
		if (!strchr(line, '\n') && !feof(f)) {
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		if (procmaps__parse(line, &m))
			err = fn(ctx, &m);
	}
	fclose(f);
	return err;
}

char *procmaps__read(pid_t pid)
{
	char path[64], *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 16384;
			buf = xrealloc(buf, cap);
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n);
	fclose(f);
	buf[len] = 0;
	return buf;
}
