// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Binaries opened once, checked against a process's mappings (see binfile.h). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "binfile.h"
#include "base/log.h"
#include "base/util.h"

struct pin {
	int fd;
	dev_t dev;
	ino_t ino;
	char *name;	/* what it was opened as */
	char *src;	/* "/proc/self/fd/N" (apart from the array, which moves) */
	unsigned int refs;	/* binfile__pin()s not undone by binfile__unpin() */
};

/* follow_exec (the drain thread) and the command's thread may both pin */
static pthread_mutex_t pins_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pin *pins;
static size_t npins;

static const char deleted_suffix[] = " (deleted)";

const char *binfile__map_name(const char *path, char *buf, size_t size)
{
	size_t n = strlen(path), k = sizeof(deleted_suffix) - 1;

	if (n > k && !strcmp(path + n - k, deleted_suffix))
		n -= k;
	snprintf(buf, size, "%.*s", (int)n, path);
	return buf;
}

/* maps prints the device as MAJOR:MINOR of the filesystem (hex), stat gives it encoded */
static bool same_inode(const struct stat *st, const struct procmap *m)
{
	return m->inode && st->st_ino == (ino_t)m->inode &&
	       st->st_dev == makedev(m->dev_major, m->dev_minor);
}

/*
 * Keeps fd (or closes it when its inode is pinned already) and returns the
 * pinned path; *added (may be NULL): whether it is new.
 */
static const char *add_pin(int fd, const struct stat *st, const char *name, bool *added)
{
	const char *src = NULL;
	size_t i;

	pthread_mutex_lock(&pins_lock);
	for (i = 0; i < npins && !src; i++)
		if (pins[i].dev == st->st_dev && pins[i].ino == st->st_ino) {
			src = pins[i].src;
			pins[i].refs++;
		}
	if (added)
		*added = !src;
	if (src) {
		close(fd);
	} else {
		char buf[32];

		snprintf(buf, sizeof(buf), "/proc/self/fd/%d", fd);
		pins = xrealloc(pins, (npins + 1) * sizeof(*pins));
		pins[npins] = (struct pin){ .fd = fd, .dev = st->st_dev, .ino = st->st_ino,
					    .name = xstrdup(name), .src = xstrdup(buf), .refs = 1 };
		src = pins[npins].src;
		npins++;
	}
	pthread_mutex_unlock(&pins_lock);
	return src;
}

const char *binfile__name(const char *src)
{
	const char *name = src;
	size_t i;

	pthread_mutex_lock(&pins_lock);
	for (i = 0; i < npins; i++)
		if (!strcmp(pins[i].src, src)) {
			name = pins[i].name;
			break;
		}
	pthread_mutex_unlock(&pins_lock);
	return name;
}

static void change_refs(const char *src, int by)
{
	size_t i;

	pthread_mutex_lock(&pins_lock);
	for (i = 0; i < npins; i++) {
		if (pins[i].src != src && strcmp(pins[i].src, src))
			continue;
		pins[i].refs += by;
		if (!pins[i].refs) {
			close(pins[i].fd);
			free(pins[i].name);
			free(pins[i].src);
			pins[i] = pins[--npins];
		}
		break;
	}
	pthread_mutex_unlock(&pins_lock);
}

void binfile__ref(const char *src)
{
	change_refs(src, 1);
}

void binfile__unpin(const char *src)
{
	change_refs(src, -1);
}

bool binfile__is_pinned(const char *path)
{
	return binfile__name(path) != path;
}

static int open_mapping(pid_t pid, const struct procmap *m, struct stat *st)
{
	char path[PATH_MAX + 64], name[PATH_MAX];
	int fd;

	/* exactly the mapped file, even deleted or replaced (needs CAP_SYS_ADMIN) */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open_binary(path, st);
	if (fd >= 0 && same_inode(st, m))
		return fd;
	if (fd >= 0)
		close(fd);
	/* without it: the name in the process's root, if it still is that inode */
	binfile__map_name(m->path, name, sizeof(name));
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, name);
	fd = open_binary(path, st);
	if (fd >= 0 && same_inode(st, m))
		return fd;
	if (fd >= 0)
		close(fd);
	p_err("%s is not the file pid %d maps (replaced on disk?): not attaching to it", name,
	      (int)pid);
	return -ESTALE;
}

int binfile__pin_mapping(pid_t pid, const struct procmap *m, const char **src)
{
	struct stat st;
	int fd = open_mapping(pid, m, &st);

	if (fd < 0)
		return fd;
	*src = add_pin(fd, &st, m->path, NULL);
	return 0;
}

struct map_check {
	const struct stat *st;
	const char *path;
	const char *real;	/* realpath of path, NULL if none */
	pid_t pid;
	bool mapped;		/* a mapping of st's inode */
	bool named;		/* a mapping under path's name, of another inode: */
	struct procmap other;	/* the first one (its path not kept) */
};

static int check_one(void *ctx, const struct procmap *m)
{
	struct map_check *x = ctx;
	char name[PATH_MAX], full[PATH_MAX + 64], *r;
	const char *b1, *b2;
	bool named;

	if (m->path[0] != '/')
		return 0;
	if (same_inode(x->st, m)) {
		x->mapped = true;
		return 1;
	}
	if (x->named)
		return 0;
	binfile__map_name(m->path, name, sizeof(name));
	named = !strcmp(name, x->path);
	b1 = strrchr(name, '/') + 1;
	b2 = strrchr(x->path, '/');
	/* the same file under another spelling: compare where both lead (only when it can) */
	if (!named && x->real && b2 && !strcmp(b1, b2 + 1)) {
		snprintf(full, sizeof(full), "/proc/%d/root%s", (int)x->pid, name);
		r = realpath(full, NULL);
		named = r && !strcmp(r, x->real);
		free(r);
	}
	if (named) {
		x->named = true;
		x->other = *m;
		x->other.path = "";
	}
	return 0;
}

int binfile__pin(const char *path, pid_t pid, const char **src)
{
	struct map_check x = { .path = path, .pid = pid };
	struct stat st;
	char *real = NULL;
	bool added;
	int fd = open_binary(path, &st), err;

	if (fd < 0)
		return fd;
	if (pid <= 0)
		goto keep;
	x.st = &st;
	x.real = real = realpath(path, NULL);
	err = procmaps__each(pid, check_one, &x);
	if (err < 0 && err != -ENOENT) {
		/* cannot say what it maps: a process we may not look at is not probed */
		p_err("cannot read the mappings of pid %d: %s", (int)pid, strerror(-err));
		goto fail;
	}
	if (x.mapped || !x.named)
		goto keep;	/* the mapped file, or one it does not map (yet) */
	/* the process maps another file under this name: that one, or nothing */
	close(fd);
	x.other.path = path;
	fd = open_mapping(pid, &x.other, &st);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	*src = add_pin(fd, &st, path, &added);
	if (added)	/* once, however many readers ask */
		p_warn("%s is not the file pid %d maps (replaced on disk since, or another mount "
		       "namespace): tracing the file it runs", path, (int)pid);
	err = 0;
	goto out;
keep:
	*src = add_pin(fd, &st, path, NULL);
	err = 0;
	goto out;
fail:
	close(fd);
out:
	free(real);
	return err;
}
