// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The python.bpf.c loader (see python.h, bpf/python.h): one skeleton for
 * every interpreter, its probes attached once per file at the sites that
 * cpython/image.c found.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "skel/python.skel.h"
#include "bpf/events.h"
#include "bpf/python.h"
#include "base/closer.h"
#include "base/log.h"
#include "base/util.h"
#include "symbols/binfile.h"
#include "object.h"
#include "python.h"

struct py_tracer {
	struct python_bpf *skel;
	struct probe_obj po;
	char **paths;		/* files attached, by config index */
	size_t npaths;
};

int python__new(bool trace_all, const struct shared_maps *maps, struct py_tracer **out)
{
	struct py_tracer *p = xcalloc(1, sizeof(*p));
	int err;

	p->skel = python_bpf__open();
	err = probe_obj__opened(&p->po, "Python", false, p->skel);
	if (err)
		goto cleanup;
	p->skel->rodata->trace_all = trace_all;
	err = probe_obj__load_skel(&p->po, p->skel, maps);
	if (err)
		goto cleanup;
	*out = p;
	return 0;
cleanup:
	python__free(p);
	return err;
}

int python__attach(struct py_tracer *p, const struct py_image *img, const struct bp_py_cfg *off)
{
	unsigned long offs[BP_PY_MAX_SITES], refs[BP_PY_MAX_SITES];
	__u64 cookies[BP_PY_MAX_SITES];
	struct bp_py_cfg cfg;
	struct bpf_link *l;
	__u32 idx = p->npaths;
	size_t i;
	int err;

	for (i = 0; i < p->npaths; i++)
		if (!strcmp(p->paths[i], img->path))
			return 0;
	if (idx >= BP_PY_MAX_CFGS)
		return -E2BIG;
	cfg = *off;
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
	probe_obj__add_link(&p->po, l);
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
	return probe_obj__lost(&p->po, per_cpu, ncpu);
}

void python__detach(struct py_tracer *p, struct closer *cl)
{
	if (p)
		probe_obj__detach(&p->po, cl);	/* the paths stay: an image detached is not attached again */
}

void python__pause(struct py_tracer *p)
{
	probe_obj__pause(&p->po);
}

void python__free(struct py_tracer *p)
{
	size_t i;

	if (!p)
		return;
	probe_obj__free(&p->po);
	for (i = 0; i < p->npaths; i++)
		free(p->paths[i]);
	free(p->paths);
	python_bpf__destroy(p->skel);
	free(p);
}

size_t python__link_fds(const struct py_tracer *p, int **fds, size_t n)
{
	return p ? probe_obj__link_fds(&p->po, fds, n) : n;
}
