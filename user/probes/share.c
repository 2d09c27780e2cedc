// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The probes' share of the targets' CPU time, sampled (share.h). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include "share.h"
#include "trace.h"
#include "base/log.h"
#include "base/util.h"
#include "symbols/kallsyms.h"
#include "skel/probeshare.skel.h"
#include "object.h"

struct share {
	struct probeshare_bpf *skel;	/* set once attached (load_thread) */
	struct probe_obj po;
	struct shared_maps maps;
	pthread_t thread;
	bool ready;			/* skel is loaded and attached (release/acquire) */
};

/*
 * The kernel side of a probe hit: the int3 and debug exceptions from user
 * mode (entry stubs and handlers: the trap, the return to user mode, the
 * single-step's end), uprobe_notify_resume (the handlers, the BPF
 * programs, the emulation or the single-step's set-up), the return
 * trampoline's handling, and the system calls the kernel's trampolines
 * make.  The ones this kernel does not have are left out.
 */
static const char *const path_funcs[] = {
	"asm_exc_int3", "exc_int3", "asm_exc_debug", "exc_debug_user", "exc_debug",
	"uprobe_notify_resume", "uprobe_notify_resume.cold", "uprobe_handle_trampoline",
	"uprobe_handle_trampoline.cold", "__x64_sys_uretprobe", "__x64_sys_uprobe",
	"arch_uprobe_exception_notify",
};

static void close_maps(struct shared_maps *m)
{
	int *fds[] = { &m->rb, &m->tgids, &m->batches, &m->recording };

	for (size_t i = 0; i < sizeof(fds) / sizeof(*fds); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
}

/*
 * The ranges from /proc/kallsyms (~60 ms of the kernel's time here: a page
 * a read, 1,300 of them), the load and the attach: on a thread of its
 * own, off the path to the target's start; counts read before are none.
 */
static void *load_thread(void *arg)
{
	enum { N = sizeof(path_funcs) / sizeof(*path_funcs) };
	struct share *s = arg;
	struct probeshare_bpf *skel;
	uint64_t lo[N], hi[N];
	int err;

	if (!kallsyms__ranges(path_funcs, N, lo, hi)) {
		p_dbg("the probes' share is not measured: no uprobe function in /proc/kallsyms");
		close_maps(&s->maps);
		return NULL;
	}
	skel = probeshare_bpf__open();
	err = probe_obj__opened(&s->po, "probe share", true, skel);
	if (!err) {
		_Static_assert(N <= sizeof(skel->rodata->share_lo) / sizeof(uint64_t),
			       "more ranges than the BPF side holds");
		memcpy((void *)skel->rodata->share_lo, lo, sizeof(lo));
		memcpy((void *)skel->rodata->share_hi, hi, sizeof(hi));
		err = probe_obj__load_skel(&s->po, skel, &s->maps);
	}
	close_maps(&s->maps);	/* the object holds its own once loaded */
	if (!err)
		err = probe_obj__attach_cpus(&s->po, skel->progs.share_sample, SHARE_HZ);
	if (err) {
		p_dbg("the probes' share is not measured: %s", strerror(-err));
		probe_obj__free(&s->po);
		probeshare_bpf__destroy(skel);
		return NULL;
	}
	s->skel = skel;
	__atomic_store_n(&s->ready, true, __ATOMIC_RELEASE);
	return NULL;
}

int share__new(const struct shared_maps *maps, struct share **out)
{
	struct share *s = xcalloc(1, sizeof(*s));
	int err;

	/* its own copies: the tracer may close its maps before the thread reaches them */
	s->maps.rb = fcntl(maps->rb, F_DUPFD_CLOEXEC, 3);
	s->maps.tgids = fcntl(maps->tgids, F_DUPFD_CLOEXEC, 3);
	s->maps.batches = fcntl(maps->batches, F_DUPFD_CLOEXEC, 3);
	s->maps.recording = fcntl(maps->recording, F_DUPFD_CLOEXEC, 3);
	err = pthread_create(&s->thread, NULL, load_thread, s);
	if (err) {
		close_maps(&s->maps);
		free(s);
		return -err;
	}
	*out = s;
	return 0;
}

uint64_t share__read(const struct share *s, uint64_t *probe)
{
	if (!s || !__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE)) {
		*probe = 0;
		return 0;
	}
	*probe = __atomic_load_n(&s->skel->bss->share_probe, __ATOMIC_RELAXED);
	return __atomic_load_n(&s->skel->bss->share_all, __ATOMIC_RELAXED);
}

void share__free(struct share *s)
{
	if (!s)
		return;
	pthread_join(s->thread, NULL);
	if (s->skel) {
		probe_obj__free(&s->po);
		probeshare_bpf__destroy(s->skel);
	}
	free(s);
}
