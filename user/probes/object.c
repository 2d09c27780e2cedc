// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The part every BPF object's loader shares (object.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf/events.h"
#include "base/closer.h"
#include "base/log.h"
#include "base/util.h"
#include "object.h"

#define say(po, ...)                        \
	do {                                \
		if ((po)->quiet)            \
			p_dbg(__VA_ARGS__); \
		else                        \
			p_err(__VA_ARGS__); \
	} while (0)

int probe_obj__opened(struct probe_obj *po, const char *name, bool quiet, const void *skel)
{
	int err = -errno;

	po->name = name;
	po->quiet = quiet;
	if (skel)
		return 0;
	say(po, "cannot open the %s BPF object: %s", name, strerror(-err));
	return err;
}

/* The maps the tracer made (bpf/common.bpf.h), found by name in every object. */
static int share(struct probe_obj *po, struct bpf_object_skeleton *s, const struct shared_maps *m)
{
	const struct {
		const char *name;
		int fd;
	} shared[] = { { "rb", m->rb }, { "tgids", m->tgids }, { "batches", m->batches },
		       { "recording", m->recording } };
	size_t i;
	int err = 0;

	for (i = 0; i < sizeof(shared) / sizeof(*shared) && !err; i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(*s->obj, shared[i].name);

		err = map ? bpf_map__reuse_fd(map, shared[i].fd) : -ENOENT;
	}
	if (err)
		say(po, "cannot share the ring buffer with the %s BPF object: %s", po->name,
		    strerror(-err));
	return err;
}

int probe_obj__load(struct probe_obj *po, struct bpf_object_skeleton *s,
		    const struct shared_maps *maps)
{
	int err = maps ? share(po, s, maps) : 0;

	if (err)
		return err;
	err = bpf_object__load_skeleton(s);
	if (err)
		say(po, "cannot load the %s BPF programs: %s%s", po->name, strerror(-err),
		    err == -EPERM ? " (run as root, or with CAP_BPF and CAP_PERFMON)" : "");
	return err;
}

int probe_obj__add_link(struct probe_obj *po, struct bpf_link *l)
{
	if (!l)
		return -errno;
	po->links = xrealloc(po->links, (po->nlinks + 1) * sizeof(*po->links));
	po->links[po->nlinks++] = l;
	return 0;
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

int probe_obj__attach_cpus(struct probe_obj *po, struct bpf_program *prog, unsigned hz)
{
	int ncpu = libbpf_num_possible_cpus(), cpu, err;

	if (ncpu <= 0)
		ncpu = 1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		int fd = perf_open(cpu, hz);

		if (fd < 0) {
			if (errno == ENODEV || errno == ENOENT)
				continue;	/* a possible but offline CPU */
			err = -errno;
			say(po, "cannot open a cpu-clock perf event on cpu %d: %s", cpu, strerror(-err));
			return err;
		}
		po->pfds = xrealloc(po->pfds, (po->npfds + 1) * sizeof(*po->pfds));
		po->pfds[po->npfds++] = fd;
		err = probe_obj__add_link(po, bpf_program__attach_perf_event(prog, fd));
		if (err) {
			say(po, "cannot attach the %s BPF program on cpu %d: %s", po->name, cpu,
			    strerror(-err));
			return err;
		}
	}
	return 0;
}

uint64_t probe_obj__lost(const struct probe_obj *po, uint64_t *per_cpu, size_t ncpu)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; po->lost && i < BP_MAX_CPUS; i++) {
		uint64_t v = __atomic_load_n(&po->lost[i], __ATOMIC_RELAXED);

		if (per_cpu && i < ncpu)
			per_cpu[i] += v;
		sum += v;
	}
	return sum;
}

void probe_obj__pause(struct probe_obj *po)
{
	if (po->paused)
		__atomic_store_n(po->paused, 1, __ATOMIC_SEQ_CST);
}

void probe_obj__detach(struct probe_obj *po, struct closer *cl)
{
	size_t i;

	for (i = 0; i < po->nlinks; i++) {
		/* the closer's close is the last (a grace period to wait for); else ours */
		bool given = cl && !closer__give(cl, bpf_link__fd(po->links[i]));

		if (cl && !given)
			p_dbg("no closer for the %s probes: removing them here", po->name);
		bpf_link__destroy(po->links[i]);
		if (given)
			closer__given(cl);
	}
	po->nlinks = 0;
}

size_t probe_obj__link_fds(const struct probe_obj *po, int **fds, size_t n)
{
	size_t i;

	if (!po->nlinks)
		return n;
	*fds = xrealloc(*fds, (n + po->nlinks) * sizeof(**fds));
	for (i = 0; i < po->nlinks; i++)
		if (po->links[i] && bpf_link__fd(po->links[i]) >= 0)
			(*fds)[n++] = bpf_link__fd(po->links[i]);
	return n;
}

void probe_obj__free(struct probe_obj *po)
{
	size_t i;

	for (i = 0; i < po->nlinks; i++)
		bpf_link__destroy(po->links[i]);
	for (i = 0; i < po->npfds; i++)
		close(po->pfds[i]);
	free(po->links);
	free(po->pfds);
	memset(po, 0, sizeof(*po));
}
