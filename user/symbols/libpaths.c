// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The files a LIB of -F LIB:GLOB / -U LIB:... names (see libpaths.h). */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "binfile.h"
#include "libpaths.h"
#include "procmaps.h"
#include "select.h"
#include "base/log.h"
#include "base/util.h"

static bool is_elf(const char *path)
{
	return file_has_magic(path, "\177ELF", 4);
}

/* Where shared libraries live, in the order the dynamic loader would look. */
static const char *const lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib",
	"/usr/local/lib", NULL,
};

/*
 * Appends a pinned path (binfile.h) once: each entry holds one pin, undone
 * when the list is freed (a file nothing selects is closed again).
 */
static void add_src(char ***paths, size_t *n, const char *src)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp((*paths)[i], src) == 0) {
			binfile__unpin(src);	/* the entry holds one already */
			return;
		}
	*paths = xrealloc(*paths, (*n + 1) * sizeof(**paths));
	(*paths)[(*n)++] = xstrdup(src);
}

/* Pins path (checked against pid's mappings); -ESTALE: not the file pid maps (printed). */
int libpaths__add(char ***paths, size_t *n, const char *path, pid_t pid)
{
	char *real = realpath(path, NULL);	/* the name shown; /proc/PID/exe has none */
	const char *src;
	int err;

	err = binfile__pin(real ? real : path, pid, &src);
	free(real);
	if (!err)
		add_src(paths, n, src);
	return err;
}

struct scan_ctx {
	pid_t pid;
	const char *glob;
	char ***paths;
	size_t *n;
	int err;	/* -ESTALE: a matching file is not what the process maps */
};

static void scan_dir(const char *dir, struct scan_ctx *x)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	char buf[PATH_MAX];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (fnmatch(x->glob, de->d_name, 0) || !strstr(de->d_name, ".so"))
			continue;
		snprintf(buf, sizeof(buf), "%s/%s", dir, de->d_name);
		if (!is_elf(buf))
			continue;	/* a linker script such as libc.so */
		if (libpaths__add(x->paths, x->n, buf, x->pid) == -ESTALE)
			x->err = -ESTALE;
	}
	closedir(d);
}

/*
 * A file the process maps whose name matches: pinned as the inode mapped
 * (binfile.h), so a file deleted or replaced since is matched by the name
 * it had, and a process in another mount namespace works.
 */
static int scan_one(void *ctx, const struct procmap *m)
{
	struct scan_ctx *x = ctx;
	char name[PATH_MAX];
	const char *src;
	int err;

	if (m->path[0] != '/' || !m->inode)
		return 0;
	binfile__map_name(m->path, name, sizeof(name));
	if (fnmatch(x->glob, strrchr(name, '/') + 1, 0))
		return 0;
	err = binfile__pin_mapping(x->pid, m, &src);
	if (!err)
		add_src(x->paths, x->n, src);
	else if (err == -ESTALE)
		x->err = err;
	return 0;
}

/* Mapped files of `pid` whose basename matches `glob`. */
int libpaths__scan_maps(pid_t pid, const char *glob, char ***paths, size_t *n)
{
	struct scan_ctx x = { pid, glob, paths, n, 0 };

	procmaps__each(pid, scan_one, &x);
	return x.err;
}


/*
 * Where a runtime dlopens its own modules from, outside the linker's path:
 * an interpreter at PREFIX/bin/python* loads its extension modules from
 * PREFIX/lib/python3.X/lib-dynload (CPython: json's _json).  Looked in
 * beside the linker's directories, so that they are probed before they load.
 */
static void scan_runtime_dirs(const char *exe, struct scan_ctx *x)
{
	char pat[PATH_MAX], *slash;
	glob_t g;
	size_t i;

	slash = strrchr(exe, '/');
	if (!slash || fnmatch("python*", slash + 1, 0))
		return;	/* only an interpreter's own name says where it looks */
	snprintf(pat, sizeof(pat), "%s", exe);
	for (i = 0; i < 2 && (slash = strrchr(pat, '/')); i++)
		*slash = 0;	/* PREFIX/bin/python3.11 -> PREFIX */
	if (i < 2 || strlen(pat) + 32 >= sizeof(pat))
		return;
	strcat(pat, "/lib/python3*/lib-dynload");
	if (glob(pat, GLOB_ONLYDIR, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc; i++)
		scan_dir(g.gl_pathv[i], x);
	globfree(&g);
}

/*
 * The ELF files LIB names, pinned: a path, or a glob over the names of the
 * main executable `exe` (may be NULL), of the files pid maps and of those
 * in the linker's directories.  -ESTALE when one is not the file pid maps,
 * -ENOEXEC when the path is not a regular file (both printed).
 */
int libpaths__resolve(const char *lib, const char *exe, pid_t pid, char ***paths, size_t *n)
{
	const char *base = exe ? strrchr(exe, '/') : NULL;
	const char *env = getenv("LD_LIBRARY_PATH");
	struct scan_ctx x = { pid, lib, paths, n, 0 };
	size_t i;
	int err;

	/* a path, or a glob over paths: a module loaded later from outside the linker's path */
	if (strchr(lib, '/') && strpbrk(lib, "*?[")) {
		glob_t g;

		if (!glob(lib, 0, NULL, &g)) {
			for (i = 0; i < g.gl_pathc; i++)
				if (is_elf(g.gl_pathv[i]) &&
				    libpaths__add(paths, n, g.gl_pathv[i], pid) == -ESTALE)
					x.err = -ESTALE;
			globfree(&g);
		}
		return x.err ? x.err : (*n ? 0 : -ENOENT);
	}
	if (strchr(lib, '/')) {
		err = libpaths__add(paths, n, lib, pid);
		if (err == -ENOEXEC)
			p_err("%s: not a regular file", lib);
		return err == -ESTALE || err == -ENOEXEC ? err : (*n ? 0 : -ENOENT);
	}
	/* the executable too: -U 'python3*:python:function__entry' before it runs */
	if (base && !fnmatch(lib, base + 1, 0) && is_elf(exe) &&
	    libpaths__add(paths, n, exe, pid) == -ESTALE)
		x.err = -ESTALE;
	if (pid > 0 && !x.err)
		x.err = libpaths__scan_maps(pid, lib, paths, n);
	if (env) {
		char *copy = xstrdup(env), *save = NULL, *d;

		for (d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
			scan_dir(d, &x);
		free(copy);
	}
	for (i = 0; lib_dirs[i]; i++)
		scan_dir(lib_dirs[i], &x);
	if (exe)
		scan_runtime_dirs(exe, &x);
	return x.err ? x.err : (*n ? 0 : -ENOENT);
}

int select__libraries(const char *lib, const char *exe, pid_t pid, char ***paths, size_t *n)
{
	*paths = NULL;
	*n = 0;
	return libpaths__resolve(lib, exe, pid, paths, n);
}
