// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* How root opens the files users name or control: see safeopen.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "log.h"
#include "safeopen.h"

/* Symbolic links followed in one output path at most (the kernel's own limit). */
#define MAX_LINKS	40

bool sudo_user(uid_t *uid, gid_t *gid)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned long u, g;
	char *end;

	if (geteuid() != 0 || !su || !sg || !*su || !*sg)
		return false;
	errno = 0;
	u = strtoul(su, &end, 10);
	if (errno || *end || u >= (uid_t)-1)
		return false;
	g = strtoul(sg, &end, 10);
	if (errno || *end || g >= (gid_t)-1)
		return false;
	if (uid)
		*uid = (uid_t)u;
	if (gid)
		*gid = (gid_t)g;
	return true;
}

/* Made by us or by the user who ran sudo: a FIFO or pipe they gave us on purpose. */
static bool ours(const struct stat *st)
{
	uid_t u;

	return st->st_uid == geteuid() || (sudo_user(&u, NULL) && st->st_uid == u);
}

/*
 * Opens the file of the O_PATH descriptor pfd with flags, through
 * /proc/self/fd: the very file that was fstat()ed, whatever the path
 * names by now.  Closes pfd.  The fd, or -errno.
 */
static int reopen(int pfd, int flags)
{
	char p[32];
	int fd, err;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", pfd);
	fd = open(p, flags | O_CLOEXEC | O_NOCTTY);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	return fd < 0 ? err : fd;
}

/* O_PATH (no driver's open runs, no FIFO blocks), then fstat: what the path is. */
static int open_path(const char *path, struct stat *st)
{
	int pfd = open(path, O_PATH | O_CLOEXEC), err;

	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st)) {
		err = -errno;
		close(pfd);
		return err;
	}
	return pfd;
}

int open_binary(const char *path, struct stat *st)
{
	struct stat tmp;
	int pfd;

	if (!st)
		st = &tmp;
	pfd = open_path(path, st);
	if (pfd < 0)
		return pfd;
	if (!S_ISREG(st->st_mode)) {
		close(pfd);
		return -ENOEXEC;
	}
	return reopen(pfd, O_RDONLY);
}

int open_input(const char *path, struct stat *st)
{
	struct stat tmp;
	int pfd, fd;

	if (!st)
		st = &tmp;
	pfd = open_path(path, st);
	if (pfd < 0)
		return pfd;
	if (S_ISREG(st->st_mode))
		return reopen(pfd, O_RDONLY);
	if (!S_ISFIFO(st->st_mode) || !ours(st)) {
		close(pfd);
		return -ENOEXEC;
	}
	/* a FIFO without a writer yet: read its end-of-file rather than wait */
	fd = reopen(pfd, O_RDONLY | O_NONBLOCK);
	if (fd >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int file_has_magic(const char *path, const void *magic, size_t len)
{
	unsigned char buf[16];
	int fd, r;

	if (len > sizeof(buf))
		return 0;
	fd = open_binary(path, NULL);
	if (fd < 0)
		return 0;
	r = pread(fd, buf, len, 0) == (ssize_t)len && !memcmp(buf, magic, len);
	close(fd);
	return r;
}

/* ------------------------------------------------------------------ outputs */

/* procfs: its links are the kernel's (/proc/self, /proc/self/fd/N), never planted by a user. */
static bool on_procfs(int dfd)
{
	struct statfs sf;

	return !fstatfs(dfd, &sf) && sf.f_type == PROC_SUPER_MAGIC;
}

/*
 * A root's symbolic link met on the way (fd, the inode just checked): its
 * own text (read into target, PATH_MAX + 1 bytes) put in front of what is
 * left of the path (next; nothing when it was the last component) as the
 * new *rest; an absolute one restarts the walk at "/" (*cur).  0 or -errno.
 */
static int splice_link(int fd, int *cur, char *target, const char *next, bool last, char **rest)
{
	ssize_t n = readlinkat(fd, "", target, PATH_MAX);
	char *spliced;

	if (n < 0 || n >= PATH_MAX)
		return n < 0 ? -errno : -ENAMETOOLONG;
	target[n] = 0;
	spliced = xasprintf("%s%s%s", target, last ? "" : "/", next);
	if (target[0] == '/') {
		close(*cur);
		*cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (*cur < 0) {
			int err = -errno;

			free(spliced);
			return err;
		}
	}
	free(*rest);
	*rest = spliced;
	return 0;
}

/*
 * Resolves path up to its last component, following only the symbolic
 * links root owns (and procfs's), one component at a time with O_NOFOLLOW:
 * a link another user owns -- planted in a directory of theirs or in a
 * sticky /tmp -- is -ELOOP.  The last component is followed too when it is
 * such a link of root's (/dev/stdout).  On success, *dfd is the directory
 * (O_PATH) and *name, allocated, the last component.
 */
static int walk(const char *path, int *dfd, char **name)
{
	char *rest = xstrdup(path), *p = rest, *comp = NULL, *target = NULL;
	int cur = -1, fd = -1, links = 0, err;
	struct stat st;

	if (!*path) {
		err = -ENOENT;
		goto cleanup;
	}
	target = xmalloc(PATH_MAX + 1);
	cur = open(*p == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0) {
		err = -errno;
		goto cleanup;
	}
	for (;;) {
		char *end, *next;
		bool last;

		while (*p == '/')
			p++;
		if (!*p) {	/* "/" or "dir/": no file name */
			err = -EISDIR;
			goto cleanup;
		}
		end = strchrnul(p, '/');
		next = end;
		while (*next == '/')
			next++;
		last = !*next;
		free(comp);
		comp = strndup(p, end - p);
		if (!comp) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (strlen(comp) > NAME_MAX) {
			err = -ENAMETOOLONG;
			goto cleanup;
		}
		if (last && (!strcmp(comp, ".") || !strcmp(comp, ".."))) {
			err = -EISDIR;
			goto cleanup;
		}
		if (!strcmp(comp, ".")) {
			p = next;
			continue;
		}
		fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && last && errno == ENOENT)
			break;		/* a new file */
		if (fd < 0 || fstat(fd, &st)) {
			err = -errno;
			goto cleanup;
		}
		if (S_ISLNK(st.st_mode) && on_procfs(cur)) {
			if (last)
				break;	/* the caller opens it: one of our descriptors */
			close(fd);
			fd = openat(cur, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0) {
				err = -errno;
				goto cleanup;
			}
		} else if (S_ISLNK(st.st_mode)) {
			if (st.st_uid != 0) {
				err = -ELOOP;	/* a user's: not followed as root */
				goto cleanup;
			}
			if (++links > MAX_LINKS) {
				err = -EMLINK;
				goto cleanup;
			}
			err = splice_link(fd, &cur, target, next, last, &rest);
			close(fd);
			fd = -1;
			if (err)
				goto cleanup;
			p = rest;
			continue;
		} else if (last) {
			break;
		} else if (!S_ISDIR(st.st_mode)) {
			err = -ENOTDIR;
			goto cleanup;
		}
		close(cur);
		cur = fd;
		fd = -1;
		p = next;
	}
	*dfd = cur;
	*name = comp;
	cur = -1;
	comp = NULL;
	err = 0;
cleanup:
	if (fd >= 0)
		close(fd);
	if (cur >= 0)
		close(cur);
	free(comp);
	free(target);
	free(rest);
	return err;
}

/* A directory where the invoking user could have made the file: theirs, or like /tmp. */
static bool users_dir(int dfd)
{
	struct stat st;
	uid_t u;

	if (!sudo_user(&u, NULL) || fstat(dfd, &st))
		return false;
	return st.st_uid == u || ((st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH));
}

/* NAME.tmp.PID.XXXXXX, created (O_EXCL: never an existing file or link) in dfd. */
static int create_tmp(struct safe_out *o)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[6];
	int tries, i, fd;

	for (tries = 0; tries < 100; tries++) {
		char sfx[7];

		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return -errno;
		for (i = 0; i < 6; i++)
			sfx[i] = chars[rnd[i] % (sizeof(chars) - 1)];
		sfx[6] = 0;
		free(o->tmp);
		o->tmp = xasprintf("%s.tmp.%d.%s", o->name, (int)getpid(), sfx);
		if (strlen(o->tmp) > NAME_MAX) {
			free(o->tmp);
			o->tmp = NULL;
			return -ENAMETOOLONG;
		}
		/* not inherited by the command bpfprof launches */
		fd = openat(o->dfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			break;
	}
	free(o->tmp);
	o->tmp = NULL;
	return -errno;
}

int safe_out__open(const char *path, struct safe_out *o)
{
	struct stat st;
	uid_t uid;
	gid_t gid;
	int pfd, err;

	o->dfd = o->fd = -1;
	o->name = o->tmp = NULL;
	o->dir_is_users = false;
	err = walk(path, &o->dfd, &o->name);
	if (err)
		return err;
	pfd = openat(o->dfd, o->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0 && errno != ENOENT)
		return -errno;
	if (pfd >= 0 && fstat(pfd, &st)) {
		err = -errno;
		close(pfd);
		return err;
	}
	if (pfd >= 0 && S_ISLNK(st.st_mode) && on_procfs(o->dfd)) {
		/* /proc/self/fd/N (by /dev/stdout): the descriptor we were given */
		close(pfd);
		pfd = openat(o->dfd, o->name, O_PATH | O_CLOEXEC);
		if (pfd < 0 || fstat(pfd, &st)) {
			err = -errno;
			if (pfd >= 0)
				close(pfd);
			return err;
		}
		if (S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode)) {
			close(pfd);
			return S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
		}
		/* a file given with `>` or `>>`: after what is in it, like stdout */
		o->fd = reopen(pfd, O_WRONLY | (S_ISREG(st.st_mode) ? O_APPEND : 0));
		return o->fd < 0 ? o->fd : 0;
	}
	if (pfd >= 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			err = -EISDIR;
		else if (S_ISLNK(st.st_mode))
			err = -ELOOP;	/* walk() followed it if it were root's */
		else if ((S_ISCHR(st.st_mode) && st.st_uid == 0) ||
			 ((S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) && ours(&st)))
			err = 0;	/* /dev/null, a FIFO of ours: written in place */
		else
			err = -ENOEXEC;
		if (err) {
			close(pfd);
			return err;
		}
		o->fd = reopen(pfd, O_WRONLY);
		return o->fd < 0 ? o->fd : 0;
	}
	if (pfd >= 0)
		close(pfd);
	o->dir_is_users = users_dir(o->dfd);
	if (o->dir_is_users && sudo_user(&uid, &gid)) {
		/*
		 * In the invoking user's directory (or /tmp), the file is made
		 * by that user: the kernel checks their rights, not root's, and
		 * it is theirs from the start.  The filesystem ids are this
		 * thread's alone (serve writes from several).
		 */
		uid_t ou = setfsuid(uid);
		gid_t og = setfsgid(gid);

		o->fd = create_tmp(o);
		setfsgid(og);
		setfsuid(ou);
	} else {
		o->fd = create_tmp(o);
	}
	return o->fd < 0 ? o->fd : 0;
}

int safe_out__commit(struct safe_out *o)
{
	if (!o->tmp)
		return 0;
	if (renameat(o->dfd, o->tmp, o->dfd, o->name))
		return -errno;
	free(o->tmp);
	o->tmp = NULL;
	return 0;
}

void safe_out__free(struct safe_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	/* never leave a partial file behind that looks like a trace */
	if (o->tmp && o->dfd >= 0)
		unlinkat(o->dfd, o->tmp, 0);
	if (o->dfd >= 0)
		close(o->dfd);
	free(o->tmp);
	free(o->name);
	o->fd = o->dfd = -1;
	o->tmp = o->name = NULL;
}

const char *safe_out__strerror(int err)
{
	if (err == -ELOOP)
		return "a symbolic link another user owns is on the way: not followed as root "
		       "(name the file it points to)";
	if (err == -ENOEXEC)
		return "not a regular file, and not one bpfprof writes as root "
		       "(a block device, a socket, another user's FIFO): use -o - instead";
	return strerror(-err);
}
