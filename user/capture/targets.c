// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pipeline's targets (capture.c is the rest): the processes and the
 * selection resolved before anything is loaded, and exec following (a
 * traced process's new image probed with the same patterns while it is
 * held at its first instruction).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "capture.h"
#include "internal.h"
#include "target/launch.h"
#include "probes/trace.h"
#include "cpython/cpython.h"
#include "decode/hold.h"
#include "base/log.h"
#include "base/util.h"
#include "symbols/binfile.h"
#include "symbols/placement.h"
#include "symbols/select.h"
#include "symbols/symbolize.h"
#include "symbols/ustrings.h"

/* ---------------------------------------------------------------- targets */

static void read_comm(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (!f)
		return;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/*
 * Running targets existed before the recording, so no fork or rename record
 * will name them: take their names from /proc now.
 */
void capture_name_existing(struct bp_session *s, pid_t pid)
{
	char path[96], comm[32];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	read_comm(path, comm, sizeof(comm));
	if (comm[0])
		session__set_process_name(s, pid, comm);
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);
		struct bp_thread *t;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
		read_comm(path, comm, sizeof(comm));
		t = session__thread(s, tid, pid);
		if (comm[0] && !t->name[0])
			snprintf(t->name, sizeof(t->name), "%.15s", comm);
	}
	closedir(d);
}

static bool is_script(const char *path)
{
	return file_has_magic(path, "#!", 2);
}

/* Was this executable probed already?  Remembers it if not. */
bool capture_image_known(struct capture *c, const struct stat *st)
{
	size_t i;

	for (i = 0; i < c->nimages; i++)
		if (c->images[i].st_dev == st->st_dev && c->images[i].st_ino == st->st_ino)
			return true;
	c->images = xrealloc(c->images, (c->nimages + 1) * sizeof(*c->images));
	c->images[c->nimages++] = *st;
	return false;
}

/* Does any -F pattern name main-executable functions (no LIB: part)? */
static bool plain_includes(const struct capture_opts *o)
{
	size_t i;

	for (i = 0; i < o->nincludes; i++) {
		const char *lib, *glob;
		char *copy = select__split(o->includes[i], &lib, &glob);

		free(copy);
		if (!lib)
			return true;
	}
	return false;
}

/* Do -F/-N patterns (or the default) select main-executable functions? */
bool capture_follows_exec(const struct capture_opts *o)
{
	if (o->no_exec_follow)
		return false;
	if (!o->nincludes)
		return !(o->sample_hz || o->offcpu);	/* default: every function of the exe */
	return plain_includes(o);
}

/*
 * Are Python calls wanted of a CPython target?  Yes by default and with
 * library patterns (-F 'libsqlite3.so*:...' adds to them); not when plain
 * -F patterns select the interpreter's own C functions, nor when only
 * sampling, unless py: patterns ask.
 */
static bool python_wanted(const struct capture_opts *o, const struct py_capture *py)
{
	if (pycap__patterns(py))
		return true;
	if (!o->nincludes)
		return !(o->sample_hz || o->offcpu);
	return !plain_includes(o);
}

/* The targets and the selection: nothing is loaded yet. */
int capture_resolve_targets(struct capture *c)
{
	const struct capture_opts *o = &c->o;
	int err;

	/* -F/-N py:GLOB select Python functions: out of the native patterns */
	c->py = pycap__new(c->o.includes, &c->o.nincludes, c->o.excludes, &c->o.nexcludes, o->all);
	c->py_wanted = python_wanted(o, c->py);
	c->sopts = (struct select_opts){
		.includes = o->includes, .nincludes = o->nincludes,
		.excludes = o->excludes, .nexcludes = o->nexcludes,
		.no_skip_endbr = o->no_skip_endbr,
		.keep_args = o->args || o->deps,
	};
	capture_dl_prepare(c);	/* LIB: files loaded later (dlfollow.c) */
	if (o->npids) {
		err = launch__targets(o->pids, o->npids, &c->exe);
		if (err)
			return err;
		c->sopts.pid = o->pids[0];
	} else if (o->argv) {
		err = launch__resolve(o->argv[0], &c->exe);
		if (err) {
			p_err("cannot run '%s': %s", o->argv[0],
			      err == -ENOENT ? "command not found" : strerror(-err));
			return -ENOENT;
		}
	}
	c->sopts.exe = c->exe ? c->exe : "/proc/self/exe";
	/* A script: its interpreter is rarely what the user wants; follow what it execs. */
	c->sopts.lenient = c->sopts.no_exe = !c->exe || (!o->npids && is_script(c->exe));
	/* CPython: its Python functions are the default selection, not the interpreter's. */
	if (c->exe && c->py_wanted && !(c->sopts.no_exe && !o->npids)) {
		err = pycap__check(c->py, c->exe, o->npids ? o->pids[0] : 0,
				   o->nincludes || o->sample_hz || o->offcpu);
		if (err < 0)
			return err;
		c->python = err > 0;
	}
	if (pycap__patterns(c->py) && !c->python && !c->sopts.no_exe) {
		p_err("py: patterns select Python functions, but %s is not a CPython interpreter",
		      c->exe ? c->exe : "the target");
		return -EINVAL;
	}
	/* Sampling without -F, or a Python program: no native function probes at all. */
	if ((o->sample_hz || o->offcpu || c->python) && !o->nincludes)
		err = 0;
	else
		err = select__resolve(&c->sopts, c->s, &c->ps);
	if (err && c->sopts.lenient && o->argv) {
		p_info("%s is a script: tracing the programs it executes", o->argv[0]);
		err = 0;
	}
	return err;
}

/* ---------------------------------------------------------------- exec */

/*
 * A traced process exec'd (the decoder's exec hook): probe the new image
 * with the same patterns (the process is stopped at its first instruction),
 * then let it run.
 */
void capture_attach_later(struct capture *c, const struct probe_set *ps, uint32_t pid,
			  const char *how, bool say)
{
	size_t i;

	for (i = 0; i < ps->nmods; i++) {
		const struct probe_module *m = &ps->mods[i];
		int err = c->gov ? governor__attach_module(c->gov, m) :
			  tracer__attach_module(c->tr, c->s, m);

		/* --args: a string argument not paged in is read from its file */
		if (!err && (c->o.args || c->o.deps))
			ustrings__add_file(c->strings, m->path);

		if (err)
			p_warn("pid %u %s %s: cannot attach %zu probes: %s", pid, how,
			       binfile__name(m->path), m->n, strerror(-err));
		else if (say)
			p_info("pid %u %s %s: %zu function%s traced", pid, how,
			       binfile__name(m->path), m->n, m->n == 1 ? "" : "s");
		else
			p_dbg("pid %u %s %s: %zu functions traced", pid, how, binfile__name(m->path),
			      m->n);
	}
}

/* Is `name`, a path as process pid sees it, a "#!" script? */
static bool pid_script(uint32_t pid, const char *name)
{
	char file[PATH_MAX + 64];

	if (name[0] == '/')
		snprintf(file, sizeof(file), "/proc/%u/root%s", pid, name);
	else
		snprintf(file, sizeof(file), "/proc/%u/cwd/%s", pid, name);
	return file_has_magic(file, "#!", 2);
}

/*
 * Is pid an interpreter running a script: the file exec'd is a "#!" script
 * (the kernel ran its interpreter), or the first argument that is not an
 * option is one (`env bash SCRIPT`)?  Followed through, not traced, like the
 * command itself when it is a script (a pyenv shim: bash, env and bash on
 * the libexec scripts, then CPython).
 */
static bool runs_a_script(uint32_t pid, const char *filename)
{
	char path[64], buf[4096];
	size_t off, n;
	FILE *f;

	if (filename && *filename && pid_script(pid, filename))
		return true;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* argv[0], then the first argument not an option */
	for (off = strlen(buf) + 1; off < n && buf[off] == '-'; off += strlen(buf + off) + 1)
		;
	if (off >= n || !buf[off])
		return false;
	return pid_script(pid, buf + off);
}

/*
 * An executable probed (or found not to be) needs nothing more at its later
 * execs: the probes are per file.  Its new processes then run from their
 * first instruction without being held (a hold lasts until the decoder
 * reaches the exec's record, behind every call recorded before it: make
 * -j2's assemblers spent about a third of their lives held so).  Not for a
 * CPython interpreter or a script's: those stop at their checks above.
 */
static void mark_known(struct capture *c, const struct stat *st)
{
	int err = tracer__exec_known(c->tr, st->st_dev, st->st_ino);

	if (err)
		p_dbg("cannot note an executable as probed: %s", strerror(-err));
}

void capture_follow_exec(void *ctx, uint32_t pid, const char *filename)
{
	struct capture *c = ctx;
	struct select_opts so = c->sopts;
	struct probe_set ps = { 0 };
	struct capture_hold hold;
	char link[64];
	struct stat st;
	char *exe = NULL;
	int py = 0;

	capture_hold_begin(c, &hold, pid, 0, true);
	c->nexec_held++;
	snprintf(link, sizeof(link), "/proc/%u/exe", pid);
	if (stat(link, &st) || launch__pid_exe(pid, &exe))
		goto resume;
	/*
	 * A CPython interpreter: its Python functions, unless native ones were
	 * asked for (as for the command itself, also when exec'd by a script or
	 * a pyenv shim).  One whose Python calls cannot be traced is refused as
	 * the command would be (the same line, exit 1), but it runs on.
	 */
	if (c->py_wanted) {
		bool others = so.nincludes || c->o.sample_hz || c->o.offcpu;

		py = pycap__check(c->py, exe, 0, others);
		if (py < 0)
			c->py_refused = true;
		if (py > 0) {
			struct shared_maps maps;

			tracer__shared_maps(c->tr, &maps);
			if (pycap__attach(c->py, &maps))
				p_warn("pid %u exec'd %s: its Python calls are not traced", pid,
				       filename);
			else
				governor__set_python(c->gov, c->py);
		}
		if (py != 0 && !so.nincludes)
			goto resume;
	}
	/* the command was a script: an interpreter running another script is followed through */
	if (c->sopts.no_exe && !c->o.npids && !so.nincludes && runs_a_script(pid, filename)) {
		p_dbg("pid %u exec'd %s on a script: following what it executes", pid, filename);
		goto resume;
	}
	if (capture_image_known(c, &st)) {
		if (!py)
			mark_known(c, &st);
		goto resume;
	}
	so.exe = exe;
	so.pid = pid;
	so.lenient = true;
	so.main_only = true;
	so.no_exe = false;
	if (select__resolve(&so, c->s, &ps))
		goto resume;
	capture_usdt_attach_bpfprof(c, exe, pid);
	capture_attach_later(c, &ps, pid, "exec'd", false);
	probe_set__free(&ps);
	if (!py)
		mark_known(c, &st);
resume:
	free(exe);
	capture_hold_end(&hold, "its new image");
}

void capture_on_hold(void *ctx, const struct hold *h)
{
	struct capture *c = ctx;

	switch (h->kind) {
	case HOLD_EXEC:
		if (c->exec_hooked)
			capture_follow_exec(c, h->pid, h->filename);
		break;
	case HOLD_DLOPEN:
		if (c->dl_hooked)
			capture_dl_follow(c, h->pid, h->stopped);
		break;
	default:
		break;
	}
}
