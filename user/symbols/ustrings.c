// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "base/log.h"
#include "base/safeopen.h"
#include "base/util.h"
#include "ustrings.h"

/* Strings cached by (file, offset): a label in a loop is read from the file once. */
#define CACHE_SLOTS 1024

struct ufile {
	dev_t dev;
	uint64_t ino;
	int fd;			/* -1: known path, not opened yet */
	char *path;		/* a candidate from ustrings__add_file, or NULL */
};

struct ucache {
	dev_t dev;
	uint64_t ino, off;
	int used;
	char s[BP_USDT_STR + 1];
};

struct ustrings {
	struct ufile *files;
	size_t nfiles;
	struct ucache *cache;	/* CACHE_SLOTS, allocated on first use */
};

struct ustrings *ustrings__new(void)
{
	return xcalloc(1, sizeof(struct ustrings));
}

void ustrings__free(struct ustrings *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nfiles; i++) {
		if (u->files[i].fd >= 0)
			close(u->files[i].fd);
		free(u->files[i].path);
	}
	free(u->files);
	free(u->cache);
	free(u);
}

static struct ufile *add(struct ustrings *u, dev_t dev, uint64_t ino, int fd, const char *path)
{
	struct ufile *f;

	u->files = xrealloc(u->files, (u->nfiles + 1) * sizeof(*u->files));
	f = &u->files[u->nfiles++];
	f->dev = dev;
	f->ino = ino;
	f->fd = fd;
	f->path = path ? xstrdup(path) : NULL;
	return f;
}

static struct ufile *find(struct ustrings *u, dev_t dev, uint64_t ino)
{
	size_t i;

	for (i = 0; i < u->nfiles; i++)
		if (u->files[i].dev == dev && u->files[i].ino == ino)
			return &u->files[i];
	return NULL;
}

void ustrings__add_file(struct ustrings *u, const char *path)
{
	struct stat st;

	if (!u || stat(path, &st) || find(u, st.st_dev, st.st_ino))
		return;
	add(u, st.st_dev, st.st_ino, -1, path);
}

/* Opens path and checks it is the file (dev, ino); -1 otherwise. */
static int open_checked(const char *path, dev_t dev, uint64_t ino)
{
	struct stat st;
	int fd = open_binary(path, &st);

	if (fd < 0)
		return -1;
	if (st.st_dev != dev || st.st_ino != ino) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The file (dev, ino) as process pid maps it: /proc/PID/map_files/START-END
 * is that very file even when its path was replaced or deleted; the path in
 * the maps line (checked by identity) when map_files is not readable.
 */
static int open_mapped(uint32_t pid, dev_t dev, uint64_t ino)
{
	char path[64], line[4096 + 128];
	int fd = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fd < 0 && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, lino;
		unsigned int maj, min;
		int n = 0;
		char *file;

		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %n", &start, &end, &off, &maj, &min,
			   &lino, &n) < 6 || !n || lino != ino || makedev(maj, min) != dev)
			continue;
		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/map_files/%llx-%llx", pid, start,
			 end);
		fd = open_checked(path, dev, ino);
		file = line + n;
		file[strcspn(file, "\n")] = 0;
		if (fd < 0 && file[0] == '/')
			fd = open_checked(file, dev, ino);
	}
	fclose(f);
	return fd;
}

static int file_fd(struct ustrings *u, uint32_t pid, dev_t dev, uint64_t ino)
{
	struct ufile *f = find(u, dev, ino);
	int fd;

	if (f && f->fd >= 0)
		return f->fd;
	if (f && f->path) {
		f->fd = open_checked(f->path, dev, ino);
		if (f->fd >= 0)
			return f->fd;
	}
	fd = open_mapped(pid, dev, ino);
	if (fd < 0)
		return -1;
	if (f)
		f->fd = fd;
	else
		add(u, dev, ino, fd, NULL);
	return fd;
}

/* Reads up to len - 1 bytes of the string from the file; 0 or -errno. */
static int read_file(struct ustrings *u, uint32_t pid, const struct bp_usdt_where *w, char *buf,
		     size_t len)
{
	dev_t dev = dev_of_kdev(w->dev);
	struct ucache *c = NULL;
	ssize_t n;
	int fd;

	if (len > BP_USDT_STR + 1)
		len = BP_USDT_STR + 1;
	if (!u->cache)
		u->cache = xcalloc(CACHE_SLOTS, sizeof(*u->cache));
	c = &u->cache[(w->ino * 31 + w->off * 0x9e3779b97f4a7c15ull) % CACHE_SLOTS];
	if (c->used && c->dev == dev && c->ino == w->ino && c->off == w->off) {
		snprintf(buf, len, "%s", c->s);
		return 0;
	}
	fd = file_fd(u, pid, dev, w->ino);
	if (fd < 0)
		return -ENOENT;
	n = pread(fd, buf, len - 1, (off_t)w->off);
	if (n <= 0)
		return n < 0 ? -errno : -ERANGE;
	buf[n] = 0;
	c->used = 1;
	c->dev = dev;
	c->ino = w->ino;
	c->off = w->off;
	snprintf(c->s, sizeof(c->s), "%s", buf);
	return 0;
}

/* Reads the string from the live process, a page at a time (a later page may be unmapped). */
static int read_process(uint32_t pid, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;
	int err = -EFAULT;

	while (got + 1 < len) {
		size_t want = 4096 - ((addr + got) & 4095);
		struct iovec local, remote;
		ssize_t n;

		if (want > len - 1 - got)
			want = len - 1 - got;
		local.iov_base = buf + got;
		local.iov_len = want;
		remote.iov_base = (void *)(uintptr_t)(addr + got);
		remote.iov_len = want;
		n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
		if (n <= 0) {
			err = n < 0 ? -errno : -EFAULT;
			break;
		}
		if (memchr(buf + got, 0, n)) {
			got += n;
			break;
		}
		got += n;
	}
	if (!got)
		return err;
	buf[got] = 0;
	return 0;
}

int ustrings__read(struct ustrings *u, uint32_t pid, uint64_t addr, const struct bp_usdt_where *w,
		   char *buf, size_t len)
{
	int err = -ENOENT;

	if (!len)
		return -EINVAL;
	buf[0] = 0;
	if (w && w->ino)
		err = read_file(u, pid, w, buf, len);
	if (err && addr)
		err = read_process(pid, addr, buf, len);
	if (err)
		buf[0] = 0;
	return err;
}
