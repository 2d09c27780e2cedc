// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The end of a capture's probes, away from bpfprof.
 *
 * Removing a uprobe link waits for the uprobes' grace periods (SRCU and RCU
 * tasks trace): tens of milliseconds on an idle machine, seconds under load,
 * and as long as any thread on the machine keeps a return probe pending
 * while it calls on (each return probe renews the lease of those pending).
 * No user should wait for that: once the output is written and the exit
 * status known, bpfprof forks bpfprof-release, which holds a copy of every
 * BPF descriptor (links, maps, programs, perf events) and of the keeper's
 * socket, and removes the links all at once (their grace periods overlap;
 * the targets run on, see tracer__detach), the keeper or guard ended last.  bpfprof's own descriptors
 * are then only closed: the links stay until bpfprof-release is done, and
 * while they stay, they only run BPF programs whose records nobody reads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include "base/away.h"
#include "base/log.h"
#include "base/util.h"
#include "internal.h"
#include "cost/governor.h"
#include "cpython/cpython.h"
#include "probes/sample.h"
#include "probes/trace.h"
#include "probes/usdt.h"

/* Keeps 0-2 (on /dev/null), anonymous inodes (BPF objects, perf events, epoll) and keep[]. */
static void keep_only(const int *keep, size_t nkeep)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int dfd = d ? dirfd(d) : -1;

	while (d && (de = readdir(d))) {
		char path[64], target[64];
		int fd = atoi(de->d_name);
		bool k = fd <= 2 || fd == dfd || de->d_name[0] == '.';
		ssize_t n;
		size_t i;

		for (i = 0; i < nkeep; i++)
			k |= keep[i] == fd;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			k |= !strncmp(target, "anon_inode:", 11);
		}
		if (!k)
			close(fd);	/* the output, pipes, the HTTP socket: never held after bpfprof */
	}
	if (d)
		closedir(d);
	stdio_to_null();
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* BPFPROF_RELEASE_LOG=FILE: bpfprof-release appends what it removed and how long it took. */
static void log_release(size_t nlinks, uint64_t ms)
{
	const char *path = getenv("BPFPROF_RELEASE_LOG");
	FILE *f;

	if (!path || !*path)
		return;
	f = fopen(path, "ae");
	if (!f)
		return;
	fprintf(f, "bpfprof-release: %zu links removed in %llu ms\n", nlinks,
		(unsigned long long)ms);
	fclose(f);
}

/*
 * bpfprof-release: removes everything and ends.  It starts once bpfprof has
 * closed its own copies (`go` reads EOF): a link's grace period is paid by
 * whoever drops its last reference, and that must be this process, never
 * bpfprof (under load, bpfprof sat a minute in synchronize_srcu after its
 * output was written when this process closed its copies first).
 */
static void __attribute__((noreturn)) release_main(struct capture *c, size_t nlinks, int go)
{
	uint64_t t0;

	setsid();	/* out of the terminal's and the caller's process group */
	prctl(PR_SET_NAME, "bpfprof-release");
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	away__wait_go(go);
	t0 = mono_ms();
	sampler__free(c->smp);
	usdt__free(c->usd);
	pycap__free(c->py);
	tracer__in_background(c->tr);
	tracer__free(c->tr);
	log_release(nlinks, mono_ms() - t0);
	_exit(0);	/* never bpfprof's atexit handlers, nor its stdio buffers */
}

int capture_hand_off(struct capture *c)
{
	size_t made, uprobe, other, nkeep;
	int keep[5], go[2], err;
	pid_t pid;

	tracer__release_targets(c->tr);	/* threads bpfprof holds with ptrace are bpfprof's to let go */
	tracer__count_links(c->tr, &made, &uprobe, &other);
	nkeep = tracer__keep_fds(c->tr, keep, 4);
	err = away__go_pipe(go);
	if (err)
		return err;
	keep[nkeep++] = go[0];
	/*
	 * No fflush(NULL) first: every output is complete and closed by now, and
	 * the child never flushes what it inherits (it ends with _exit).
	 */
	pid = away__fork(go);
	if (pid < 0)
		return pid;
	if (pid == 0) {
		keep_only(keep, nkeep);
		release_main(c, uprobe + other, go[0]);
	}
	p_dbg("links: %zu made over the run; %zu uprobe links (one grace period each, "
	      "overlapped) and %zu others left to bpfprof-release (pid %d)", made, uprobe, other,
	      (int)pid);
	tracer__disown(c->tr);
	return go[1];
}
