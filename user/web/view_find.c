// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * view's inputs found (view.h): speedscope's files, a program on PATH, and
 * what kind of file a recording is.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "archive/archive.h"
#include "base/json.h"
#include "base/log.h"
#include "base/util.h"
#include "view.h"

#define SPEEDSCOPE_REL	"tests/clients/node_modules/speedscope/dist/release"
/* make install's copy, beside the installed binary: PREFIX/bin/../share/bpfprof/speedscope */
#define SPEEDSCOPE_INSTALLED	"../share/bpfprof/speedscope"

static bool is_dir_with(const char *dir, const char *file)
{
	char p[PATH_MAX + 128];

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return !access(p, R_OK);
}

/*
 * speedscope's static build: --speedscope-dir, $BPFPROF_SPEEDSCOPE, the copy
 * make install put beside the binary (PREFIX/share/bpfprof/speedscope: found
 * from the binary's own path, so that a DESTDIR or a moved prefix works too),
 * the test clients beside the binary (a source tree), or a global npm install.
 */
char *view_find_speedscope(const char *opt)
{
	static const char *const global[] = {
		"/usr/local/lib/node_modules/speedscope/dist/release",
		"/usr/lib/node_modules/speedscope/dist/release",
		"/usr/share/nodejs/speedscope/dist/release",
	};
	char self[PATH_MAX], p[PATH_MAX + 64], *slash;
	const char *env = getenv("BPFPROF_SPEEDSCOPE");
	ssize_t n;
	size_t i;

	if (opt)
		return is_dir_with(opt, "index.html") ? realpath(opt, NULL) : NULL;
	if (env && *env)
		return is_dir_with(env, "index.html") ? realpath(env, NULL) : NULL;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(p, sizeof(p), "%s/" SPEEDSCOPE_INSTALLED, self);
			if (is_dir_with(p, "index.html"))
				return realpath(p, NULL);
			snprintf(p, sizeof(p), "%s/" SPEEDSCOPE_REL, self);
			if (is_dir_with(p, "index.html"))
				return realpath(p, NULL);
		}
	}
	for (i = 0; i < sizeof(global) / sizeof(global[0]); i++)
		if (is_dir_with(global[i], "index.html"))
			return xstrdup(global[i]);
	return NULL;
}

/* An executable in $PATH, or NULL. */
char *view_find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *r = NULL;

	copy = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir && !r; dir = strtok_r(NULL, ":", &save)) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/%s", *dir ? dir : ".", name);
		if (!access(p, X_OK))
			r = xstrdup(p);
	}
	free(copy);
	return r;
}

/* Archive, Chrome trace or speedscope file?  0 or -errno (printed). */
int view_detect_kind(const char *path, enum input_kind *kind)
{
	char buf[65536];
	size_t n;
	char first;
	FILE *f;
	int fd;

	if (archive__probe(path) > 0) {
		*kind = IN_ARCHIVE;
		return 0;
	}
	/* read twice (here and by its reader): a regular file, never a device */
	fd = open_binary(path, NULL);
	f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		int err = fd >= 0 ? -errno : fd;

		if (fd >= 0)
			close(fd);
		p_err("cannot open %s: %s", path,
		      err == -ENOEXEC ? "not a regular file" : strerror(-err));
		return err;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	first = json_first(buf, n);
	if (first == '[') {
		*kind = IN_CHROME;	/* the JSON Array Format of the Trace Event Format */
		return 0;
	}
	if (first == '{') {
		if (strstr(buf, "speedscope.app/file-format-schema")) {
			*kind = IN_SPEEDSCOPE;
			return 0;
		}
		if (strstr(buf, "\"traceEvents\"")) {
			*kind = IN_CHROME;
			return 0;
		}
	}
	p_err("%s: not a bpfprof archive, Chrome trace (JSON) or speedscope file", path);
	return -EINVAL;
}
