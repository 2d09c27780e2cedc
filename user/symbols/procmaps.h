/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one reader of /proc/PID/maps: the lines parsed once, for every place
 * that needs a process's mappings (library selection, listing USDT probes,
 * pointer ranges for data edges, the symbolizer).
 */
#ifndef BPFPROF_PROCMAPS_H
#define BPFPROF_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct procmap {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;		/* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char perms[5];		/* "r-xp" */
	const char *path;	/* "" when anonymous; "[vdso]" etc.; valid during the call only */
};

/*
 * Parses one maps line (modified in place: the path is cut at its newline).
 * False for a line that is not one.
 */
bool procmaps__parse(char *line, struct procmap *m);
/*
 * Calls fn for every mapping of pid, in address order; a non-zero return
 * stops the walk and is returned.  -errno when the file cannot be opened
 * (-ENOENT: no such process).
 */
int procmaps__each(pid_t pid, int (*fn)(void *ctx, const struct procmap *m), void *ctx);
/* The whole text of pid's maps (allocated), or NULL when the process is gone. */
char *procmaps__read(pid_t pid);
/*
 * text (maps as read, or NULL) with m added as the kernel would show it:
 * lines it maps over removed, in address order (allocated).
 */
char *procmaps__insert(const char *text, const struct procmap *m);

#endif
