// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "skel/sample.skel.h"
#include "bpf/events.h"
#include "base/log.h"
#include "object.h"
#include "sample.h"
#include "base/util.h"

struct sampler {
	struct sample_bpf *skel;
	struct probe_obj po;
	struct sampler_opts o;
	bool vma_iter;		/* mappings from exec and the linker's hook, not from sys_exit */
	bool maps;		/* mapping records at all (not sampler_opts.no_maps) */
};

/* Has the kernel the VMA iterator kfuncs (6.7)?  Its BTF tells, as the verifier would. */
static bool has_vma_iter(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool yes;

	if (!btf)
		return false;
	yes = btf__find_by_name_kind(btf, "bpf_iter_task_vma_new", BTF_KIND_FUNC) >= 0;
	btf__free(btf);
	return yes;
}

int sampler__parse_stack(const char *arg, enum stack_mode *mode)
{
	if (!strcmp(arg, "auto"))
		*mode = STACK_AUTO;
	else if (!strcmp(arg, "fp"))
		*mode = STACK_FP;
	else if (!strcmp(arg, "dwarf"))
		*mode = STACK_DWARF;
	else {
		p_err("invalid --stack '%s' (fp, dwarf or auto)", arg);
		return -EINVAL;
	}
	return 0;
}

int sampler__parse_stack_size(const char *arg, unsigned *size)
{
	uint64_t v;

	if (parse_size(arg, &v) || v < 512 || v > BP_MAX_USTACK) {
		p_err("invalid --stack-size '%s' (512 to %uk, e.g. 32k)", arg, BP_MAX_USTACK / 1024);
		return -EINVAL;
	}
	*size = v;
	return 0;
}

int sampler__new(const struct sampler_opts *o, const struct shared_maps *maps, struct sampler **out)
{
	struct sampler *s = xcalloc(1, sizeof(*s));
	int err;

	s->o = *o;
	s->skel = sample_bpf__open();
	err = probe_obj__opened(&s->po, "sampling", false, s->skel);
	if (err)
		goto cleanup;
	s->skel->rodata->trace_all = o->trace_all;
	s->skel->rodata->kernel_stacks = o->kernel_stacks;
	s->skel->rodata->period_ns = o->hz ? 1000000000ull / o->hz : 0;
	s->skel->rodata->fp_user = o->stack != STACK_DWARF;
	s->skel->rodata->ustack_size = o->stack == STACK_FP ? 0 : o->stack_size ? o->stack_size :
				       BP_DEF_USTACK;
	/* tests only: ignore every Nth switch-in, as the kernel sometimes does (docs/sampling.md) */
	if (getenv("BPFPROF_TEST_SKIP_SWITCHIN"))
		s->skel->rodata->test_skip_switchin = strtoul(getenv("BPFPROF_TEST_SKIP_SWITCHIN"), NULL, 10);
	/* one record buffer per CPU, indexed by CPU number */
	err = libbpf_num_possible_cpus();
	if (err > 0)
		err = bpf_map__set_max_entries(s->skel->maps.scratch, err);
	if (err) {
		p_err("cannot size the sampling buffers: %s", strerror(-err));
		goto cleanup;
	}
	bpf_program__set_autoload(s->skel->progs.cpu_sample, o->hz > 0);
	bpf_program__set_autoload(s->skel->progs.offcpu_switch, o->offcpu);
	s->maps = !o->no_maps;
	s->vma_iter = s->maps && has_vma_iter();	/* a parse of the kernel's BTF: not for nothing */
	bpf_program__set_autoload(s->skel->progs.mmap_exec, s->maps && s->vma_iter);
	bpf_program__set_autoload(s->skel->progs.mmap_dl, s->maps && s->vma_iter);
	bpf_program__set_autoload(s->skel->progs.mmap_exit, s->maps && !s->vma_iter);
	err = probe_obj__load_skel(&s->po, s->skel, maps);
	if (err)
		goto cleanup;
	*out = s;
	return 0;
cleanup:
	sampler__free(s);
	return err;
}

int sampler__attach(struct sampler *s)
{
	int err = 0;

	if (s->o.hz)
		err = probe_obj__attach_cpus(&s->po, s->skel->progs.cpu_sample, s->o.hz);
	if (!err && s->o.offcpu) {
		err = probe_obj__add_link(&s->po, bpf_program__attach(s->skel->progs.offcpu_switch));
		if (err)
			p_err("cannot attach to sched_switch: %s", strerror(-err));
	}
	/*
	 * Not fatal: the stacks of processes alive when decoded still find
	 * their mappings in /proc.
	 */
	if (!err && s->maps && probe_obj__add_link(&s->po, bpf_program__attach(s->vma_iter ?
					s->skel->progs.mmap_exec : s->skel->progs.mmap_exit)))
		p_warn("cannot follow mappings (%s): stacks of short-lived processes may show "
		       "[unmapped] frames", s->vma_iter ? "sched_process_exec" : "sys_exit");
	return err;
}

int sampler__attach_loader(struct sampler *s, const char *path, unsigned long offset)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = &offset, .cnt = 1);

	if (!s->vma_iter || !s->maps)
		return 0;	/* sys_exit sees the linker's mmap calls */
	return probe_obj__add_link(&s->po, bpf_program__attach_uprobe_multi(s->skel->progs.mmap_dl,
									   -1, path, NULL, &o));
}

uint64_t sampler__lost(struct sampler *s, uint64_t *per_cpu, size_t ncpu)
{
	return probe_obj__lost(&s->po, per_cpu, ncpu);
}

void sampler__pause(struct sampler *s)
{
	probe_obj__pause(&s->po);
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	if (s->skel && s->skel->bss && s->skel->bss->offcpu_late)
		p_dbg("%llu off-cpu intervals ended at the next switch-out: their switch-in was not seen",
		      (unsigned long long)s->skel->bss->offcpu_late);
	probe_obj__free(&s->po);
	sample_bpf__destroy(s->skel);
	free(s);
}

int sampler__python_proc(struct sampler *s, uint32_t tgid, const void *proc, size_t size)
{
	int err = bpf_map__update_elem(s->skel->maps.py_procs, &tgid, sizeof(tgid), proc, size, 0);

	return err < 0 ? err : 0;
}
