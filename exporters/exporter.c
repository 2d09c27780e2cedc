// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/log.h"
#include "base/safeopen.h"
#include "exporter.h"
#include "archive/replay.h"

const struct exporter_ops *const exporter_table[] = {
	&chrome_exporter,
	&perfetto_exporter,
	&speedscope_exporter,
	&pprof_exporter,
	&folded_exporter,
	&csv_exporter,
	&dot_exporter,
	&archive_exporter,
	NULL,
};

/* Output buffer: big writes keep the syscall count low on multi-GB traces. */
#define OUT_BUFSZ	(1 << 20)

/* The public struct plus what only this file needs to know. */
struct exporter_impl {
	struct exporter e;
	char *buf;		/* setvbuf buffer; must outlive the FILE */
	struct safe_out so;	/* where it goes (base/safeopen.h); so.fd is e->out's */
	bool finished;
};

static struct exporter_impl *impl(struct exporter *e)
{
	return (struct exporter_impl *)e;
}

const struct exporter_ops *exporter__find(const char *name)
{
	int i;

	if (!name)
		return NULL;
	for (i = 0; exporter_table[i]; i++)
		if (strcmp(exporter_table[i]->name, name) == 0)
			return exporter_table[i];
	return NULL;
}

const struct exporter_ops *exporter__for_path(const char *path)
{
	const struct exporter_ops *best = NULL;
	size_t len, slen, best_len = 0;
	int i;

	if (!path)
		return NULL;
	len = strlen(path);
	/*
	 * The longest matching suffix wins, whatever the table order, so that
	 * "x.speedscope.json" is speedscope even though it also ends in ".json".
	 */
	for (i = 0; exporter_table[i]; i++) {
		const char *sufs[2] = { exporter_table[i]->suffix, exporter_table[i]->suffix2 };
		int k;

		for (k = 0; k < 2; k++) {
			if (!sufs[k])
				continue;
			slen = strlen(sufs[k]);
			if (slen == 0 || slen > len || slen <= best_len)
				continue;
			if (strcasecmp(path + len - slen, sufs[k]) == 0) {
				best = exporter_table[i];
				best_len = slen;
			}
		}
	}
	return best;
}

/* Written in place: standard output, or a destination that is not a regular file. */
static bool is_stdout(const struct exporter *e)
{
	return e->out == stdout || strcmp(e->path, "-") == 0 || !e->tmp_path;
}

/*
 * The process's umask, read without changing it: umask(2) can only set it,
 * and setting it even for a moment races with other threads creating files
 * (serve writes captures from its request threads).
 */
static mode_t current_umask(void)
{
	unsigned int m = 022;
	char line[128];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return m;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	fclose(f);
	return (mode_t)(m & 0777);
}

/* The name the user knows: the final path, not the temporary one. */
static const char *out_name(const struct exporter *e)
{
	return strcmp(e->path, "-") == 0 ? "standard output" : e->path;
}

/*
 * A callback's result, or the stream's error: exporters write with stdio and
 * may not check every call, but a failed write leaves ferror() set and errno
 * from the write(2) that failed (errno is cleared before each callback so a
 * stale value is not reported).
 */
static int stream_err(struct exporter *e, int err)
{
	if (err)
		return err;
	/* per event: the flag alone, not the stream's lock (the decoding thread writes it) */
	if (e->out && ferror_unlocked(e->out))
		return errno ? -errno : -EIO;
	return 0;
}

/*
 * When run under sudo, give the output to the invoking user: a trace they
 * cannot delete or overwrite without sudo again is a nuisance.  Only where
 * they could have made it themselves (their directory, or one like /tmp):
 * elsewhere (/etc) the file stays root's, or `sudo bpfprof` allowed for
 * tracing alone would hand out files in system directories.  Best effort.
 */
static void chown_to_sudo_user(struct exporter *e, int fd)
{
	uid_t uid;
	gid_t gid;

	if (!impl(e)->so.dir_is_users || !sudo_user(&uid, &gid))
		return;
	if (fchown(fd, uid, gid))
		p_warn("cannot give %s to uid %u: %s", out_name(e), (unsigned)uid, strerror(errno));
}

int exporter__new(const struct exporter_ops *ops, const char *path, const struct bp_session *s,
		  struct exporter **out)
{
	struct exporter_impl *x;
	struct exporter *e;
	int err;

	*out = NULL;
	x = xcalloc(1, sizeof(*x));
	e = &x->e;
	e->ops = ops;
	e->path = xstrdup(path);
	if (ops->priv_size)
		e->priv = xcalloc(1, ops->priv_size);

	x->so.fd = x->so.dfd = -1;
	if (strcmp(path, "-") == 0) {
		e->out = stdout;
	} else {
		/*
		 * A new temporary in the destination's directory, renamed over
		 * it at the end (atomic, never across filesystems), or a device
		 * or FIFO written in place; never through a link a user planted.
		 */
		err = safe_out__open(path, &x->so);
		if (err) {
			p_err("cannot write %s: %s", path, safe_out__strerror(err));
			goto cleanup;
		}
		if (x->so.tmp) {
			/* our pid in its name: what a dead bpfprof left is known as such (stale.c) */
			exporter__clean_stale(x->so.dfd, x->so.name);
			const char *slash = strrchr(path, '/');

			/* for messages and tests: the name beside the destination's */
			e->tmp_path = xasprintf("%.*s%s", slash ? (int)(slash - path + 1) : 0, path,
						x->so.tmp);
		}
		e->out = fdopen(x->so.fd, "w");
		if (!e->out) {
			err = -errno;
			p_err("cannot write %s: %s", path, strerror(-err));
			goto cleanup;
		}
		x->so.fd = -1;	/* owned by e->out now */
		x->buf = malloc(OUT_BUFSZ);
		/* Without the buffer stdio's default still works, only slower. */
		if (x->buf && setvbuf(e->out, x->buf, _IOFBF, OUT_BUFSZ)) {
			free(x->buf);
			x->buf = NULL;
		}
	}

	errno = 0;
	err = stream_err(e, ops->begin ? ops->begin(e, s) : 0);
	if (err) {
		p_err("cannot write %s: %s", out_name(e), strerror(-err));
		goto cleanup;
	}
	*out = e;
	return 0;

cleanup:
	exporter__free(e);
	return err;
}

int exporter__event(struct exporter *e, const struct bp_session *s, const struct bp_event *ev)
{
	int err;

	errno = 0;
	err = stream_err(e, e->ops->event ? e->ops->event(e, s, ev) : 0);
	if (err)
		p_err("cannot write %s: %s", out_name(e), strerror(-err));
	return err;
}

int exporter__finish(struct exporter *e, const struct bp_session *s)
{
	struct exporter_impl *x = impl(e);
	int fd, err;

	if (x->finished)
		return 0;

	errno = 0;
	err = stream_err(e, e->ops->end ? e->ops->end(e, s) : 0);
	if (err)
		goto cleanup;
	/* Buffered data is only known to be written after fflush(). */
	if (fflush(e->out) || ferror(e->out)) {
		err = errno ? -errno : -EIO;
		goto cleanup;
	}

	if (is_stdout(e)) {
		x->finished = true;
		if (e->out == stdout)
			return 0;
		/* a device or FIFO written in place: close() can still fail */
		err = fclose(e->out) ? -errno : 0;
		e->out = NULL;
		if (err)
			goto cleanup;
		return 0;
	}

	fd = fileno(e->out);
	/* mkstemp() made it 0600: the mode a plain file of this user would get. */
	if (fchmod(fd, 0666 & ~current_umask())) {
		err = -errno;
		goto cleanup;
	}
	chown_to_sudo_user(e, fd);
	/* on disk before it replaces the destination: a crash leaves the old file or the new */
	if (fsync(fd) && errno != EINVAL && errno != EROFS) {
		err = -errno;
		goto cleanup;
	}

	/* fclose() can still report a delayed write error (NFS, quotas). */
	err = fclose(e->out) ? -errno : 0;
	e->out = NULL;
	free(x->buf);
	x->buf = NULL;
	if (err)
		goto cleanup;

	err = safe_out__commit(&x->so);
	if (err)
		goto cleanup;
	x->finished = true;
	return 0;

cleanup:
	p_err("cannot write %s: %s", out_name(e), strerror(-err));
	return err;
}

uint64_t exporter__bytes(struct exporter *e)
{
	off_t pos = e->out ? ftello(e->out) : -1;
	uint64_t n = pos > 0 ? (uint64_t)pos : 0;

	if (e->ops->held)
		n += e->ops->held(e);
	return n;
}

void exporter__free(struct exporter *e)
{
	struct exporter_impl *x;

	if (!e)
		return;
	x = impl(e);
	if (e->ops->free)
		e->ops->free(e);
	if (e->out && e->out != stdout)
		fclose(e->out);
	/* Never leave a partial file behind that looks like a trace. */
	safe_out__free(&x->so);
	free(x->buf);
	free(e->priv);
	free(e->tmp_path);
	free(e->path);
	free(x);
}

const struct exporter_ops *exporter__choose(const char *format, const char *path, const char *cmd)
{
	const struct exporter_ops *ops;
	struct stat st;

	/* -o DIR: say so (its name tells no format, and with --format the write would fail late) */
	if (path && strcmp(path, "-") && !stat(path, &st) && S_ISDIR(st.st_mode)) {
		p_err("cannot write '%s': is a directory", path);
		return NULL;
	}
	ops = format ? exporter__find(format) : exporter__for_path(path);
	if (!ops) {
		if (format)
			p_err("unknown format '%s' (see 'bpfprof %s --help')", format, cmd);
		else
			p_err("cannot tell the format of '%s' from its name: use --format", path);
	}
	return ops;
}

int exporter__sink_begin(void *sink, struct bp_session *s)
{
	struct exporter_sink *x = sink;

	return exporter__new(x->ops, x->out, s, &x->e);
}

int exporter__sink_event(void *sink, const struct bp_session *s, const struct bp_event *ev)
{
	struct exporter_sink *x = sink;

	return exporter__event(x->e, s, ev);
}

int exporter__replay(const char *path, bool partial, const struct event_filter *f,
		     const struct exporter_ops *ops, const char *out, uint64_t *nkept)
{
	struct exporter_sink x = { .ops = ops, .out = out };
	struct bp_session s;
	int err;

	session__init(&s);
	err = replay__run(path, partial, f, &s, exporter__sink_begin, exporter__sink_event, &x, nkept);
	if (!err)
		err = exporter__finish(x.e, &s);
	exporter__free(x.e);
	session__free(&s);
	return err;
}
