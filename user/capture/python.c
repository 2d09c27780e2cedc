// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython binaries and the python.bpf.c loader (see python.h, bpf/python.h).
 *
 * CPython 3.11's function__entry USDT probe fires only under a Python trace
 * function (its call sits in the interpreter's tracing path), so a call
 * starts where every frame starts: the handler of the RESUME opcode.  The
 * handlers have no symbols; their addresses are in the computed-goto table
 * of _PyEval_EvalFrameDefault (`opcode_targets`, 256 code pointers into
 * that function), which this file finds by its shape in the binary's data.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include "sample.h"
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "skel/python.skel.h"
#include "bpf/events.h"
#include "bpf/python.h"
#include "base/log.h"
#include "base/util.h"
#include "symbols/binfile.h"
#include "symbols/procmaps.h"
#include "symbols/select.h"
#include "python.h"
#include "usdt.h"
#include "base/closer.h"

struct py_tracer {
	struct python_bpf *skel;
	struct bpf_link **links;
	size_t nlinks;
	char **paths;		/* files attached, by config index */
	size_t npaths;
};

int python__new(bool trace_all, const struct shared_maps *maps, struct py_tracer **out)
{
	struct py_tracer *p = xcalloc(1, sizeof(*p));
	int err;

	p->skel = python_bpf__open();
	if (!p->skel) {
		err = -errno;
		p_err("cannot open the Python BPF object: %s", strerror(-err));
		goto cleanup;
	}
	p->skel->rodata->trace_all = trace_all;
	err = bpf_map__reuse_fd(p->skel->maps.rb, maps->rb);
	if (!err)
		err = bpf_map__reuse_fd(p->skel->maps.tgids, maps->tgids);
	if (!err)
		err = bpf_map__reuse_fd(p->skel->maps.batches, maps->batches);
	if (!err)
		err = bpf_map__reuse_fd(p->skel->maps.recording, maps->recording);
	if (err) {
		p_err("cannot share the ring buffer with the Python probes: %s", strerror(-err));
		goto cleanup;
	}
	err = python_bpf__load(p->skel);
	if (err) {
		p_err("cannot load the Python BPF program: %s", strerror(-err));
		goto cleanup;
	}
	*out = p;
	return 0;
cleanup:
	python__free(p);
	return err;
}

int python__attach(struct py_tracer *p, const struct py_image *img)
{
	unsigned long offs[BP_PY_MAX_SITES], refs[BP_PY_MAX_SITES];
	const struct py_version *v = python__find_version(img->major, img->minor);
	__u64 cookies[BP_PY_MAX_SITES];
	struct bp_py_cfg cfg;
	struct bpf_link *l;
	__u32 idx = p->npaths;
	size_t i;
	int err;

	for (i = 0; i < p->npaths; i++)
		if (!strcmp(p->paths[i], img->path))
			return 0;
	if (python__unsupported(img) || !v)
		return -EOPNOTSUPP;
	if (idx >= BP_PY_MAX_CFGS)
		return -E2BIG;
	cfg = v->off;
	memset(cfg.addr, 0, sizeof(cfg.addr));
	memset(cfg.mode, 0, sizeof(cfg.mode));
	cfg.runtime = img->runtime;
	for (i = 0; i < img->nsites; i++) {
		cfg.addr[i] = img->sites[i].addr;
		cfg.mode[i] = img->sites[i].mode;
		offs[i] = img->sites[i].off;
		refs[i] = img->sites[i].sema_off;
		cookies[i] = img->sites[i].kind | i << 4 | (__u64)idx << 8;
		p_dbg("%s: Python probe %zu (%s) at 0x%llx%s%s", binfile__name(img->path), i,
		      img->sites[i].kind == BP_PY_SITE_RESUME ? "resume" :
		      img->sites[i].kind == BP_PY_SITE_ENTRY ? "entry" : "return",
		      (unsigned long long)img->sites[i].addr,
		      img->sites[i].emulated ? "" : ", single-stepped",
		      img->sites[i].sema_off ? ", semaphore raised" : "");
	}
	err = bpf_map__update_elem(p->skel->maps.py_cfgs, &idx, sizeof(idx), &cfg, sizeof(cfg), 0);
	if (err) {
		p_err("cannot configure the Python probes: %s", strerror(-err));
		return err;
	}
	{
		LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = offs, .ref_ctr_offsets = refs,
			    .cookies = cookies, .cnt = img->nsites);

		l = bpf_program__attach_uprobe_multi(p->skel->progs.py_probe, -1, img->path, NULL, &o);
	}
	if (!l) {
		err = -errno;
		p_err("cannot attach the Python probes to %s: %s", binfile__name(img->path),
		      strerror(-err));
		return err;
	}
	if (img->nslow)
		p_info("%u of the %zu Python probe sites are single-stepped by the kernel: "
		       "about 15 us per Python call", img->nslow, img->nsites);
	p->links = xrealloc(p->links, (p->nlinks + 1) * sizeof(*p->links));
	p->links[p->nlinks++] = l;
	p->paths = xrealloc(p->paths, (p->npaths + 1) * sizeof(*p->paths));
	p->paths[p->npaths++] = xstrdup(img->path);
	return 0;
}

int python__drop_code(struct py_tracer *p, uint32_t pid, uint64_t code)
{
	struct bp_py_drop_key k = { .tgid = pid, .code = code };
	__u8 one = 1;

	if (!p)
		return -ENOENT;
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.py_dropped), &k, &one, BPF_NOEXIST))
		return errno == EEXIST ? 0 : -errno;
	__atomic_fetch_add(&p->skel->bss->py_ndropped, 1, __ATOMIC_SEQ_CST);
	return 0;
}

uint64_t python__filtered(struct py_tracer *p)
{
	return p ? __atomic_load_n(&p->skel->bss->py_filtered, __ATOMIC_RELAXED) : 0;
}

uint64_t python__misses(struct py_tracer *p)
{
	return p ? __atomic_load_n(&p->skel->bss->py_misses, __ATOMIC_RELAXED) : 0;
}

uint64_t python__lost(struct py_tracer *p, uint64_t *per_cpu, size_t ncpu)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < BP_MAX_CPUS; i++) {
		uint64_t v = __atomic_load_n(&p->skel->bss->lost[i], __ATOMIC_RELAXED);

		if (per_cpu && i < ncpu)
			per_cpu[i] += v;
		sum += v;
	}
	return sum;
}

void python__detach(struct py_tracer *p, struct closer *cl)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nlinks; i++) {
		/* the closer's close is the last (a grace period to wait for); else ours */
		if (cl && closer__give(cl, bpf_link__fd(p->links[i])))
			p_dbg("no closer for the Python probes: removing them here");
		bpf_link__destroy(p->links[i]);
	}
	p->nlinks = 0;	/* the paths stay: an image detached is not attached again */
}

void python__pause(struct py_tracer *p)
{
	__atomic_store_n(&p->skel->bss->paused, 1, __ATOMIC_SEQ_CST);
}

void python__free(struct py_tracer *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	free(p->links);
	for (i = 0; i < p->npaths; i++)
		free(p->paths[i]);
	free(p->paths);
	python_bpf__destroy(p->skel);
	free(p);
}

size_t python__link_fds(const struct py_tracer *p, int **fds, size_t n)
{
	size_t i;

	if (!p || !p->nlinks)
		return n;
	*fds = xrealloc(*fds, (n + p->nlinks) * sizeof(**fds));
	for (i = 0; i < p->nlinks; i++)
		if (p->links[i] && bpf_link__fd(p->links[i]) >= 0)
			(*fds)[n++] = bpf_link__fd(p->links[i]);
	return n;
}

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
		err = python__attach(pc->tr, &pc->imgs[pc->nattached]);
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
