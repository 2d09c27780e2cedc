/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Strings of traced processes that the BPF side could not read.
 *
 * A probe reads its string arguments (bpfprof.h labels, keys, names) with
 * bpf_probe_read_user_str(), which cannot fault a page in: a literal on a
 * page the program never touched comes back empty.  The record then says
 * where the string lies in the mapped file (bpf/events.h, bp_usdt_where),
 * and it is read here from the file itself: the file is the one the process
 * maps (found through /proc/PID/maps while the process lives, or among the
 * binaries whose probes were attached), identified by device and inode, and
 * kept open; strings are cached per (file, offset).  Without a file (an
 * anonymous mapping), or when the file cannot be found, the live process's
 * memory is read (process_vm_readv) while it exists.
 */
#ifndef BPFPROF_USTRINGS_H
#define BPFPROF_USTRINGS_H

#include <stddef.h>
#include <stdint.h>

struct ustrings;
struct bp_usdt_where;

struct ustrings *ustrings__new(void);
void ustrings__free(struct ustrings *u);	/* accepts NULL */
/* A binary whose probes are attached: where strings of exited processes are looked for. */
void ustrings__add_file(struct ustrings *u, const char *path);
/*
 * The string at addr in process pid (w: its place in the mapped file, or
 * NULL / ino 0 when unknown) into buf, always NUL-terminated.  0 or -errno
 * (buf is then "").
 */
int ustrings__read(struct ustrings *u, uint32_t pid, uint64_t addr, const struct bp_usdt_where *w,
		   char *buf, size_t len);

#endif
