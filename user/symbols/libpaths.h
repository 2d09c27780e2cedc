/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ELF files a LIB (of -F LIB:GLOB, -U LIB:PROVIDER:NAME) names, for
 * select.c: a path or a glob over paths; or a glob over file names, matched
 * against the main executable, the files the process maps, the linker's
 * directories and an interpreter's module directory.  Every file comes
 * pinned (binfile.h): each entry of a list holds one pin, which whoever
 * frees the entry undoes (binfile__unpin) unless it keeps the file.
 */
#ifndef BPFPROF_LIBPATHS_H
#define BPFPROF_LIBPATHS_H

#include <stddef.h>
#include <sys/types.h>

/* Appends path, pinned and checked against pid's mappings; -ESTALE: not the file pid maps (printed). */
int libpaths__add(char ***paths, size_t *n, const char *path, pid_t pid);

/* Appends the files pid maps whose name matches glob; -ESTALE as above. */
int libpaths__scan_maps(pid_t pid, const char *glob, char ***paths, size_t *n);

/*
 * Appends the files LIB names (exe may be NULL).  -ENOENT if none, -ESTALE
 * when one is not the file pid maps, -ENOEXEC when the path is not a
 * regular file (both printed).
 */
int libpaths__resolve(const char *lib, const char *exe, pid_t pid, char ***paths, size_t *n);

#endif
