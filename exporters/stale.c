// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Temporaries of outputs whose bpfprof died.  An output is written to
 * PATH.tmp.PID.XXXXXX and renamed to PATH at the end; a bpfprof killed
 * (SIGKILL, the OOM killer) leaves its temporary behind.  When the next
 * output is opened in that directory, the temporaries of PATH whose PID is
 * gone are removed -- except the newest archive among them: an archive is
 * written a block at a time, so it is the crash-safe copy of the recording
 * (`report --partial`, `convert --partial`), and it is kept until a newer
 * one replaces it.  Best effort: nothing here makes an output fail.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/log.h"
#include "exporter.h"
#include "archive/format.h"

/* Starts with the archive's magic. */
static bool is_archive(int dfd, const char *name)
{
	char b[ARCHIVE_MAGIC_LEN];
	bool yes = false;
	FILE *f;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return false;
	f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return false;
	}
	yes = fread(b, 1, sizeof(b), f) == sizeof(b) && !memcmp(b, ARCHIVE_MAGIC, sizeof(b));
	fclose(f);
	return yes;
}

/* The PID of "BASE.tmp.PID.XXXXXX", or 0 when name is not one of those. */
static pid_t owner(const char *name, const char *base)
{
	size_t n = strlen(base);
	const char *p;
	char *end;
	long pid;

	if (strncmp(name, base, n) || strncmp(name + n, ".tmp.", 5))
		return 0;
	p = name + n + 5;
	pid = strtol(p, &end, 10);
	if (end == p || *end != '.' || strlen(end + 1) != 6 || pid <= 0 || pid > 1 << 22)
		return 0;
	return pid;
}

void exporter__clean_stale(int dfd, const char *base)
{
	char *keep = NULL;
	struct timespec keep_t = { 0 };
	struct dirent *de;
	DIR *d = NULL;
	int fd;

	/* the directory the output goes to, as resolved for it (base/safeopen.c) */
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && !(d = fdopendir(fd)))
		close(fd);
	if (!d)
		goto cleanup;
	while ((de = readdir(d))) {
		pid_t pid = owner(de->d_name, base);
		struct stat st;

		/* a live pid is a bpfprof still writing it (or a reused pid: left alone) */
		if (!pid || pid == getpid() || !kill(pid, 0) || errno != ESRCH)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (is_archive(dirfd(d), de->d_name)) {
			/* the newest archive stays: the crash copy */
			if (!keep || st.st_mtim.tv_sec > keep_t.tv_sec ||
			    (st.st_mtim.tv_sec == keep_t.tv_sec &&
			     st.st_mtim.tv_nsec > keep_t.tv_nsec)) {
				if (keep)
					unlinkat(dirfd(d), keep, 0);
				free(keep);
				keep = xstrdup(de->d_name);
				keep_t = st.st_mtim;
				continue;
			}
		}
		if (!unlinkat(dirfd(d), de->d_name, 0))
			p_dbg("removed %s, left by a bpfprof (pid %d) that died", de->d_name, pid);
	}
	closedir(d);
cleanup:
	free(keep);
}
