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

/* One maps line for m, cut to [start, end) (its offset moved with its start). */
static size_t put_line(char *out, const struct procmap *m, uint64_t start, uint64_t end)
{
	return sprintf(out, "%" PRIx64 "-%" PRIx64 " %s %08" PRIx64 " %02x:%02x %" PRIu64 " %s\n",
		       start, end, m->perms, m->pgoff + (start - m->start), m->dev_major,
		       m->dev_minor, m->inode, m->path);
}

char *procmaps__insert(const char *text, const struct procmap *m)
{
	size_t len = text ? strlen(text) : 0, n = 0;
	/* at most one more line than text: the one split around m; and m's */
	char *out = xmalloc(2 * len + strlen(m->path) + 256);
	const char *line, *nl;
	bool put = false;

	for (line = text; line && *line; line = nl) {
		char copy[PATH_MAX + 128];
		struct procmap o;
		size_t l;

		nl = strchr(line, '\n');
		nl = nl ? nl + 1 : line + strlen(line);
		l = nl - line < (long)sizeof(copy) ? (size_t)(nl - line) : sizeof(copy) - 1;
		memcpy(copy, line, l);
		copy[l] = 0;
		if (!procmaps__parse(copy, &o))
			continue;
		if (!put && o.start >= m->start) {
			n += put_line(out + n, m, m->start, m->end);
			put = true;
		}
		if (o.end <= m->start || o.start >= m->end) {
			n += put_line(out + n, &o, o.start, o.end);
			continue;
		}
		/* mapped over, as the kernel splits it: what is left on either side */
		if (o.start < m->start)
			n += put_line(out + n, &o, o.start, m->start);
		if (!put) {
			n += put_line(out + n, m, m->start, m->end);
			put = true;
		}
		if (o.end > m->end)
			n += put_line(out + n, &o, m->end, o.end);
	}
	if (!put)
		n += put_line(out + n, m, m->start, m->end);
	out[n] = 0;
	return out;
}
