// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "skel/sample.skel.h"
#include "bpf/events.h"
#include "base/log.h"
#include "losses.h"
#include "sample.h"
#include "base/util.h"

struct sampler {
	struct sample_bpf *skel;
	struct bpf_link **links;
	int *pfds;
	size_t nlinks, npfds;
	struct sampler_opts o;
};

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
	if (!s->skel) {
		err = -errno;
		p_err("cannot open the sampling BPF object: %s", strerror(-err));
		goto cleanup;
	}
	s->skel->rodata->trace_all = o->trace_all;
	s->skel->rodata->kernel_stacks = o->kernel_stacks;
	s->skel->rodata->period_ns = o->hz ? 1000000000ull / o->hz : 0;
	s->skel->rodata->fp_user = o->stack != STACK_DWARF;
	s->skel->rodata->ustack_size = o->stack == STACK_FP ? 0 : o->stack_size ? o->stack_size :
				       BP_DEF_USTACK;
	/* one record buffer per CPU, indexed by CPU number */
	err = libbpf_num_possible_cpus();
	if (err > 0)
		err = bpf_map__set_max_entries(s->skel->maps.scratch, err);
	if (err) {
		p_err("cannot size the sampling buffers: %s", strerror(-err));
		goto cleanup;
	}
	err = bpf_map__reuse_fd(s->skel->maps.rb, maps->rb);
	if (!err)
		err = bpf_map__reuse_fd(s->skel->maps.tgids, maps->tgids);
	if (!err)
		err = bpf_map__reuse_fd(s->skel->maps.batches, maps->batches);
	if (!err)
		err = bpf_map__reuse_fd(s->skel->maps.recording, maps->recording);
	if (err) {
		p_err("cannot share the ring buffer with the sampler: %s", strerror(-err));
		goto cleanup;
	}
	bpf_program__set_autoload(s->skel->progs.cpu_sample, o->hz > 0);
	bpf_program__set_autoload(s->skel->progs.offcpu_switch, o->offcpu);
	err = sample_bpf__load(s->skel);
	if (err) {
		p_err("cannot load the sampling BPF programs: %s", strerror(-err));
		goto cleanup;
	}
	*out = s;
	return 0;
cleanup:
	sampler__free(s);
	return err;
}

static int perf_open(int cpu, unsigned hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		/* cpu-clock counts ns: a fixed period samples evenly (freq mode drifts in VMs) */
		.sample_period = 1000000000ull / hz,
	};

	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

int sampler__attach(struct sampler *s)
{
	int ncpu = libbpf_num_possible_cpus(), cpu, err = 0;
	struct bpf_link *l;

	if (ncpu <= 0)
		ncpu = 1;
	s->links = xcalloc(ncpu + 1, sizeof(*s->links));
	s->pfds = xcalloc(ncpu, sizeof(*s->pfds));
	for (cpu = 0; s->o.hz && cpu < ncpu; cpu++) {
		int fd = perf_open(cpu, s->o.hz);

		if (fd < 0) {
			if (errno == ENODEV || errno == ENOENT)
				continue;	/* a possible but offline CPU */
			err = -errno;
			p_err("cannot open a cpu-clock perf event on cpu %d: %s", cpu, strerror(-err));
			return err;
		}
		s->pfds[s->npfds++] = fd;
		l = bpf_program__attach_perf_event(s->skel->progs.cpu_sample, fd);
		if (!l) {
			err = -errno;
			p_err("cannot attach the sampler on cpu %d: %s", cpu, strerror(-err));
			return err;
		}
		s->links[s->nlinks++] = l;
	}
	if (s->o.offcpu) {
		l = bpf_program__attach(s->skel->progs.offcpu_switch);
		if (!l) {
			err = -errno;
			p_err("cannot attach to sched_switch: %s", strerror(-err));
			return err;
		}
		s->links[s->nlinks++] = l;
	}
	return 0;
}

uint64_t sampler__lost(struct sampler *s, uint64_t *per_cpu, size_t ncpu)
{
	return losses__add((const uint64_t *)s->skel->bss->lost, per_cpu, ncpu);
}

void sampler__pause(struct sampler *s)
{
	__atomic_store_n(&s->skel->bss->paused, 1, __ATOMIC_SEQ_CST);
}

void sampler__free(struct sampler *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);
	for (i = 0; i < s->npfds; i++)
		close(s->pfds[i]);
	free(s->links);
	free(s->pfds);
	sample_bpf__destroy(s->skel);
	free(s);
}

int sampler__python_proc(struct sampler *s, uint32_t tgid, const void *proc, size_t size)
{
	int err = bpf_map__update_elem(s->skel->maps.py_procs, &tgid, sizeof(tgid), proc, size, 0);

	return err < 0 ? err : 0;
}
