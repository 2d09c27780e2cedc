/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Function selection: -F/-N patterns -> the modules and functions to probe.
 *
 * `-F GLOB` selects functions of the main executable, `-F LIB:GLOB` those of
 * a shared library whose file name matches LIB (a glob, or a path when it
 * contains '/').  With no -F at all, every function of the main executable
 * is selected (start-up glue such as _start excepted).  `-N [LIB:]GLOB`
 * removes functions.  C++ names keep their "::" (only a single ':' splits).
 */
#ifndef BPFPROF_SELECT_H
#define BPFPROF_SELECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "model/session.h"

struct probe_module {
	char *path;		/* file to attach to */
	unsigned long *offsets;	/* file offsets */
	uint64_t *cookies;	/* function ids (index into session.funcs) */
	size_t n;
	bool entry_only;	/* no return probes: a Go program (see select.c) */
};

struct probe_set {
	struct probe_module *mods;
	size_t nmods;
	size_t nfuncs;		/* total over modules */
	dev_t exe_dev;		/* the main executable's file as read (0, 0: not read) */
	ino_t exe_ino;
};

/* Files by identity (st_dev, st_ino), to probe each once. */
struct file_ids {
	struct file_id {
		dev_t dev;
		ino_t ino;
	} *v;
	size_t n;
};
/* Adds path's file; false if it was in already (or cannot be stat'ed). */
bool file_ids__add(struct file_ids *f, const char *path);
void file_ids__free(struct file_ids *f);

struct debug_conf;

struct select_opts {
	const char *exe;	/* main executable */
	pid_t pid;		/* >0: also resolve LIB against this process's mappings */
	char **includes;	/* -F */
	size_t nincludes;
	char **excludes;	/* -N */
	size_t nexcludes;
	bool lenient;		/* an image exec'd later: patterns that match nothing are not errors */
	bool main_only;		/* only the main executable's patterns (libraries are done) */
	bool no_exe;		/* exe is a script: only LIB: patterns apply now */
	bool no_skip_endbr;	/* probe endbr64 itself (single-stepped) instead of after it */
	bool list_only;		/* for 'list': keep functions the kernel would refuse, quietly */
	bool keep_args;		/* --args: probes stay before any write to an argument register */
	/*
	 * Files loaded later (capture/dlfollow.c): a LIB: pattern named by file
	 * name that matches no file now is no error (defer_missing); LIB is
	 * looked up only among the files pid maps (maps_only); the files LIB:
	 * patterns resolve to are added to *seen, and those in it already are
	 * left out (probed before).
	 */
	bool defer_missing;
	bool maps_only;
	struct file_ids *seen;
	/* where debug files are (debugsyms__configure); NULL: as the capture set it */
	const struct debug_conf *debug;
};

/*
 * Resolves the patterns, reads the symbol tables, adds modules and functions
 * to the session and fills `out`.  Errors (printed): -ENOENT (no library
 * matches LIB), -ESRCH (a pattern matches no function), -ENODATA (no
 * function symbols), -ENOEXEC (not ELF).
 */
int select__resolve(const struct select_opts *o, struct bp_session *s, struct probe_set *out);
void probe_set__free(struct probe_set *ps);

/* How the probe on f fires (wherever placement put it), and its name ("emulated", ...). */
enum select_path { SELECT_EMULATED, SELECT_SINGLE_STEP, SELECT_NOP5 };
enum select_path select__probe_kind(const struct bp_func *f);
const char *select__probe_path(const struct bp_func *f);

/*
 * The exception unwinder's entry points (_Unwind_RaiseException and co.) in
 * libgcc_s and in `exe` (libgcc_eh linked statically), for
 * tracer__attach_unwinders().  Cookies are not used.  Never fails: a program
 * without an unwinder gets an empty set.
 */
void select__unwinders(const char *exe, pid_t pid, struct probe_set *out);

/*
 * The ELF files LIB names (a file-name glob or a path): the main executable
 * `exe` (may be NULL), the files pid maps (pid > 0), the linker's
 * directories.  Pinned paths (binfile.h); -ENOENT if none, -ESTALE (printed)
 * when one is not the file pid maps.
 */
int select__libraries(const char *lib, const char *exe, pid_t pid, char ***paths, size_t *n);

/* Splits "LIB:GLOB"; *lib is NULL for a plain glob.  Returns a malloc'd copy to free. */
char *select__split(const char *pattern, const char **lib, const char **glob);

#endif
