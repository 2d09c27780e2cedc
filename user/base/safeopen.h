/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How bpfprof, often root, opens the files users name or control
 * (issue 27).  One way for every binary, debug file, input and output:
 *
 *  - Reading: the path is opened with O_PATH (which opens nothing: no
 *    device driver runs, a FIFO does not block), the descriptor fstat()ed,
 *    and only then reopened for reading through /proc/self/fd, so that
 *    what is read is the very file whose type was checked.  Binaries and
 *    debug files must be regular files; an input stream may also be a
 *    FIFO or pipe of our own user or of the user who ran sudo.
 *
 *  - Writing: the directory is reached following only the symbolic links
 *    root owns (a link a user planted in a directory of theirs or in /tmp
 *    is refused, as are links to follow at the last component), the
 *    output is a new file (O_EXCL) renamed over the destination, and a
 *    destination that is not a regular file is written in place only
 *    when it is a character device or FIFO nobody but root or the
 *    invoking user could have made, or one of our own descriptors
 *    (/dev/stdout, /proc/self/fd/N).  Never a block device.  Under sudo,
 *    in a directory of the invoking user's or a sticky world-writable one
 *    (/tmp), the new file is created with that user's filesystem ids.
 */
#ifndef BPFPROF_SAFEOPEN_H
#define BPFPROF_SAFEOPEN_H

#include <stdbool.h>
#include <sys/types.h>

struct stat;

/*
 * Opens a file bpfprof reads as a binary (ELF, debug file): read-only,
 * close-on-exec; anything but a regular file is refused (-ENOEXEC) before
 * it is opened.  Fills *st when st is not NULL.  The fd, or -errno.
 */
int open_binary(const char *path, struct stat *st);
/*
 * Opens an input stream (an archive, a trace for view): a regular file, or
 * a FIFO, pipe or socket owned by us or by the user who ran sudo (e.g.
 * /dev/stdin of a pipeline); never a device (-ENOEXEC).  A FIFO is opened
 * without waiting for a writer.  The fd, or -errno.
 */
int open_input(const char *path, struct stat *st);
/* Does the file at path (a regular file) begin with these len bytes? */
int file_has_magic(const char *path, const void *magic, size_t len);

/* The user who ran sudo (SUDO_UID/SUDO_GID) when we are root under sudo; false otherwise. */
bool sudo_user(uid_t *uid, gid_t *gid);

/*
 * Where an output goes.  safe_out__open() fills it: either `fd` is the
 * destination itself, written in place (a device or FIFO allowed above,
 * or our own descriptor), or `fd` is a new temporary file `tmp` in the
 * directory `dfd`, to be renamed to `name` by safe_out__commit().
 */
struct safe_out {
	int dfd;		/* the destination's directory (O_PATH), or -1 */
	char *name;		/* the destination's name in dfd */
	char *tmp;		/* the temporary's name in dfd; NULL when written in place */
	int fd;			/* what to write */
	bool dir_is_users;	/* dfd is the invoking user's, or sticky and world-writable: made as them */
};

/*
 * Opens the output `path`.  0 or -errno: -ELOOP when a symbolic link a
 * user owns is on the way, -ENOEXEC when the destination is a file that
 * is not written as root (a block device, a socket, another user's FIFO);
 * safe_out__strerror() says it in words.
 */
int safe_out__open(const char *path, struct safe_out *o);
/* Renames the temporary over the destination; 0 or -errno. */
int safe_out__commit(struct safe_out *o);
/* Closes what is open and removes the temporary when it was not committed. */
void safe_out__free(struct safe_out *o);
/* The message for an error of safe_out__open(). */
const char *safe_out__strerror(int err);

#endif
