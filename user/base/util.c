// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <fcntl.h>
#include <strings.h>
#include <dirent.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "util.h"

int parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 },
		{ "h", 3600e9 }, { "", 1e9 },
	};
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || v < 0 || !isfinite(v))
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) == 0) {
			double r = v * units[i].mult;

			if (r > 1e19)
				return -EINVAL;
			*ns = (uint64_t)(r + 0.5);
			return 0;
		}
	}
	return -EINVAL;
}

int parse_buffer_size(const char *arg, uint64_t *bytes)
{
	if (parse_size(arg, bytes) || *bytes < 4096 || *bytes > (1ull << 31)) {
		p_err("invalid --buffer-size '%s' (4k to 2G, e.g. 256M)", arg);
		return -EINVAL;
	}
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -EINVAL;
	if (*end) {
		switch (*end) {
		case 'k': case 'K': mult = 1ull << 10; break;
		case 'm': case 'M': mult = 1ull << 20; break;
		case 'g': case 'G': mult = 1ull << 30; break;
		default: return -EINVAL;
		}
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'b' || *end == 'B')
			end++;
		if (*end)
			return -EINVAL;
	}
	if (v > UINT64_MAX / mult)
		return -EINVAL;
	*bytes = v * mult;
	return 0;
}

char *fmt_duration(uint64_t ns, char *buf, size_t len)
{
	static const struct {
		uint64_t div;
		const char *unit;
	} u[] = { { 1000000000ull, "s" }, { 1000000ull, "ms" }, { 1000ull, "us" } };
	size_t i;

	for (i = 0; i < 3; i++) {
		if (ns >= u[i].div) {
			double v = (double)ns / u[i].div;

			snprintf(buf, len, v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v,
				 u[i].unit);
			return buf;
		}
	}
	snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	return buf;
}

uint64_t now_ns(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int parse_pids(const char *arg, pid_t **pids, size_t *n)
{
	return parse_ids("pid", arg, pids, n);
}

int parse_ids(const char *what, const char *arg, pid_t **pids, size_t *n)
{
	char *copy = xstrdup(arg), *save = NULL, *tok;
	int err = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v;

		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || *end || v <= 0 || v > INT_MAX) {
			p_err("invalid %s '%s'", what, tok);
			err = -EINVAL;
			break;
		}
		*pids = xrealloc(*pids, (*n + 1) * sizeof(**pids));
		(*pids)[(*n)++] = v;
	}
	free(copy);
	return err;
}

void strv_push(char ***arr, size_t *n, const char *s)
{
	*arr = xrealloc(*arr, (*n + 1) * sizeof(**arr));
	(*arr)[(*n)++] = (char *)s;
}

void remove_tmpdir(const char *dir)
{
	struct dirent *de;
	DIR *dh;

	if (!dir[0])
		return;
	dh = opendir(dir);
	while (dh && (de = readdir(dh)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(dh), de->d_name, 0);
	if (dh)
		closedir(dh);
	rmdir(dir);
}

int parse_count(const char *opt, const char *arg, unsigned long min, unsigned long max,
		unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max) {
		if (max < ULONG_MAX && max <= UINT32_MAX)
			p_err("invalid %s '%s': want a number from %lu to %lu", opt, arg, min, max);
		else
			p_err("invalid %s '%s': want a %snumber", opt, arg, min ? "positive " : "");
		return -EINVAL;
	}
	*out = v;
	return 0;
}

void stdio_to_null(void)
{
	int null = open("/dev/null", O_RDWR);

	if (null < 0)
		return;
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	if (null > 2)
		close(null);
}

uint32_t kdev_of(dev_t dev)
{
	return (uint32_t)(major(dev) << 20 | (minor(dev) & 0xfffff));
}

dev_t dev_of_kdev(uint32_t kdev)
{
	return makedev(kdev >> 20, kdev & 0xfffff);
}

unsigned long fd_limit_raise(unsigned long want)
{
	struct rlimit rl;
	unsigned long max = 0;
	FILE *f;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 1024;
	f = rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max ? fopen("/proc/sys/fs/nr_open", "r") :
								 NULL;
	if (f) {
		if (fscanf(f, "%lu", &max) != 1)
			max = 0;
		fclose(f);
	}
	max = max < want ? max : want;
	if (max > rl.rlim_max) {
		struct rlimit up = { .rlim_cur = max, .rlim_max = max };

		if (!setrlimit(RLIMIT_NOFILE, &up))
			return max;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur == RLIM_INFINITY ? 1ul << 20 : (unsigned long)rl.rlim_cur;
}
