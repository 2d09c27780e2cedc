// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The probes' share of the targets' CPU time, sampled (share.h). */
#include <errno.h>
#include <string.h>
#include "share.h"
#include "trace.h"
#include "base/log.h"
#include "base/util.h"
#include "symbols/kallsyms.h"
#include "skel/probeshare.skel.h"
#include "object.h"

struct share {
	struct probeshare_bpf *skel;
	struct probe_obj po;
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

int share__new(const struct shared_maps *maps, struct share **out)
{
	enum { N = sizeof(path_funcs) / sizeof(*path_funcs) };
	struct share *s;
	uint64_t lo[N], hi[N];
	size_t found;
	int err;

	found = kallsyms__ranges(path_funcs, N, lo, hi);
	if (!found) {
		p_dbg("the probes' share is not measured: no uprobe function in /proc/kallsyms");
		return -ENOENT;
	}
	s = xcalloc(1, sizeof(*s));
	s->skel = probeshare_bpf__open();
	err = probe_obj__opened(&s->po, "probe share", true, s->skel);
	if (!err) {
		_Static_assert(N <= sizeof(s->skel->rodata->share_lo) / sizeof(uint64_t),
			       "more ranges than the BPF side holds");
		memcpy((void *)s->skel->rodata->share_lo, lo, sizeof(lo));
		memcpy((void *)s->skel->rodata->share_hi, hi, sizeof(hi));
		err = probe_obj__load_skel(&s->po, s->skel, maps);
	}
	if (!err)
		err = probe_obj__attach_cpus(&s->po, s->skel->progs.share_sample, SHARE_HZ);
	if (err) {
		p_dbg("the probes' share is not measured: %s", strerror(-err));
		share__free(s);
		return err;
	}
	*out = s;
	return 0;
}

uint64_t share__read(const struct share *s, uint64_t *probe)
{
	if (!s) {
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
	probe_obj__free(&s->po);
	probeshare_bpf__destroy(s->skel);
	free(s);
}
