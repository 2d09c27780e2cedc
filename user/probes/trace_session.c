// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Uprobe session links: one link runs a program at a function's entry and
 * at its return (Linux 6.13+), where the pair of uprobe_multi links needs
 * two, and the entry decides whether the return is probed at all (in a
 * process that is not traced, it is not: no return address taken over).
 * Half the uprobe registrations at each (re-)link of a group.
 *
 * libbpf 1.4 (Debian bookworm-backports) knows neither the section nor the
 * attach type: the programs are loaded as uprobe.multi ones with the
 * session attach type set before load, and the link is made here with a
 * raw BPF_LINK_CREATE, then handed out as a struct bpf_link like the others
 * (tracer_session_link()).  BPFPROF_NO_SESSION=1 keeps the pair.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>
#include "skel/trace.skel.h"
#include "base/log.h"
#include "internal.h"

/* enum bpf_attach_type's BPF_TRACE_UPROBE_SESSION (the UAPI headers here predate it) */
#define BP_TRACE_UPROBE_SESSION 57

static bool refused;	/* a load with the session programs failed: the pair from now on */

bool tracer_session_wanted(void)
{
	const char *off = getenv("BPFPROF_NO_SESSION");

	if (off && *off && strcmp(off, "0")) {
		p_dbg("call probes: entry and return uprobe_multi links (BPFPROF_NO_SESSION)");
		return false;
	}
	/*
	 * Not asked of the kernel's BTF (14 ms of CPU to parse here, at each
	 * start): a kernel without them refuses the load (the attach type or
	 * the kfunc unknown), and the load is done again with the pair.
	 */
	return !refused;
}

void tracer_session_say(bool on)
{
	static bool said;

	if (on && !said)
		p_dbg("call probes: one uprobe session link per group of functions");
	said = true;
}

void tracer_session_refused(int err)
{
	p_dbg("call probes: entry and return uprobe_multi links (the session programs did not "
	      "load: %s; a kernel before 6.13?)", strerror(-err));
	refused = true;
}

void tracer_session_prepare(struct tracer *t, bool on)
{
	struct bpf_program *s = t->skel->progs.call_session, *sa = t->skel->progs.call_session_args;

	t->session = on;
	bpf_program__set_autoload(s, on && !t->args);
	bpf_program__set_autoload(sa, on && t->args);
	/*
	 * The pair's programs stay: modules traced at entries only (no return)
	 * use the entry one, and the governor's groups, which it re-links, are
	 * always an entry and a return link (tracer__attach_owned).
	 */
	bpf_program__set_autoload(t->skel->progs.call_exit, !t->args);
	bpf_program__set_autoload(t->skel->progs.call_exit_ret, t->args);
	if (on) {
		bpf_program__set_expected_attach_type(s, BP_TRACE_UPROBE_SESSION);
		bpf_program__set_expected_attach_type(sa, BP_TRACE_UPROBE_SESSION);
	}
}

struct bpf_program *tracer_session_prog(struct tracer *t)
{
	if (!t->session)
		return NULL;
	return t->args ? t->skel->progs.call_session_args : t->skel->progs.call_session;
}

/*
 * A session link of prog at offsets of path (every process).  libbpf has no
 * way to wrap a link descriptor it did not make: a link of the loaded
 * iterator program (nothing is hooked by it) is made, and its descriptor
 * replaced by the session link's, so that bpf_link__fd() and
 * bpf_link__destroy() (a close for both kinds) act on the session link.
 */
int tracer_session_link(struct tracer *t, struct bpf_program *prog, const char *path,
			const unsigned long *offsets, const uint64_t *cookies, size_t n,
			struct bpf_link **out)
{
	union bpf_attr attr;
	struct bpf_link *link;
	int fd, err;

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = bpf_program__fd(prog);
	attr.link_create.attach_type = BP_TRACE_UPROBE_SESSION;
	attr.link_create.uprobe_multi.path = (__u64)(unsigned long)path;
	attr.link_create.uprobe_multi.offsets = (__u64)(unsigned long)offsets;
	attr.link_create.uprobe_multi.cookies = (__u64)(unsigned long)cookies;
	attr.link_create.uprobe_multi.cnt = (__u32)n;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		return -errno;
	link = bpf_program__attach_iter(t->skel->progs.unwind_slots, NULL);
	if (!link) {
		err = -errno;
		close(fd);
		return err;
	}
	if (dup2(fd, bpf_link__fd(link)) < 0) {
		err = -errno;
		close(fd);
		bpf_link__destroy(link);
		return err;
	}
	close(fd);
	*out = link;
	return 0;
}
