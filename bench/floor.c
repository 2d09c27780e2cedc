// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * floor: the cheapest tracer that can be built on uprobe_multi, the
 * reference bpfprof's per-call cost is measured against (bench/run.sh).
 *
 *   bench/floor [-m empty|rb|filter] [-t] BINARY FUNC[+N] -- CMD [ARGS...]
 *
 * Attaches one uprobe_multi entry link and one return link (for every
 * process) to the functions of BINARY whose name matches the glob FUNC, at
 * the symbol's file offset plus N (FUNC+4 probes past an endbr64, where
 * bpfprof probes by default), runs CMD, waits for it, detaches, and exits
 * with CMD's status.  Prints nothing else unless -t.
 *
 *   -m empty    (default) programs that return 0: the kernel's own cost
 *   -m rb       + a 40-byte record per event, no wakeup; drained every 2 ms
 *   -m filter   + the traced-process filter of trace.bpf.c (CMD's pid)
 *   -m min      a 40-byte reserve + submit, only the type written
 *   -m batch    full records in a per-CPU batch of 64, one output per batch
 *   -t          one line on stderr: attach and detach time, records, losses
 *
 * CMD is started held as bpfprof starts it (user/target/launch.c): it
 * execs once the probes are in.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "floor.skel.h"
#include "bpf/events.h"
#include "symbols/elfsym.h"
#include "base/log.h"
#include "target/launch.h"
#include "probes/ringbuf.h"

static unsigned long long records, checksum;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int count_record(void *ctx, const void *data, size_t size)
{
	/* read the records like a decoder would: a batch holds many */
	for (size_t i = 0; i + sizeof(struct bp_rec_hdr) <= size; i += sizeof(struct bp_rec_call))
		checksum += ((const struct bp_rec_hdr *)((const char *)data + i))->ts;
	records += size / sizeof(struct bp_rec_call);
	return 0;
}

/* CMD's process is traced: what bpfprof's loader does for the filter of trace.bpf.c. */
static int trace_pid(struct floor_bpf *skel, pid_t pid)
{
	struct bp_tgid_bits *bits = calloc(1, sizeof(*bits));
	__u32 key = pid, zero = 0;
	__u8 state = BP_TGID_RECORDING;
	int err;

	if (!bits)
		return -ENOMEM;
	bits->w[(key >> 6) & (BP_TGID_WORDS - 1)] |= 1ull << (key & 63);
	err = bpf_map__update_elem(skel->maps.recording, &zero, sizeof(zero), bits, sizeof(*bits),
				   BPF_ANY);
	if (!err)
		err = bpf_map__update_elem(skel->maps.tgids, &key, sizeof(key), &state,
					   sizeof(state), BPF_ANY);
	free(bits);
	return err;
}

/* The ring buffer reservations that failed, all CPUs. */
static unsigned long long lost(const struct floor_bpf *skel)
{
	unsigned long long n = 0;
	size_t i;

	for (i = 0; i < BP_MAX_CPUS; i++)
		n += skel->bss->lost[i];
	return n;
}

static void usage(void)
{
	fprintf(stderr, "usage: floor [-m empty|rb|filter|min|batch] [-t] BINARY FUNC[+N] -- CMD "
		"[ARGS...]\n");
}

/* File offsets of the functions of `path` matching `glob`, each plus `add`. */
static int resolve(const char *path, const char *glob, unsigned long add, unsigned long **offs,
		   size_t *n)
{
	struct elf_funcs syms = { 0 };
	size_t i;
	int err;

	err = elfsym__read(path, &syms);
	if (err) {
		fprintf(stderr, "floor: cannot read symbols of %s: %s\n", path, strerror(-err));
		return err;
	}
	*offs = calloc(syms.n ? syms.n : 1, sizeof(**offs));
	*n = 0;
	for (i = 0; i < syms.n; i++)
		if (elfsym__match(glob, syms.v[i].raw_name))
			(*offs)[(*n)++] = syms.v[i].offset + add;
	elfsym__free(&syms);
	if (!*n) {
		fprintf(stderr, "floor: no function of %s matches '%s'\n", path, glob);
		return -ENOENT;
	}
	return 0;
}

static struct bpf_link *attach(struct bpf_program *p, const char *path, unsigned long *offs,
			       size_t n, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = offs, .cnt = n, .retprobe = ret);
	struct bpf_link *l = bpf_program__attach_uprobe_multi(p, -1, path, NULL, &o);

	if (!l)
		fprintf(stderr, "floor: cannot attach %zu %s probes: %s\n", n,
			ret ? "return" : "entry", strerror(errno));
	return l;
}

int main(int argc, char **argv)
{
	const char *mode = "empty", *path, *plus;
	struct bpf_program *pe, *px;
	struct bpf_link *le = NULL, *lx = NULL;
	struct bp_ringbuf *rb = NULL;
	struct floor_bpf *skel = NULL;
	struct launch l = { .release_fd = -1, .err_fd = -1 };
	unsigned long *offs = NULL, add = 0;
	uint64_t t0, t_attach, t_detach, last;
	int c, err = 0, status = 0;
	bool timing = false;
	char *glob = NULL, *exe = NULL, name[32];
	pid_t pid = -1;
	size_t n = 0;

	while ((c = getopt(argc, argv, "+m:th")) != -1) {
		switch (c) {
		case 'm':
			mode = optarg;
			break;
		case 't':
			timing = true;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (argc - optind < 4 || strcmp(argv[optind + 2], "--")) {
		usage();
		return 2;
	}
	path = argv[optind];
	glob = strdup(argv[optind + 1]);
	plus = strrchr(glob, '+');
	if (plus) {
		add = strtoul(plus + 1, NULL, 0);
		glob[plus - glob] = 0;
	}
	libbpf_set_print(libbpf_quiet);

	err = resolve(path, glob, add, &offs, &n);
	if (err)
		goto cleanup;
	skel = floor_bpf__open();
	if (!skel) {
		err = -errno;
		fprintf(stderr, "floor: cannot open the BPF object: %s\n", strerror(-err));
		goto cleanup;
	}
	/* The programs of -m MODE are MODE_entry and MODE_exit. */
	snprintf(name, sizeof(name), "%s_entry", mode);
	pe = bpf_object__find_program_by_name(skel->obj, name);
	snprintf(name, sizeof(name), "%s_exit", mode);
	px = bpf_object__find_program_by_name(skel->obj, name);
	if (!pe || !px) {
		usage();
		err = -EINVAL;
		goto cleanup;
	}
	/* Only the chosen pair is loaded. */
	{
		struct bpf_program *p;

		bpf_object__for_each_program(p, skel->obj)
			bpf_program__set_autoload(p, false);
	}
	bpf_program__set_autoload(pe, true);
	bpf_program__set_autoload(px, true);
	/* bpfprof's default --buffer-size */
	bpf_map__set_max_entries(skel->maps.rb, 64u << 20);
	err = floor_bpf__load(skel);
	if (err) {
		fprintf(stderr, "floor: cannot load the BPF programs: %s\n", strerror(-err));
		goto cleanup;
	}
	err = ringbuf__new(bpf_map__fd(skel->maps.rb), &rb);
	if (err)
		goto cleanup;

	err = launch__resolve(argv[optind + 3], &exe);
	if (err) {
		fprintf(stderr, "floor: cannot run %s: %s\n", argv[optind + 3], strerror(-err));
		goto cleanup;
	}
	/* as root, like the benchmark: no privileges to drop */
	err = launch__start(&l, exe, argv + optind + 3, true);
	if (err) {
		fprintf(stderr, "floor: cannot start %s: %s\n", argv[optind + 3], strerror(-err));
		goto cleanup;
	}
	exe = NULL;	/* l's now */
	pid = l.pid;
	err = trace_pid(skel, pid);
	if (err)
		goto cleanup;

	/* As bpfprof: return probes first, then entries. */
	t0 = now_ns();
	lx = attach(px, path, offs, n, true);
	le = lx ? attach(pe, path, offs, n, false) : NULL;
	t_attach = now_ns() - t0;
	if (!le) {
		err = -EINVAL;
		goto cleanup;	/* the held child is killed */
	}
	err = launch__release(&l);
	if (err) {
		fprintf(stderr, "floor: cannot run %s: %s\n", argv[optind + 3], strerror(-err));
		goto cleanup;
	}

	/* bpfprof's drain policy (user/probes/trace.c): every 1/16 of the buffer or 50 ms */
	last = now_ns();
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (ringbuf__pending(rb) >= (64u << 20) / 16 || now_ns() - last >= 50000000) {
			while (ringbuf__consume(rb, count_record, NULL, 65536) == 65536)
				;
			last = now_ns();
		}
		if (w == pid)
			break;
		if (w < 0) {
			err = -errno;
			goto cleanup;
		}
		usleep(2000);
	}
	pid = -1;
	while (ringbuf__consume(rb, count_record, NULL, 65536) > 0)
		;

	/* As bpfprof: entry probes first. */
	t0 = now_ns();
	bpf_link__destroy(le);
	bpf_link__destroy(lx);
	le = lx = NULL;
	t_detach = now_ns() - t0;
	if (timing)
		fprintf(stderr, "floor: functions=%zu attach_ns=%llu detach_ns=%llu records=%llu "
			"lost=%llu\n", n, (unsigned long long)t_attach,
			(unsigned long long)t_detach, records, lost(skel));
cleanup:
	launch__abort(&l);
	if (pid > 0 && l.pid > 0)
		waitpid(pid, NULL, 0);
	launch__free(&l);
	free(exe);
	bpf_link__destroy(le);
	bpf_link__destroy(lx);
	ringbuf__free(rb);
	floor_bpf__destroy(skel);
	free(offs);
	free(glob);
	if (err)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
