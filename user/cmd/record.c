// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * record and attach: select functions, load and attach the tracer, drain the
 * ring buffer through the decoder into the output, end cleanly on target
 * exit, --duration, or a signal.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cmds.h"
#include "decode/decode.h"
#include "exporters/exporter.h"
#include "capture/launch.h"
#include "bpf/events.h"
#include "base/log.h"
#include "symbols/select.h"
#include "model/session.h"
#include "report/report.h"
#include "capture/sample.h"
#include "symbols/symbolize.h"
#include "symbols/ustrings.h"
#include "capture/usdt.h"
#include "capture/trace.h"
#include "base/util.h"

struct record_opts {
	bool attach;		/* attach mode: --pid */
	const char *output;
	const char *format;
	char **includes, **excludes;
	size_t nincludes, nexcludes;
	pid_t *pids;
	size_t npids;
	uint64_t duration;	/* ns, 0: until the targets exit */
	uint64_t min_time;	/* ns: shorter calls are left out of the output */
	uint64_t buffer_size;
	bool no_follow;
	bool no_skip_endbr;
	unsigned sample_hz;	/* --sample[=HZ]; 0: off */
	bool offcpu;
	bool all;		/* -a: every process */
	bool no_wakeups;
	bool gated;
	char **usdts;		/* -U [LIB:]PROVIDER:NAME */
	size_t nusdts;
	bool deps;		/* data edges (implies argument capture) */
	bool no_kernel_stacks;
	enum stack_mode stack;	/* --stack */
	unsigned stack_size;	/* --stack-size, 0: default */
	bool as_root;
	bool args;
	char **argv;		/* record: the command */
};

struct record_ctx {
	struct bp_session s;
	struct decoder *dec;
	struct tracer *tr;
	const struct select_opts *sopts;
	struct usdt_tracer *usd;	/* loaded on first need (usdt_ensure) */
	struct usdt_opts uopts;
	struct ustrings *strings;	/* probe strings the BPF side could not read */
	struct stat *images;	/* executables already probed (dev, ino) */
	struct proc_count {
		uint32_t pid;
		uint64_t samples;
	} *top;			/* samples per process, for the summary */
	size_t ntop;
	size_t nimages;
	struct exporter *exp;
	struct report *rep;
	uint64_t min_time;
	uint64_t exported;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* Every decoded event: aggregates, then the output. */
static int sink(void *ctx, const struct bp_event *ev)
{
	struct record_ctx *rc = ctx;

	int err = report__add(rc->rep, &rc->s, ev);
	size_t i;

	if (err)
		return err;
	if (ev->kind == BP_EV_SAMPLE && !(ev->sample.flags & BP_SAMPLE_F_OFFCPU)) {
		for (i = 0; i < rc->ntop && rc->top[i].pid != ev->sample.pid; i++)
			;
		if (i == rc->ntop) {
			rc->top = xrealloc(rc->top, (rc->ntop + 1) * sizeof(*rc->top));
			rc->top[rc->ntop].pid = ev->sample.pid;
			rc->top[rc->ntop++].samples = 0;
		}
		rc->top[i].samples++;
	}
	if (ev->kind == BP_EV_CALL && ev->call.end - ev->call.begin < rc->min_time)
		return 0;
	if (!rc->exp)
		return 0;
	rc->exported++;
	return exporter__event(rc->exp, &rc->s, ev);
}

/*
 * The bpfprof.h probes of every traced binary (no flag needed), and the
 * -U probes: PROVIDER:NAME in the main executable or LIB:PROVIDER:NAME in
 * the shared libraries LIB names.
 */
/*
 * The USDT object is loaded only when a probe can be met (-U, --gated, a
 * bpfprof.h probe in a traced binary, now or in one exec'd later): ~11 ms of
 * a short recording otherwise.
 */
static int usdt_ensure(struct record_ctx *rc)
{
	struct shared_maps maps;

	if (rc->usd)
		return 0;
	tracer__shared_maps(rc->tr, &maps);
	return usdt__new(&rc->uopts, &maps, &rc->usd);
}

static void usdt_attach_bpfprof(struct record_ctx *rc, const char *path)
{
	if (usdt__has_bpfprof(path) && !usdt_ensure(rc)) {
		usdt__attach_bpfprof(rc->usd, path);
		ustrings__add_file(rc->strings, path);
	}
}

static int attach_usdts(const struct record_opts *o, struct record_ctx *rc, const char *exe,
			const struct probe_set *ps)
{
	size_t i, j;
	int err;

	if (exe)
		usdt_attach_bpfprof(rc, exe);
	for (i = 0; i < ps->nmods; i++)
		if (!exe || strcmp(ps->mods[i].path, exe))
			usdt_attach_bpfprof(rc, ps->mods[i].path);
	if (o->nusdts) {
		err = usdt_ensure(rc);
		if (err)
			return err;
	}
	for (i = 0; i < o->nusdts; i++) {
		char *copy = xstrdup(o->usdts[i]), *parts[3] = { NULL }, **paths = NULL, *p;
		size_t np = 0, npaths = 0, nok = 0;

		for (p = copy; np < 3 && p; np++) {
			parts[np] = p;
			p = strchr(p, ':');
			if (p)
				*p++ = 0;
		}
		if ((np != 2 && np != 3) || p || !*parts[np - 1] || !*parts[np - 2]) {
			p_err("invalid -U '%s': PROVIDER:NAME or LIB:PROVIDER:NAME", o->usdts[i]);
			free(copy);
			return -EINVAL;
		}
		if (np == 3) {
			err = select__libraries(parts[0], o->attach ? o->pids[0] : 0, &paths, &npaths);
			if (err) {
				p_err("no shared library matches '%s' (in -U '%s')", parts[0], o->usdts[i]);
				free(copy);
				return -ENOENT;
			}
		} else if (exe) {
			paths = xmalloc(sizeof(*paths));
			paths[npaths++] = xstrdup(exe);
		}
		rc->s.probes = xrealloc(rc->s.probes, (rc->s.nprobes + 1) * sizeof(*rc->s.probes));
		rc->s.probes[rc->s.nprobes] = xmalloc(strlen(parts[np - 2]) + strlen(parts[np - 1]) + 2);
		sprintf(rc->s.probes[rc->s.nprobes], "%s:%s", parts[np - 2], parts[np - 1]);
		for (j = 0; j < npaths; j++) {
			if (!usdt__attach(rc->usd, paths[j], parts[np - 2], parts[np - 1],
					  BP_USDT_OTHER | rc->s.nprobes << 8))
				nok++;
			free(paths[j]);
		}
		rc->s.nprobes++;
		free(paths);
		if (!nok) {
			p_err("no USDT probe %s:%s in %s", parts[np - 2], parts[np - 1],
			      np == 3 ? parts[0] : (exe ? exe : "the executable"));
			free(copy);
			return -ESRCH;
		}
		free(copy);
	}
	return 0;
}

/* Warns when most selected functions take the kernel's single-step path. */
static void warn_slow_probes(const struct bp_session *s)
{
	size_t i, slow = 0, skipped = 0;

	for (i = 0; i < s->nfuncs; i++) {
		const char *path = select__probe_path(&s->funcs[i]);

		slow += !strcmp(path, "single-step");
		skipped += !strcmp(path, "skip-endbr");
	}
	if (skipped)
		p_dbg("%zu functions probed after their endbr64 (emulated path)", skipped);
	if (s->nfuncs && slow * 2 > s->nfuncs)
		p_warn("%zu of %zu functions start with an instruction the kernel single-steps: "
		       "about %u ns per traced call instead of %u ns (see 'bpfprof list')",
		       slow, s->nfuncs, select__probe_cost_ns(&(struct bp_func){ .flags = 0 }),
		       select__probe_cost_ns(&(struct bp_func){ .flags = 1 }));
}

/* Do -F/-N patterns (or the default) select main-executable functions? */
static bool follows_exec(const struct record_opts *o)
{
	size_t i;

	if (!o->nincludes)
		return !(o->sample_hz || o->offcpu);	/* default: every function of the exe */
	for (i = 0; i < o->nincludes; i++) {
		const char *lib, *glob;
		char *copy = select__split(o->includes[i], &lib, &glob);
		bool plain = !lib;

		free(copy);
		if (plain)
			return true;
	}
	return false;
}

static void read_comm(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (!f)
		return;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/*
 * attach: the process and its threads existed before the recording, so no
 * fork or rename record will name them: take their names from /proc now.
 */
static void name_existing(struct bp_session *s, pid_t pid)
{
	char path[96], comm[32];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	read_comm(path, comm, sizeof(comm));
	if (comm[0])
		session__set_process_name(s, pid, comm);
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);
		struct bp_thread *t;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
		read_comm(path, comm, sizeof(comm));
		t = session__thread(s, tid, pid);
		if (comm[0] && !t->name[0])
			snprintf(t->name, sizeof(t->name), "%.15s", comm);
	}
	closedir(d);
}

static bool is_script(const char *path)
{
	return file_has_magic(path, "#!", 2);
}

static bool image_known(struct record_ctx *rc, const struct stat *st)
{
	size_t i;

	for (i = 0; i < rc->nimages; i++)
		if (rc->images[i].st_dev == st->st_dev && rc->images[i].st_ino == st->st_ino)
			return true;
	rc->images = xrealloc(rc->images, (rc->nimages + 1) * sizeof(*rc->images));
	rc->images[rc->nimages++] = *st;
	return false;
}

/*
 * A traced process exec'd: probe the new image with the same patterns (the
 * process is stopped at its first instruction), then let it run.
 */
static void follow_exec(struct record_ctx *rc, const struct bp_rec_exec *r)
{
	pid_t pid = r->h.pid_tgid >> 32;
	struct select_opts so = *rc->sopts;
	struct probe_set ps = { 0 };
	char link[64];
	struct stat st;
	size_t i;

	char *exe = NULL;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	if (stat(link, &st) || image_known(rc, &st) || launch__pid_exe(pid, &exe))
		goto resume;
	so.exe = exe;
	so.pid = pid;
	so.lenient = true;
	so.main_only = true;
	so.no_exe = false;
	if (select__resolve(&so, &rc->s, &ps))
		goto resume;
	usdt_attach_bpfprof(rc, exe);
	for (i = 0; i < ps.nmods; i++) {
		int err = tracer__attach_module(rc->tr, &rc->s, &ps.mods[i]);

		if (err)
			p_warn("pid %d exec'd %.*s: cannot attach %zu probes: %s", pid, BP_PATH_LEN,
			       r->filename, ps.mods[i].n, strerror(-err));
		else
			p_dbg("pid %d exec'd %s: %zu functions traced", pid, ps.mods[i].path,
			      ps.mods[i].n);
	}
	probe_set__free(&ps);
resume:
	free(exe);
	if (r->stopped)
		kill(pid, SIGCONT);
}

static int by_samples(const void *a, const void *b)
{
	const struct proc_count *x = a, *y = b;

	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : 0;
}

static void print_top_processes(struct record_ctx *rc)
{
	size_t i;
	uint64_t total = 0;

	for (i = 0; i < rc->ntop; i++)
		total += rc->top[i].samples;
	if (!total)
		return;
	qsort(rc->top, rc->ntop, sizeof(*rc->top), by_samples);
	fprintf(stderr, "  %8s  %6s  %8s  %s\n", "samples", "%", "pid", "process");
	for (i = 0; i < rc->ntop && i < 10; i++) {
		const struct bp_process *p = NULL;
		size_t j;

		for (j = 0; j < rc->s.nprocs; j++)
			if (rc->s.procs[j].pid == rc->top[i].pid)
				p = &rc->s.procs[j];
		fprintf(stderr, "  %8llu  %5.1f%%  %8u  %s\n", (unsigned long long)rc->top[i].samples,
			100.0 * rc->top[i].samples / total, rc->top[i].pid,
			p && p->name ? p->name : "?");
	}
}

static int decode_record(void *ctx, const void *rec, size_t size)
{
	struct record_ctx *rc = ctx;
	int err = decoder__feed(rc->dec, rec, size);

	if (!err && ((const struct bp_rec_hdr *)rec)->type == BP_REC_EXEC &&
	    ((const struct bp_rec_exec *)rec)->stopped)
		follow_exec(rc, rec);
	return err;
}

static void usage(FILE *f, bool attach)
{
	size_t i;

	if (attach)
		fprintf(f, "usage: bpfprof attach --pid PID[,PID...] [options]\n\n"
			   "Trace the function calls of running processes (all their threads, and\n"
			   "the processes they fork) until --duration, Ctrl-C, or their exit.\n\n");
	else
		fprintf(f, "usage: bpfprof record [options] -- COMMAND [ARGS...]\n\n"
			   "Run COMMAND and trace its function calls (all threads, and the processes\n"
			   "it forks) until it and its children exit.  Exits with COMMAND's status.\n\n");
	fprintf(f,
		"options:\n"
		"  -o, --output FILE      output file; format from its name (see below)\n"
		"      --format FMT       output format, overriding the file name\n"
		"  -F, --function GLOB    trace functions of the main executable matching GLOB\n"
		"  -F LIB:GLOB            ... of shared libraries whose file name matches LIB,\n"
		"                         e.g. -F 'libc.so*:malloc' (also when dlopen'd later)\n"
		"  -N, --exclude [LIB:]GLOB  do not trace these (wins over -F)\n"
		"                         default: every function of the main executable\n"
		"      --min-time DUR     leave calls shorter than DUR out of the output\n"
		"                         (they still count in the summary)\n"
		"      --buffer-size SIZE ring buffer size (default 16M; more = fewer losses)\n"
		"      --no-follow        do not trace processes forked by the targets\n"
		"      --no-skip-endbr    probe endbr64 itself (single-stepped, ~10x dearer)\n"
		"                         instead of the push/nop after it\n"
		"  -d, --duration DUR     stop after DUR (e.g. 500ms, 10s, 2m)\n"
		"      --sample[=HZ]      sample stacks on cpu-clock (default 999 Hz); with no\n"
		"                         -F, sampling only (no function probes)\n"
		"      --offcpu           record where threads block, and for how long\n"
		"      --no-kernel-stacks user stacks only\n"
		"      --stack=fp|dwarf|auto  user stacks by frame pointers, or by DWARF\n"
		"                         unwinding of a stack copy (default auto: DWARF,\n"
		"                         frame pointers where DWARF falls short)\n"
		"      --stack-size SIZE  user stack bytes copied per sample (default 16k,\n"
		"                         at most 64k)\n"
		"      --args             record the six integer argument registers and the\n"
		"                         return value of each call (shown in the output)\n"
		"      --deps             data edges: a call that returned a pointer -> the later\n"
		"                         calls that received it (implies --args)\n"
		"      --no-wakeups       no wakeup edges (on by default when tracing calls)\n"
		"  -U, --usdt [LIB:]PROVIDER:NAME  trace this USDT probe (its arguments are\n"
		"                         recorded); bpfprof.h probes are traced without -U\n"
		"      --gated            record only inside BPFPROF_START()/BPFPROF_STOP()\n"
		"                         windows (process-wide)\n"
		"  -a, --all              every process on the system (with --sample/--offcpu,\n"
		"                         or -F LIB:GLOB); COMMAND is then optional\n");
	if (attach)
		fprintf(f, "  -p, --pid PID[,PID]    processes to trace (repeatable)\n");
	else
		fprintf(f, "      --as-root          under sudo, run COMMAND as root (default: as the\n"
			   "                         invoking user, from SUDO_UID/SUDO_GID)\n");
	fprintf(f, "  -q, --quiet            no summary\n"
		   "  -v, --verbose          more messages (twice: libbpf debug)\n"
		   "  -h, --help             this help\n\noutput formats:\n");
	for (i = 0; exporter_table[i]; i++)
		fprintf(f, "  %-10s %-18s %s\n", exporter_table[i]->name, exporter_table[i]->suffix,
			exporter_table[i]->help);
	fprintf(f, "\nWithout -o, the archive bpfprof.data is written (see 'bpfprof report',\n"
		   "'bpfprof convert').  Ctrl-C stops the recording and writes what was captured.\n");
}

/* Returns 0, 1 for --help (exit 0), or -EINVAL. */
static int parse_args(int argc, char **argv, struct record_opts *o)
{
	enum { OPT_FORMAT = 256, OPT_MIN_TIME, OPT_BUFFER, OPT_NO_FOLLOW, OPT_AS_ROOT, OPT_ARGS,
	       OPT_NO_SKIP_ENDBR, OPT_SAMPLE, OPT_OFFCPU, OPT_NO_KSTACKS, OPT_NO_WAKEUPS, OPT_DEPS,
	       OPT_GATED, OPT_STACK, OPT_STACK_SIZE };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "function", required_argument, NULL, 'F' },
		{ "exclude", required_argument, NULL, 'N' },
		{ "min-time", required_argument, NULL, OPT_MIN_TIME },
		{ "buffer-size", required_argument, NULL, OPT_BUFFER },
		{ "no-follow", no_argument, NULL, OPT_NO_FOLLOW },
		{ "no-skip-endbr", no_argument, NULL, OPT_NO_SKIP_ENDBR },
		{ "sample", optional_argument, NULL, OPT_SAMPLE },
		{ "offcpu", no_argument, NULL, OPT_OFFCPU },
		{ "no-kernel-stacks", no_argument, NULL, OPT_NO_KSTACKS },
		{ "stack", required_argument, NULL, OPT_STACK },
		{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
		{ "all", no_argument, NULL, 'a' },
		{ "args", no_argument, NULL, OPT_ARGS },
		{ "deps", no_argument, NULL, OPT_DEPS },
		{ "no-wakeups", no_argument, NULL, OPT_NO_WAKEUPS },
		{ "usdt", required_argument, NULL, 'U' },
		{ "gated", no_argument, NULL, OPT_GATED },
		{ "as-root", no_argument, NULL, OPT_AS_ROOT },
		{ "duration", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL },
	};
	int c;

	o->buffer_size = 16ull << 20;	/* ~200 ms of headroom at 1 M calls/s; drained every 1 MB or 50 ms */
	/* '+': stop at the first non-option, the command. */
	while ((c = getopt_long(argc, argv, "+o:F:N:U:d:p:aqvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			o->format = optarg;
			break;
		case 'F':
			strv_push(&o->includes, &o->nincludes, optarg);
			break;
		case 'N':
			strv_push(&o->excludes, &o->nexcludes, optarg);
			break;
		case OPT_MIN_TIME:
			if (parse_duration(optarg, &o->min_time)) {
				p_err("invalid --min-time '%s' (e.g. 100us, 2ms)", optarg);
				return -EINVAL;
			}
			break;
		case OPT_BUFFER:
			if (parse_buffer_size(optarg, &o->buffer_size))
				return -EINVAL;
			break;
		case OPT_NO_FOLLOW:
			o->no_follow = true;
			break;
		case OPT_SAMPLE: {
			char *end;
			unsigned long hz = optarg ? strtoul(optarg, &end, 10) : 999;

			if (optarg && (*end || hz < 1 || hz > 100000)) {
				p_err("invalid --sample rate '%s' (1 to 100000 Hz)", optarg);
				return -EINVAL;
			}
			o->sample_hz = hz;
			break;
		}
		case OPT_OFFCPU:
			o->offcpu = true;
			break;
		case OPT_ARGS:
			o->args = true;
			break;
		case OPT_DEPS:
			o->deps = o->args = true;
			break;
		case OPT_NO_WAKEUPS:
			o->no_wakeups = true;
			break;
		case 'U':
			strv_push(&o->usdts, &o->nusdts, optarg);
			break;
		case OPT_GATED:
			o->gated = true;
			break;
		case OPT_NO_KSTACKS:
			o->no_kernel_stacks = true;
			break;
		case OPT_STACK:
			if (sampler__parse_stack(optarg, &o->stack))
				return -EINVAL;
			break;
		case OPT_STACK_SIZE:
			if (sampler__parse_stack_size(optarg, &o->stack_size))
				return -EINVAL;
			break;
		case 'a':
			o->all = true;
			break;
		case OPT_NO_SKIP_ENDBR:
			o->no_skip_endbr = true;
			break;
		case OPT_AS_ROOT:
			o->as_root = true;
			break;
		case 'd':
			if (parse_duration(optarg, &o->duration) || !o->duration) {
				p_err("invalid --duration '%s' (e.g. 500ms, 10s, 2m)", optarg);
				return -EINVAL;
			}
			break;
		case 'p':
			if (!o->attach) {
				p_err("--pid belongs to 'bpfprof attach'");
				return -EINVAL;
			}
			if (parse_pids(optarg, &o->pids, &o->npids))
				return -EINVAL;
			break;
		case 'q':
			quiet = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout, o->attach);
			return 1;
		default:
			fprintf(stderr, "see 'bpfprof %s --help'\n", o->attach ? "attach" : "record");
			return -EINVAL;
		}
	}
	if (o->attach) {
		if (optind < argc) {
			p_err("unexpected argument '%s' (to start a command use 'bpfprof record')",
			      argv[optind]);
			return -EINVAL;
		}
		if (!o->npids) {
			p_err("attach needs --pid PID");
			return -EINVAL;
		}
	} else if (optind < argc) {
		o->argv = argv + optind;
	} else if (!o->all) {
		p_err("no command given: bpfprof record [options] -- COMMAND [ARGS...]");
		return -EINVAL;
	}
	if ((o->stack != STACK_AUTO || o->stack_size) && !o->sample_hz && !o->offcpu) {
		p_err("--stack and --stack-size shape sampled stacks: add --sample or --offcpu");
		return -EINVAL;
	}
	if (o->gated && o->all) {
		p_err("--gated needs the targets' BPFPROF_START/STOP, not -a");
		return -EINVAL;
	}
	if (o->all) {
		size_t i;

		for (i = 0; i < o->nincludes; i++) {
			const char *lib, *glob;
			char *copy = select__split(o->includes[i], &lib, &glob);

			free(copy);
			if (!lib) {
				p_err("-a traces every process: name the library, -F LIB:GLOB ('%s')",
				      o->includes[i]);
				return -EINVAL;
			}
		}
		if (!o->sample_hz && !o->offcpu && !o->nincludes) {
			p_err("-a needs --sample, --offcpu or -F LIB:GLOB");
			return -EINVAL;
		}
		if (!o->argv && !o->duration)
			p_info("recording every process until Ctrl-C (or use --duration)");
	}
	return 0;
}

static void fill_header(struct bp_session *s, const struct record_opts *o)
{
	struct utsname u;
	char host[256] = "";
	size_t len = 0, i;
	char *cmd;

	if (o->attach) {
		cmd = xmalloc(32 + 12 * o->npids);
		len = sprintf(cmd, "attach --pid ");
		for (i = 0; i < o->npids; i++)
			len += sprintf(cmd + len, "%s%d", i ? "," : "", o->pids[i]);
	} else if (!o->argv) {
		cmd = xstrdup("record -a (system-wide)");
	} else {
		for (i = 0; o->argv[i]; i++)
			len += strlen(o->argv[i]) + 1;
		cmd = xcalloc(1, len + 1);
		for (i = 0; o->argv[i]; i++) {
			if (i)
				strcat(cmd, " ");
			strcat(cmd, o->argv[i]);
		}
	}
	s->cmdline = cmd;
	gethostname(host, sizeof(host) - 1);
	s->hostname = xstrdup(host);
	s->kernel = xstrdup(uname(&u) ? "" : u.release);
}

static bool tgids_empty(struct tracer *t);

static int run(struct record_opts *o)
{
	struct tracer_opts topts = {
		.buffer_size = o->buffer_size,
		.follow_forks = !o->no_follow,
		.args = o->args,
	};
	struct select_opts sopts = {
		.includes = o->includes, .nincludes = o->nincludes,
		.excludes = o->excludes, .nexcludes = o->nexcludes,
		.no_skip_endbr = o->no_skip_endbr,
	};
	const struct exporter_ops *ops = NULL;
	struct record_ctx rc = { .min_time = o->min_time };
	struct launch l = { .release_fd = -1, .err_fd = -1 };
	struct probe_set ps = { 0 }, unw = { 0 };
	struct decoder *dec = NULL;
	struct tracer *tr = NULL;
	struct sampler *smp = NULL;
	struct symbolizer *sym = NULL;
	bool launching = !o->attach && o->argv;
	uint64_t *lost_seen = NULL, *lost_now = NULL, t_attach, deadline = 0, kill_deadline = 0;
	char *exe = NULL, buf[32];
	int err, status = -1, exit_code = 0, ncpus;
	bool child_running = false, stopping = false;
	size_t i;

	session__init(&rc.s);
	{
		struct report_opts ro = { .no_percentiles = true };

		err = report__new(&ro, &rc.rep);
	}
	if (err)
		goto cleanup;
	fill_header(&rc.s, o);

	/* 1. What to trace. */
	if (o->attach) {
		err = launch__targets(o->pids, o->npids, &exe);
		if (err)
			goto cleanup;
		sopts.pid = o->pids[0];
	} else if (o->argv) {
		err = launch__resolve(o->argv[0], &exe);
		if (err) {
			p_err("cannot run '%s': %s", o->argv[0],
			      err == -ENOENT ? "command not found" : strerror(-err));
			err = -ENOENT;
			goto cleanup;
		}
	}
	sopts.exe = exe ? exe : "/proc/self/exe";
	/* A script: its interpreter is rarely what the user wants; follow what it execs. */
	sopts.lenient = sopts.no_exe = !exe || (!o->attach && is_script(exe));
	/* Sampling without -F: no function probes at all. */
	if ((o->sample_hz || o->offcpu) && !o->nincludes)
		err = 0;
	else
		err = select__resolve(&sopts, &rc.s, &ps);
	if (err && sopts.lenient && o->argv) {
		p_info("%s is a script: tracing the programs it executes", o->argv[0]);
		err = 0;
	}
	if (err)
		goto cleanup;

	/* 2. Where to write: fail before starting anything. */
	if (!o->output && !o->format) {
		/* Like perf.data: keep everything, look at it later with report/convert. */
		o->output = "bpfprof.data";
		ops = &archive_exporter;
		err = exporter__new(ops, o->output, &rc.s, &rc.exp);
		if (err)
			goto cleanup;
	} else {
		ops = o->format ? exporter__find(o->format) : exporter__for_path(o->output);
		if (!ops) {
			if (o->format)
				p_err("unknown format '%s' (see --help)", o->format);
			else
				p_err("cannot tell the format of '%s' from its name: use --format",
				      o->output);
			err = -EINVAL;
			goto cleanup;
		}
		if (!o->output) {
			p_err("--format needs -o FILE ('-' for standard output)");
			err = -EINVAL;
			goto cleanup;
		}
		err = exporter__new(ops, o->output, &rc.s, &rc.exp);
		if (err)
			goto cleanup;
	}

	/* 3. Load; start the command held; attach; release. */
	tracer__route_libbpf_log();
	err = decoder__new(&rc.s, sink, &rc, &dec);
	if (err)
		goto cleanup;
	rc.dec = dec;
	rc.strings = ustrings__new();
	decoder__set_strings(dec, rc.strings);
	rc.sopts = &sopts;
	if (o->deps)
		decoder__enable_data_edges(dec);
	/*
	 * Hold exec'd images for probing only when main-executable patterns
	 * apply: never system-wide (-a would probe every program on the machine,
	 * and return probes on processes that call continuously can hold off
	 * the kernel's uprobe SRCU grace periods for every other tracer), and
	 * not when only sampling or only library functions are asked for.
	 */
	topts.stop_on_exec = !o->all && follows_exec(o);
	topts.trace_all = o->all;
	topts.gated = o->gated;
	topts.wakeups = !o->no_wakeups && ps.nfuncs > 0;
	if (exe) {
		struct stat st;

		if (!stat(exe, &st))
			image_known(&rc, &st);
	}
	err = tracer__new(&topts, decode_record, &rc, &tr);
	rc.tr = tr;
	if (err)
		goto cleanup;
	if (o->sample_hz || o->offcpu) {
		struct sampler_opts so = {
			.hz = o->sample_hz,
			.offcpu = o->offcpu,
			.trace_all = o->all,
			.kernel_stacks = !o->no_kernel_stacks,
			.stack = o->stack,
			.stack_size = o->stack_size,
		};
		struct shared_maps maps;

		tracer__shared_maps(tr, &maps);
		err = sampler__new(&so, &maps, &smp);
		if (err)
			goto cleanup;
		err = symbolizer__new(&rc.s, &sym);
		if (err)
			goto cleanup;
		decoder__set_symbolizer(dec, sym);
		if (!o->no_kernel_stacks)
			symbolizer__preload_kernel(sym);
	}
	rc.uopts.trace_all = o->all;
	rc.uopts.gated = o->gated;
	if (o->gated) {
		err = usdt_ensure(&rc);	/* the window opens at a probe */
		if (err)
			goto cleanup;
	}
	if (launching) {
		prctl(PR_SET_CHILD_SUBREAPER, 1);	/* orphaned descendants come back to us */
		err = launch__start(&l, xstrdup(exe), o->argv, o->as_root);
		if (err) {
			p_err("cannot start '%s': %s", o->argv[0], strerror(-err));
			goto cleanup;
		}
		err = tracer__add_launched(tr, l.pid);
	} else {
		for (i = 0; i < o->npids && !err; i++)
			err = tracer__add_pid(tr, o->pids[i]);
		for (i = 0; sym && i < o->npids; i++)
			symbolizer__preload(sym, o->pids[i]);
		for (i = 0; i < o->npids; i++)
			name_existing(&rc.s, o->pids[i]);
	}
	if (err) {
		p_err("cannot register the target: %s", strerror(-err));
		goto cleanup;
	}

	rc.s.t0 = now_ns(CLOCK_MONOTONIC);
	rc.s.realtime_offset = (int64_t)(now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC));
	/* Running targets stand still while the links go in (see tracer__hold_targets). */
	if (o->attach)
		tracer__hold_targets(tr);
	/* The exception-unwinder hooks first, before any return probe. */
	if (exe && ps.nfuncs)
		select__unwinders(exe, o->attach ? o->pids[0] : 0, &unw);
	tracer__attach_unwinders(tr, &unw);
	err = attach_usdts(o, &rc, exe, &ps);
	if (err)
		goto cleanup;
	err = tracer__attach_set(tr, &rc.s, &ps);
	if (err)
		goto cleanup;
	if (smp) {
		err = sampler__attach(smp);
		if (err)
			goto cleanup;
	}
	tracer__release_targets(tr);
	err = 0;
	t_attach = now_ns(CLOCK_MONOTONIC) - rc.s.t0;
	warn_slow_probes(&rc.s);
	if (ps.nfuncs || !smp)
		p_info("traced %zu functions in %zu file%s (attached in %s)", ps.nfuncs, ps.nmods,
		       ps.nmods == 1 ? "" : "s", fmt_duration(t_attach, buf, sizeof(buf)));
	if (smp)
		p_info("sampling%s%s%s", o->sample_hz ? " cpu stacks at " : "",
		       o->sample_hz ? (snprintf(buf, sizeof(buf), "%u Hz", o->sample_hz), buf) : "",
		       o->offcpu ? (o->sample_hz ? " and off-cpu time" : " off-cpu time") : "");

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (launching) {
		err = launch__release(&l);
		if (err) {
			p_err("cannot execute '%s': %s", o->argv[0], strerror(-err));
			waitpid(l.pid, NULL, 0);
			l.pid = 0;
			goto cleanup;
		}
		child_running = true;
	}
	if (o->duration)
		deadline = now_ns(CLOCK_MONOTONIC) + o->duration;

	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		ncpus = 1;
	lost_seen = xcalloc(ncpus, sizeof(*lost_seen));
	lost_now = xcalloc(ncpus, sizeof(*lost_now));

	/* 4. Drain until the targets are gone, the time is up, or a signal. */
	for (;;) {
		int n = tracer__poll(tr, false);
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		bool targets_gone;

		if (n < 0) {
			err = n;
			if (err != -EIO && err != -ENOSPC && err != -EFBIG)
				p_err("cannot decode the trace: %s", strerror(-err));
			goto cleanup;
		}
		tracer__lost(tr, lost_now, ncpus);
		if (smp)
			sampler__lost(smp, lost_now, ncpus);
		if (rc.usd)
			usdt__lost(rc.usd, lost_now, ncpus);
		for (i = 0; i < (size_t)ncpus; i++) {
			if (lost_now[i] == lost_seen[i])
				continue;
			err = decoder__loss(dec, i, lost_now[i] - lost_seen[i]);
			if (err)
				goto cleanup;
			lost_seen[i] = lost_now[i];
		}
		if (!launching) {
			/* -a with no command: only the clock or a signal ends it */
			targets_gone = o->attach ? tgids_empty(tr) : false;
		} else {
			pid_t w;

			while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
				if (w == l.pid) {
					child_running = false;
					exit_code = WIFEXITED(status) ? WEXITSTATUS(status) :
						    128 + WTERMSIG(status);
				}
			}
			targets_gone = !child_running &&
				       (o->no_follow || o->all || w < 0 || tgids_empty(tr));
		}
		if (targets_gone)
			break;
		if (stop_signal && !stopping) {
			stopping = true;
			if (!launching)
				break;
			/* Like perf: the command is ended with SIGTERM, its exit is recorded. */
			if (child_running)
				kill(l.pid, SIGTERM);
			kill_deadline = now + 1000000000ull;
		}
		if (stopping && now >= kill_deadline)
			break;
		if (deadline && now >= deadline) {
			if (!launching)
				break;
			if (!stopping) {
				stopping = true;
				if (child_running)
					kill(l.pid, SIGTERM);
				kill_deadline = now + 1000000000ull;
			}
		}
		if (n == 0)
			tracer__wait(tr, 2);	/* checks targets and signals; drains when due */
	}

	/*
	 * 5. Drain what is left, close open calls, finish the output.  Probes
	 * are detached only afterwards: removing return probes waits for an
	 * SRCU grace period that can take seconds, and the output must not
	 * wait for it.  Pausing first bounds the drain when targets still run.
	 */
	tracer__pause(tr);
	if (smp)
		sampler__pause(smp);
	if (rc.usd)
		usdt__pause(rc.usd);
	do {
		err = tracer__poll(tr, true);
	} while (err > 0);
	if (err < 0)
		goto cleanup;
	rc.s.lost_total = tracer__lost(tr, lost_now, ncpus);
	if (smp)
		rc.s.lost_total += sampler__lost(smp, lost_now, ncpus);
	if (rc.usd)
		rc.s.lost_total += usdt__lost(rc.usd, lost_now, ncpus);
	for (i = 0; i < (size_t)ncpus; i++) {
		if (lost_now[i] != lost_seen[i]) {
			err = decoder__loss(dec, i, lost_now[i] - lost_seen[i]);
			if (err)
				goto cleanup;
		}
	}
	rc.s.ncpus = ncpus;
	rc.s.lost_per_cpu = lost_now;
	lost_now = NULL;
	err = decoder__finish(dec);
	if (err)
		goto cleanup;
	rc.s.duration = now_ns(CLOCK_MONOTONIC) - rc.s.t0;
	if (rc.exp) {
		err = exporter__finish(rc.exp, &rc.s);
		if (err)
			goto cleanup;
	}

	if (!quiet) {
		fprintf(stderr, "bpfprof: %llu calls recorded in %s, %llu lost records",
			(unsigned long long)rc.s.ncalls, fmt_duration(rc.s.duration, buf, sizeof(buf)),
			(unsigned long long)rc.s.lost_total);
		if (rc.s.nunfinished)
			fprintf(stderr, ", %llu unfinished", (unsigned long long)rc.s.nunfinished);
		if (rc.s.nunwound)
			fprintf(stderr, ", %llu unwound (longjmp/exception)",
				(unsigned long long)rc.s.nunwound);
		if (rc.s.nexceptions)
			fprintf(stderr, ", %llu exceptions", (unsigned long long)rc.s.nexceptions);
		if (rc.s.nno_retprobe)
			fprintf(stderr, ", %llu too deep for return probes",
				(unsigned long long)rc.s.nno_retprobe);
		fputc('\n', stderr);
		if (rc.s.nsamples || rc.s.noffcpu)
			fprintf(stderr, "bpfprof: %llu cpu samples (%llu with truncated stacks), "
				"%llu off-cpu intervals\n", (unsigned long long)rc.s.nsamples,
				(unsigned long long)rc.s.ntruncated, (unsigned long long)rc.s.noffcpu);
		if (rc.s.ncalls)
			report__print_summary(rc.rep, &rc.s, stderr, 10);
		if (o->all)
			print_top_processes(&rc);
		if (rc.s.lost_total)
			p_warn("%llu records lost: the ring buffer was full; try --buffer-size 256M",
			       (unsigned long long)rc.s.lost_total);
		if (rc.exp)
			fprintf(stderr, "bpfprof: wrote %s (%llu events)\n", o->output,
				(unsigned long long)rc.exported);
	}
	err = 0;
	if (stop_signal)
		exit_code = 128 + stop_signal;
cleanup:
	if (launching && l.pid > 0 && l.release_fd >= 0)
		launch__abort(&l);
	launch__free(&l);
	sampler__free(smp);
	usdt__free(rc.usd);
	tracer__free(tr);
	symbolizer__free(sym);
	decoder__free(dec);
	ustrings__free(rc.strings);
	exporter__free(rc.exp);
	probe_set__free(&ps);
	probe_set__free(&unw);
	report__free(rc.rep);
	session__free(&rc.s);
	free(rc.images);
	free(rc.top);
	free(lost_seen);
	free(lost_now);
	free(exe);
	if (err)
		return 1;
	return exit_code;
}

/*
 * Walking the BPF map is a syscall per key: at every drain (then every 2 ms) it was the
 * loader's biggest cost under load (measured in serve).  Every 100 ms is soon
 * enough to notice that the last target is gone.
 */
static bool tgids_empty(struct tracer *t)
{
	static uint64_t next_check;
	static bool empty;
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (now >= next_check) {
		empty = tracer__ntargets(t) == 0;
		next_check = now + 100000000ull;
	}
	return empty;
}

static int record_main(int argc, char **argv, bool attach)
{
	struct record_opts o = { .attach = attach };
	int err;

	err = parse_args(argc, argv, &o);
	if (err) {
		err = err > 0 ? 0 : 2;
		goto out;
	}
	err = run(&o);
out:
	free(o.includes);
	free(o.excludes);
	free(o.usdts);
	free(o.pids);
	return err;
}

int cmd_record(int argc, char **argv)
{
	return record_main(argc, argv, false);
}

int cmd_attach(int argc, char **argv)
{
	return record_main(argc, argv, true);
}
