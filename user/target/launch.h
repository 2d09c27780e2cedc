/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Starting the traced command held: the child is forked and waits before
 * exec until the probes are attached, so not one instruction of the program
 * runs untraced.  Under sudo the command runs as the invoking user.
 */
#ifndef BPFPROF_LAUNCH_H
#define BPFPROF_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct launch {
	pid_t pid;
	int release_fd;		/* write end: closing it after a byte releases the child */
	int err_fd;		/* read end: the child's exec errno, EOF on success */
	char *path;		/* resolved executable */
};

/* Resolves argv[0] like execvp (PATH search); returns 0 or -ENOENT/-EACCES. */
int launch__resolve(const char *cmd, char **path);
/*
 * The same search, the path as found (symbolic links not resolved): what to
 * exec, so the program is started as what it was named (its comm, AT_EXECFN:
 * redis-server, a link to redis-check-rdb, stays redis-server).
 */
int launch__find(const char *cmd, char **path);
/* A file to read (list): a path needs to be readable only; a bare name is a command (PATH). */
int launch__resolve_file(const char *name, char **path);
/*
 * The executable of running process pid, for symbols and uprobes: its path,
 * or /proc/PID/exe itself when the file was deleted or lives in another
 * mount namespace.  0, -ESRCH, or -errno.
 */
int launch__pid_exe(pid_t pid, char **path);
/*
 * The running processes of `attach` and `serve`: fails with one message if
 * one is gone; *exe is the first one's executable (the others are traced
 * through the same patterns: a warning names those running another one).
 */
int launch__targets(const pid_t *pids, size_t n, char **exe);
/* Forks the held child.  `path` is taken over by l. */
int launch__start(struct launch *l, char *path, char *const argv[], bool as_root);
/* Lets the child exec; returns 0 or the exec error (-errno) reported by the child. */
int launch__release(struct launch *l);
/* Kills a child that was never released (error paths). */
void launch__abort(struct launch *l);
void launch__free(struct launch *l);

#endif
