/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Binaries opened once, read and probed through that one descriptor.
 *
 * bpfprof runs as root on files other users control.  Reading a binary's
 * symbols through one path lookup and attaching uprobes through another
 * lets whoever owns the path swap the file in between, and root would then
 * place int3 at the offsets of one file in another (a system library, say).
 * So each binary is opened once (O_RDONLY | O_CLOEXEC | O_NONBLOCK, regular
 * files only) and "pinned": every later reader (symbols, placement, DWARF,
 * USDT notes) and the attach itself use "/proc/self/fd/N" of that same
 * descriptor, which the kernel resolves to the same inode (a uprobe is
 * keyed on the inode).  The descriptors stay open for bpfprof's lifetime
 * (close-on-exec: the launched command does not inherit them).
 *
 * When a process is named, the file must be the one it maps: a path whose
 * file is not the inode the process mapped under that name (replaced on
 * disk since, or a different mount namespace) is pinned through
 * /proc/PID/map_files instead, i.e. exactly the mapped inode, deleted or
 * not; if that is not possible (no CAP_SYS_ADMIN) it is refused with one
 * error line.  A path the process does not map at all (a library it may
 * dlopen later) is pinned as opened.
 */
#ifndef BPFPROF_BINFILE_H
#define BPFPROF_BINFILE_H

#include <stdbool.h>
#include <sys/types.h>
#include "procmaps.h"

/*
 * Opens `path` (checked against pid's mappings when pid > 0) and sets *src
 * to its pinned path "/proc/self/fd/N" (valid for bpfprof's lifetime; the
 * same string for the same inode).  Returns 0, -ENOEXEC (not a regular
 * file), -ESTALE (not the file pid maps, and the mapped one cannot be
 * opened: printed), or another -errno from open(2).
 */
int binfile__pin(const char *path, pid_t pid, const char **src);

/* Pins the file of mapping m of pid (through /proc/PID/map_files). */
int binfile__pin_mapping(pid_t pid, const struct procmap *m, const char **src);

/*
 * Each pin (binfile__pin, binfile__pin_mapping, binfile__ref) holds the file
 * open; binfile__unpin() undoes one, and the last closes it: a pinned path
 * must not be used after the pin its holder took is undone (the descriptor
 * number may then name another file).  Any other string: nothing happens.
 */
void binfile__ref(const char *src);
void binfile__unpin(const char *src);

/* The name to show for a pinned path (what it was opened as); any other string as is. */
const char *binfile__name(const char *src);

/* True when `path` is a pinned path. */
bool binfile__is_pinned(const char *path);

/*
 * Strips the " (deleted)" the kernel appends to the name of a mapped file
 * that was removed or replaced: into buf, returns buf.
 */
const char *binfile__map_name(const char *path, char *buf, size_t size);

#endif
