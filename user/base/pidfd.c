// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Signals by pidfd: see pidfd.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <time.h>
#include <unistd.h>
#include "pidfd.h"

int pidfd_of(pid_t pid)
{
	int fd;

	if (pid <= 0)
		return -ESRCH;
	fd = pidfd_open(pid, 0);
	return fd < 0 ? -errno : fd;
}

int pidfd_signal(int pidfd, int sig)
{
	return pidfd_send_signal(pidfd, sig, NULL, 0) ? -errno : 0;
}

/* starttime of /proc/PID/stat (field 22): clock ticks since boot (CLOCK_BOOTTIME). */
static int start_ticks(pid_t pid, unsigned long long *ticks)
{
	char path[64], buf[1024], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* comm may hold spaces and parentheses: the fields start after the last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c" " %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d"
				" %*d %*d %*d %*d %llu", ticks) != 1)
		return -EINVAL;
	return 0;
}

int pidfd_of_started_by(pid_t pid, uint64_t mono_ns)
{
	struct timespec mono, boot;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t boot_ns;
	int fd, err;

	fd = pidfd_of(pid);
	if (fd < 0)
		return fd;
	/* read after the pidfd: if pid changed hands since, this is the newer process */
	err = start_ticks(pid, &ticks);
	if (err) {
		close(fd);
		return err == -ENOENT ? -ESRCH : err;
	}
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	/* the record's time on the boot clock (they differ by the time suspended) */
	boot_ns = mono_ns + ((uint64_t)boot.tv_sec * 1000000000ull + boot.tv_nsec) -
		  ((uint64_t)mono.tv_sec * 1000000000ull + mono.tv_nsec);
	if (hz <= 0)
		hz = 100;
	if (ticks * (1000000000ull / hz) > boot_ns) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}
