// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The Python side of one recording (cpython.h): the py: patterns, the
 * interpreter images met, the python.bpf.c loader (probes/python.h) loaded
 * when the first one is, and the sampled CPython processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include "bpf/events.h"
#include "bpf/python.h"
#include "base/log.h"
#include "base/util.h"
#include "symbols/binfile.h"
#include "symbols/procmaps.h"
#include "symbols/select.h"
#include "probes/sample.h"
#include "cpython.h"

struct py_capture {
	struct py_proc_entry {
		uint32_t pid;
		struct bp_py_cfg off;
	} *procs;		/* sampled CPython processes */
	size_t nprocs;
	char **inc, **exc;
	size_t ninc, nexc;
	bool trace_all;
	struct py_tracer *tr;
	struct py_image *imgs;	/* checked; attached up to nattached */
	size_t nimgs, nattached;
	uint32_t *told;		/* processes already warned about (a version without offsets) */
	size_t ntold;
};

/* Has pid been warned about?  Notes it if not: a process is looked at again at later samples. */
static bool told_before(struct py_capture *pc, uint32_t pid)
{
	size_t i;

	for (i = 0; i < pc->ntold; i++)
		if (pc->told[i] == pid)
			return true;
	pc->told = xrealloc(pc->told, (pc->ntold + 1) * sizeof(*pc->told));
	pc->told[pc->ntold++] = pid;
	return false;
}

struct py_capture *pycap__new(char **inc, size_t *ninc, char **exc, size_t *nexc, bool trace_all)
{
	struct py_capture *pc = xcalloc(1, sizeof(*pc));

	python__take_patterns(inc, ninc, &pc->inc, &pc->ninc);
	python__take_patterns(exc, nexc, &pc->exc, &pc->nexc);
	pc->trace_all = trace_all;
	return pc;
}

bool pycap__patterns(const struct py_capture *pc)
{
	return pc && (pc->ninc || pc->nexc);
}

void pycap__patterns_get(const struct py_capture *pc, char ***inc, size_t *ninc, char ***exc,
			 size_t *nexc)
{
	*inc = pc->inc;
	*ninc = pc->ninc;
	*exc = pc->exc;
	*nexc = pc->nexc;
}

int pycap__check(struct py_capture *pc, const char *exe, pid_t pid, bool others)
{
	struct py_image img;
	const char *why;
	size_t i;
	int r = python__find(exe, pid, &img);

	if (r <= 0)
		return r;
	why = python__unsupported(&img);
	if (why) {
		char ver[16] = "";

		if (img.major)
			snprintf(ver, sizeof(ver), " %u.%u", img.major, img.minor);
		if (others) {
			p_warn("%s is CPython%s: its Python calls are not traced (%s); "
			       "the native functions selected and samples are", binfile__name(img.path),
			       ver, why);
		} else {
			p_err("cannot trace the Python calls of %s (CPython%s): %s; "
			      "--sample profiles it, -F selects native functions",
			      binfile__name(img.path), ver, why);
		}
		python__image_free(&img);
		return others ? 0 : -EOPNOTSUPP;
	}
	for (i = 0; i < pc->nimgs; i++)
		if (!strcmp(pc->imgs[i].path, img.path))
			break;
	if (i < pc->nimgs) {
		python__image_free(&img);
		return 1;
	}
	p_dbg("%s: CPython %u.%u, Python calls traced", binfile__name(img.path), img.major,
	      img.minor);
	pc->imgs = xrealloc(pc->imgs, (pc->nimgs + 1) * sizeof(*pc->imgs));
	pc->imgs[pc->nimgs++] = img;
	return 1;
}

int pycap__attach(struct py_capture *pc, const struct shared_maps *maps)
{
	int err;

	if (pc->nattached == pc->nimgs)
		return 0;
	if (!pc->tr) {
		err = python__new(pc->trace_all, maps, &pc->tr);
		if (err)
			return err;
	}
	for (; pc->nattached < pc->nimgs; pc->nattached++) {
		err = cpython__attach(pc->tr, &pc->imgs[pc->nattached]);
		if (err)
			return err;
	}
	return 0;
}

size_t pycap__nimages(const struct py_capture *pc)
{
	return pc ? pc->nattached : 0;
}

uint64_t pycap__lost(struct py_capture *pc, uint64_t *per_cpu, size_t ncpu)
{
	return pc && pc->tr ? python__lost(pc->tr, per_cpu, ncpu) : 0;
}

int pycap__drop_code(struct py_capture *pc, uint32_t pid, uint64_t code)
{
	return pc ? python__drop_code(pc->tr, pid, code) : -ENOENT;
}

uint64_t pycap__filtered(struct py_capture *pc)
{
	return pc ? python__filtered(pc->tr) : 0;
}

bool pycap__traced(const struct py_capture *pc)
{
	return pc && pc->tr;
}

uint64_t pycap__misses(struct py_capture *pc)
{
	return pc && pc->tr ? python__misses(pc->tr) : 0;
}

void pycap__detach(struct py_capture *pc, struct closer *cl)
{
	if (pc && pc->tr)
		python__detach(pc->tr, cl);
}

void pycap__pause(struct py_capture *pc)
{
	if (pc && pc->tr)
		python__pause(pc->tr);
}

void pycap__free(struct py_capture *pc)
{
	size_t i;

	if (!pc)
		return;
	python__free(pc->tr);
	for (i = 0; i < pc->nimgs; i++)
		python__image_free(&pc->imgs[i]);
	free(pc->imgs);
	free(pc->procs);
	free(pc->told);
	free(pc->inc);
	free(pc->exc);
	free(pc);
}

/* Where path is mapped in pid: the start of its mapping at file offset 0, 0 if none. */
struct map_start_ctx {
	struct stat st;
	uint64_t start;
};

static int map_start_one(void *ctx, const struct procmap *m)
{
	struct map_start_ctx *x = ctx;

	if (m->pgoff || m->inode != (uint64_t)x->st.st_ino ||
	    makedev(m->dev_major, m->dev_minor) != x->st.st_dev)
		return 0;
	x->start = m->start;
	return 1;
}

/* Where pid maps the start of file `path` (by device and inode: it may be a pinned path), or 0. */
static uint64_t map_start(uint32_t pid, const char *path)
{
	struct map_start_ctx x = { .start = 0 };

	if (stat(path, &x.st))
		return 0;
	procmaps__each(pid, map_start_one, &x);
	return x.start;
}

int pycap__sample_proc(struct py_capture *pc, struct sampler *smp, uint32_t pid, const char *path)
{
	const struct py_version *v;
	struct bp_py_proc proc;
	struct py_image img;
	char link[64], *exe;
	uint64_t start;
	int ok = 0;

	snprintf(link, sizeof(link), "/proc/%u/exe", pid);
	exe = path ? xstrdup(path) : realpath(link, NULL);
	if (!exe || python__find(exe, pid, &img) <= 0) {
		free(exe);
		return 0;
	}
	v = python__find_version(img.major, img.minor);
	start = map_start(pid, img.path);
	if (!start && !img.pie)
		start = img.base_vaddr;	/* an executable loads where it was linked */
	if (!v) {
		if (!told_before(pc, pid))
			p_warn("pid %u runs CPython %u.%u (%s), which bpfprof has no offsets for: its "
			       "samples show the interpreter's C frames", pid, img.major, img.minor,
			       binfile__name(img.path));
	} else if (!start) {
		p_dbg("pid %u: %s is not mapped (yet)", pid, binfile__name(img.path));
	} else {
		memset(&proc, 0, sizeof(proc));
		proc.off = v->off;
		proc.runtime = img.runtime + (start - img.base_vaddr);
		int err = sampler__python_proc(smp, pid, &proc, sizeof(proc));

		if (err)
			p_warn("pid %u: cannot have its Python frames read: %s", pid, strerror(-err));
		if (!err) {
			pc->procs = xrealloc(pc->procs, (pc->nprocs + 1) * sizeof(*pc->procs));
			pc->procs[pc->nprocs].pid = pid;
			pc->procs[pc->nprocs++].off = v->off;
			p_dbg("pid %u: CPython %u.%u, Python frames in its samples", pid, img.major,
			      img.minor);
			ok = 1;
		}
	}
	python__image_free(&img);
	free(exe);
	return ok;
}

static int read_mem(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* A compact str object of pid as UTF-8 (Latin-1/UCS-2/UCS-4 converted). */
static int read_pystr(uint32_t pid, const struct bp_py_cfg *o, uint64_t obj, char *out, size_t cap)
{
	uint32_t state, kind, i;
	uint64_t length, data;
	uint8_t raw[512];
	size_t n, w = 0;

	if (!obj || read_mem(pid, obj + o->str_state, &state, 4) ||
	    read_mem(pid, obj + o->str_length, &length, 8))
		return -EFAULT;
	kind = (state >> 2) & 7;
	if (!(state & (1 << 5)) || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;
	data = obj + ((state & (1 << 6)) ? o->str_ascii_data : o->str_compact_data);
	n = length * kind > sizeof(raw) ? sizeof(raw) / kind * kind : length * kind;
	if (n && read_mem(pid, data, raw, n))
		return -EFAULT;
	for (i = 0; i + kind <= n && w + 5 < cap; i += kind) {
		uint32_t c = 0;

		memcpy(&c, raw + i, kind);
		if (c >= 0xd800 && c < 0xe000)
			c = 0xfffd;
		if (c < 0x80) {
			out[w++] = c ? c : '?';
		} else if (c < 0x800) {
			out[w++] = 0xc0 | c >> 6;
			out[w++] = 0x80 | (c & 0x3f);
		} else if (c < 0x10000) {
			out[w++] = 0xe0 | c >> 12;
			out[w++] = 0x80 | ((c >> 6) & 0x3f);
			out[w++] = 0x80 | (c & 0x3f);
		} else {
			out[w++] = 0xf0 | (c > 0x10ffff ? 0xfffd : c) >> 18;
			out[w++] = 0x80 | ((c >> 12) & 0x3f);
			out[w++] = 0x80 | ((c >> 6) & 0x3f);
			out[w++] = 0x80 | (c & 0x3f);
		}
	}
	out[w] = 0;
	return 0;
}

int pycap__name_code(struct py_capture *pc, uint32_t pid, uint64_t code, char *name,
		     size_t name_len, char *file, size_t file_len, uint32_t *line)
{
	const struct bp_py_cfg *o = NULL;
	uint64_t q = 0, f = 0;
	int32_t l = 0;
	size_t i;

	for (i = 0; i < pc->nprocs && !o; i++)
		if (pc->procs[i].pid == pid)
			o = &pc->procs[i].off;
	if (!o || read_mem(pid, code + o->code_qualname, &q, 8) ||
	    read_mem(pid, code + o->code_filename, &f, 8) ||
	    read_mem(pid, code + o->code_firstlineno, &l, 4) ||
	    read_pystr(pid, o, q, name, name_len) || read_pystr(pid, o, f, file, file_len))
		return -EFAULT;
	*line = l > 0 ? l : 0;
	return 0;
}
