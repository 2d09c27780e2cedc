// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * retsite: return events from uprobes on `ret` instructions, against
 * uretprobes (bench/retsite.sh, docs/probe-cost.md).
 *
 *   bench/retsite -m MODE [-t] BINARY FUNC -- CMD [ARGS...]
 *       attaches (for every process, as bpfprof) the probes of MODE to the
 *       functions of BINARY matching the glob FUNC, runs CMD held until they
 *       are in (as bpfprof starts a target), waits for it, detaches, exits
 *       with its status.  MODE:
 *         entry      an empty entry uprobe only
 *         uret       empty entry + empty uretprobe (bpfprof's pair, no work)
 *         ret        empty entry + empty uprobes on every `ret` of FUNC
 *         uret_rec   entry + uretprobe, a 40-byte record each
 *         ret_rec    entry + ret sites, the records and a shadow stack
 *         mixed      with -X XGLOB: FUNC as uret_rec, XGLOB as ret_rec (the
 *                    long-lived functions on ret sites, the others on
 *                    uretprobes)
 *       -t: one line on stderr: functions, ret sites, records, the BPF
 *       side's counts (entries, exits, multi-frame pops, empty pops)
 *
 *   bench/retsite -R BINARY FUNC
 *       attaches an empty entry uprobe_multi link to FUNC of BINARY, then
 *       times its release (closing the link's only descriptor, which waits
 *       for the uprobes' grace periods): "release_ms=X end_ns=T" (T: when
 *       it ended, CLOCK_MONOTONIC)
 *
 *   bench/retsite -c BINARY
 *       counts `ret` instructions and tail jumps over BINARY's functions
 *       (Capstone, the functions of bpfprof's symbol reader): what a
 *       ret-site return mode would have to probe
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <capstone/capstone.h>
#include "retsite.skel.h"
#include "symbols/elfsym.h"
#include "target/launch.h"
#include "probes/ringbuf.h"

static unsigned long long records;

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
	records++;
	return 0;
}

/* A growing array of offsets and their cookies. */
struct sites {
	unsigned long *off;
	__u64 *cookie;
	size_t n, cap;
};

static int sites_add(struct sites *s, unsigned long off, __u64 cookie)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		unsigned long *o = realloc(s->off, cap * sizeof(*o));
		__u64 *c = o ? realloc(s->cookie, cap * sizeof(*c)) : NULL;

		if (o)
			s->off = o;
		if (!c)
			return -ENOMEM;
		s->cookie = c;
		s->cap = cap;
	}
	s->off[s->n] = off;
	s->cookie[s->n++] = cookie;
	return 0;
}

/* What the decoding of one function found. */
struct fn_shape {
	unsigned rets;		/* `ret` instructions */
	unsigned tail_direct;	/* jmp rel to outside the function */
	unsigned ind_jmp;	/* jmp through a register or memory */
	bool last_ret, last_tail, last_ind, last_call;	/* what its last instruction is */
	bool decoded;		/* false: empty, too big or unreadable */
};

/* Decodes f's bytes from the open file fd; each ret's file offset goes to `rets` (may be NULL). */
static int decode_fn(csh cs, int fd, const struct elf_func *f, __u64 cookie, struct sites *rets,
		     struct fn_shape *sh)
{
	static uint8_t *buf;
	static size_t cap;
	const uint8_t *code;
	cs_insn *in = cs_malloc(cs);
	uint64_t addr;
	size_t len;
	int last = 0;

	memset(sh, 0, sizeof(*sh));
	if (!in)
		return -ENOMEM;
	if (!f->size || f->size > (16u << 20)) {
		cs_free(in, 1);
		return 0;
	}
	if (f->size > cap) {
		uint8_t *b = realloc(buf, f->size);

		if (!b) {
			cs_free(in, 1);
			return -ENOMEM;
		}
		buf = b;
		cap = f->size;
	}
	if (pread(fd, buf, f->size, f->offset) != (ssize_t)f->size) {
		cs_free(in, 1);
		return 0;
	}
	code = buf;
	len = f->size;
	addr = f->addr;
	sh->decoded = true;
	while (cs_disasm_iter(cs, &code, &len, &addr, in)) {
		cs_x86 *x = &in->detail->x86;

		last = 0;
		if (cs_insn_group(cs, in, X86_GRP_RET) && in->id != X86_INS_RETF &&
		    in->id != X86_INS_RETFQ) {
			sh->rets++;
			last = 1;
			if (rets && sites_add(rets, f->offset + (in->address - f->addr), cookie)) {
				cs_free(in, 1);
				return -ENOMEM;
			}
		} else if (in->id == X86_INS_JMP && x->op_count == 1) {
			if (x->operands[0].type == X86_OP_IMM) {
				uint64_t t = x->operands[0].imm;

				if (t < f->addr || t >= f->addr + f->size) {
					sh->tail_direct++;
					last = 2;
				}
			} else {
				sh->ind_jmp++;
				last = 3;
			}
		} else if (cs_insn_group(cs, in, X86_GRP_CALL)) {
			last = 4;
		}
	}
	sh->last_ret = last == 1;
	sh->last_tail = last == 2;
	sh->last_ind = last == 3;
	sh->last_call = last == 4;
	cs_free(in, 1);
	return 0;
}

static int cs_start(csh *cs)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, cs) != CS_ERR_OK)
		return -EINVAL;
	cs_option(*cs, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

/* Entry offsets (cookie = function index) and, with `rets`, the ret sites of FUNC. */
static int resolve(const char *path, const char *glob, struct sites *entries, struct sites *rets)
{
	struct elf_funcs syms = { 0 };
	struct fn_shape sh;
	int err, fd = -1;
	csh cs = 0;
	size_t i;

	err = elfsym__read(path, &syms);
	if (err) {
		fprintf(stderr, "retsite: cannot read symbols of %s: %s\n", path, strerror(-err));
		return err;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || cs_start(&cs)) {
		err = fd < 0 ? -errno : -EINVAL;
		goto out;
	}
	for (i = 0; i < syms.n && !err; i++) {
		if (!elfsym__match(glob, syms.v[i].raw_name))
			continue;
		err = sites_add(entries, syms.v[i].offset, entries->n);
		if (!err && rets)
			err = decode_fn(cs, fd, &syms.v[i], entries->n - 1, rets, &sh);
	}
	if (!err && !entries->n) {
		fprintf(stderr, "retsite: no function of %s matches '%s'\n", path, glob);
		err = -ENOENT;
	}
out:
	if (cs)
		cs_close(&cs);
	if (fd >= 0)
		close(fd);
	elfsym__free(&syms);
	return err;
}

/* -c: the shape of BINARY's functions, as a ret-site return mode sees them. */
static int count_shapes(const char *path)
{
	struct elf_funcs syms = { 0 };
	unsigned long long fns = 0, rets = 0, hist[5] = { 0 }, noret = 0, noret_tail = 0,
			   noret_ind = 0, noret_call = 0, last_tail = 0, any_tail = 0, any_ind = 0,
			   cold = 0, cold_rets = 0;
	struct fn_shape sh;
	int err, fd;
	csh cs = 0;
	size_t i;

	err = elfsym__read(path, &syms);
	if (err) {
		fprintf(stderr, "retsite: cannot read symbols of %s: %s\n", path, strerror(-err));
		return err;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || cs_start(&cs)) {
		elfsym__free(&syms);
		return -EINVAL;
	}
	for (i = 0; i < syms.n; i++) {
		if (decode_fn(cs, fd, &syms.v[i], 0, NULL, &sh) || !sh.decoded)
			continue;
		if (strstr(syms.v[i].raw_name, ".cold")) {
			/* a split-off part: its rets end the parent function */
			cold++;
			cold_rets += sh.rets;
			continue;
		}
		fns++;
		rets += sh.rets;
		hist[sh.rets < 4 ? sh.rets : 4]++;
		any_tail += sh.tail_direct > 0;
		any_ind += sh.ind_jmp > 0;
		last_tail += sh.last_tail;
		if (!sh.rets) {
			noret++;
			noret_tail += sh.last_tail;
			noret_ind += sh.last_ind;
			noret_call += sh.last_call;
		}
	}
	printf("%s: functions=%llu rets=%llu rets_per_function=%.2f\n", path, fns, rets,
	       fns ? (double)rets / fns : 0);
	printf("  rets per function: 0:%llu 1:%llu 2:%llu 3:%llu 4+:%llu\n", hist[0], hist[1],
	       hist[2], hist[3], hist[4]);
	printf("  no ret: %llu (last instruction: tail jmp %llu, indirect jmp %llu, call %llu, "
	       "other %llu)\n", noret, noret_tail, noret_ind, noret_call,
	       noret - noret_tail - noret_ind - noret_call);
	printf("  last instruction a direct tail jmp: %llu; any direct jmp out of the function: "
	       "%llu; any indirect jmp: %llu\n", last_tail, any_tail, any_ind);
	printf("  .cold parts: %llu with %llu rets\n", cold, cold_rets);
	cs_close(&cs);
	close(fd);
	elfsym__free(&syms);
	return 0;
}

static struct bpf_link *attach(struct bpf_program *p, const char *path, const struct sites *s,
			       bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = s->off, .cookies = s->cookie,
		    .cnt = s->n, .retprobe = ret);
	struct bpf_link *l = bpf_program__attach_uprobe_multi(p, -1, path, NULL, &o);

	if (!l)
		fprintf(stderr, "retsite: cannot attach %zu %s probes: %s\n", s->n,
			ret ? "return" : "entry", strerror(errno));
	return l;
}

/* -R: attach an entry link, time its release. */
static int time_release(struct retsite_bpf *skel, const char *path, const struct sites *e)
{
	struct bpf_link *l;
	uint64_t t0, t1;

	l = attach(skel->progs.empty_entry, path, e, false);
	if (!l)
		return -EINVAL;
	t0 = now_ns();
	bpf_link__destroy(l);
	t1 = now_ns();
	printf("release_ms=%.1f end_ns=%llu\n", (t1 - t0) / 1e6, (unsigned long long)t1);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: retsite -m entry|uret|ret|uret_rec|ret_rec|mixed [-X XGLOB] [-t] BINARY FUNC "
		"-- CMD "
		"[ARGS...]\n       retsite -R BINARY FUNC\n       retsite -c BINARY\n");
}

/* The program pair of a mode; *x NULL: entry only; *ret_sites: x goes on the rets. */
static int pick(struct retsite_bpf *skel, const char *mode, struct bpf_program **e,
		struct bpf_program **x, bool *ret_sites)
{
	*ret_sites = false;
	*x = NULL;
	*e = skel->progs.empty_entry;
	if (!strcmp(mode, "entry"))
		return 0;
	if (!strcmp(mode, "uret")) {
		*x = skel->progs.empty_uret;
	} else if (!strcmp(mode, "ret")) {
		*x = skel->progs.empty_ret;
		*ret_sites = true;
	} else if (!strcmp(mode, "uret_rec")) {
		*e = skel->progs.rec_entry;
		*x = skel->progs.rec_uret;
	} else if (!strcmp(mode, "ret_rec") || !strcmp(mode, "mixed")) {
		*e = skel->progs.shadow_entry;
		*x = skel->progs.shadow_ret;
		*ret_sites = true;
	} else {
		return -EINVAL;
	}
	return 0;
}

/* One link to make: a program on sites, as entry or return probes. */
struct link_spec {
	struct bpf_program *prog;
	const struct sites *sites;
	bool uret;
};

/* Runs CMD held, attaches specs[] in order, releases it, drains until it exits (*status). */
static int run_traced(struct retsite_bpf *skel, const char *path, const struct link_spec *specs,
		      size_t nspecs, char **cmd, int *status)
{
	struct launch l = { .release_fd = -1, .err_fd = -1 };
	struct bpf_link *links[4] = { 0 };
	struct bp_ringbuf *rb = NULL;
	char *exe = NULL;
	pid_t pid = -1;
	size_t i;
	int err;

	err = ringbuf__new(bpf_map__fd(skel->maps.rb), &rb);
	if (!err)
		err = launch__resolve(cmd[0], &exe);
	if (!err)
		err = launch__start(&l, exe, cmd, true);
	if (err) {
		fprintf(stderr, "retsite: cannot run %s: %s\n", cmd[0], strerror(-err));
		goto out;
	}
	exe = NULL;	/* l's now */
	pid = l.pid;
	for (i = 0; i < nspecs && i < 4; i++) {
		links[i] = attach(specs[i].prog, path, specs[i].sites, specs[i].uret);
		if (!links[i]) {
			err = -EINVAL;
			goto out;
		}
	}
	err = launch__release(&l);
	if (err)
		goto out;
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);

		while (ringbuf__consume(rb, count_record, NULL, 65536) == 65536)
			;
		if (w == pid)
			break;
		if (w < 0) {
			err = -errno;
			goto out;
		}
		usleep(2000);
	}
	pid = -1;
	while (ringbuf__consume(rb, count_record, NULL, 65536) > 0)
		;
out:
	launch__abort(&l);
	if (pid > 0 && l.pid > 0)
		waitpid(pid, NULL, 0);
	launch__free(&l);
	free(exe);
	/* entries first, as bpfprof */
	for (i = 4; i-- > 0;)
		bpf_link__destroy(links[i]);
	ringbuf__free(rb);
	return err;
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *path, *glob, *xglob = NULL;
	struct bpf_program *pe, *px, *p;
	struct sites e = { 0 }, r = { 0 }, xe = { 0 };
	struct link_spec specs[4];
	size_t nspecs = 0;
	bool mixed;
	struct retsite_bpf *skel = NULL;
	bool timing = false, release = false, ret_sites;
	int c, err = 0, status = 0;

	while ((c = getopt(argc, argv, "+m:tRc:X:h")) != -1) {
		switch (c) {
		case 'm':
			mode = optarg;
			break;
		case 't':
			timing = true;
			break;
		case 'X':
			xglob = optarg;
			break;
		case 'R':
			release = true;
			break;
		case 'c':
			return count_shapes(optarg) ? 1 : 0;
		default:
			usage();
			return 2;
		}
	}
	if (release ? argc - optind != 2 :
	    (!mode || argc - optind < 4 || strcmp(argv[optind + 2], "--"))) {
		usage();
		return 2;
	}
	path = argv[optind];
	glob = argv[optind + 1];
	mixed = mode && !strcmp(mode, "mixed");
	if (mixed != !!xglob) {
		usage();
		return 2;
	}
	libbpf_set_print(libbpf_quiet);

	skel = retsite_bpf__open();
	if (!skel) {
		fprintf(stderr, "retsite: cannot open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	if (release) {
		pe = skel->progs.empty_entry;
		px = NULL;
		ret_sites = false;
	} else if (pick(skel, mode, &pe, &px, &ret_sites)) {
		usage();
		err = -EINVAL;
		goto cleanup;
	}
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, p == pe || p == px ||
					  (mixed && (p == skel->progs.rec_entry ||
						     p == skel->progs.rec_uret)));
	bpf_map__set_max_entries(skel->maps.rb, 64u << 20);	/* bpfprof's default */
	err = retsite_bpf__load(skel);
	if (err) {
		fprintf(stderr, "retsite: cannot load the BPF programs: %s\n", strerror(-err));
		goto cleanup;
	}
	/* mixed: FUNC on uretprobes, XGLOB on ret sites; ret_sites for the rest */
	err = resolve(path, mixed ? xglob : glob, &e, ret_sites ? &r : NULL);
	if (!err && mixed)
		err = resolve(path, glob, &xe, NULL);
	if (err)
		goto cleanup;
	if (ret_sites && !r.n) {
		fprintf(stderr, "retsite: no ret instruction in '%s'\n", glob);
		err = -ENOENT;
		goto cleanup;
	}
	if (release) {
		err = time_release(skel, path, &e);
		goto cleanup;
	}
	/* as bpfprof: return probes first, then entries */
	if (mixed) {
		specs[nspecs++] = (struct link_spec){ skel->progs.rec_uret, &xe, true };
		specs[nspecs++] = (struct link_spec){ skel->progs.rec_entry, &xe, false };
	}
	if (px)
		specs[nspecs++] = (struct link_spec){ px, ret_sites ? &r : &e, !ret_sites };
	specs[nspecs++] = (struct link_spec){ pe, &e, false };
	err = run_traced(skel, path, specs, nspecs, argv + optind + 3, &status);
	if (!err && timing) {
		const __u64 *s = skel->bss->stats;

		fprintf(stderr, "retsite: functions=%zu ret_sites=%zu records=%llu entries=%llu "
			"exits=%llu multi_pops=%llu empty_pops=%llu deep=%llu\n", e.n, r.n, records,
			(unsigned long long)s[0], (unsigned long long)s[1],
			(unsigned long long)s[2], (unsigned long long)s[3],
			(unsigned long long)s[4]);
	}
cleanup:
	retsite_bpf__destroy(skel);
	free(e.off);
	free(e.cookie);
	free(r.off);
	free(r.cookie);
	free(xe.off);
	free(xe.cookie);
	if (err)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
