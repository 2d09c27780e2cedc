// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a Python call's probes cost (calibrate.h, PP_PYTHON).
 *
 * A traced Python call is two uprobe hits on instructions the kernel
 * emulates (the jmp of a RESUME handler, the jne of the function__return
 * semaphore test; cpython/image.c places them so), each running python.bpf.c:
 * the thread state read from _PyRuntime, the frame, its code object, a
 * record.  The calibration helper runs the same program on the same kind of
 * sites in bpfprof's own code (bpfprof_cal_py: a jmp and a jne), reading an
 * interpreter state laid out here with a real CPython version's offsets: a
 * thread state whose frame runs a code object named like a function, the
 * RESUME it starts at (a call, not a resumption), no exception.  So the
 * figure is this machine's, measured like the others, and needs no Python
 * installed; what the interpreter itself does around a call is not probe
 * cost and is left out.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "calibrate.h"
#include "cpython/cpython.h"
#include "probes/trace.h"
#include "base/log.h"

/* jmp +0 (RESUME site), jne +0 (return site), ret: both sites emulated */
asm(".text\n"
    ".globl bpfprof_cal_py\n.type bpfprof_cal_py,@function\n.p2align 4\n"
    "bpfprof_cal_py:\n\t.byte 0xeb, 0x00\n\t.byte 0x75, 0x00\n\tret\n"
    ".size bpfprof_cal_py, .-bpfprof_cal_py\n");

#define CALPY_RETURN_SITE	2	/* bytes into bpfprof_cal_py */

/*
 * The interpreter state python.bpf.c reads (static: the forked helper has
 * it at the same place).  Each object on a page of its own, as in a real
 * interpreter (_PyRuntime in .data, the thread state on the heap, the C
 * frame on the stack, the frame in the data stack, the code object, its
 * strings): every read a probe makes may be a TLB miss after the trap.
 */
#define PAGE_ALIGNED __attribute__((aligned(4096)))
static struct {
	PAGE_ALIGNED uint8_t runtime[1024];
	PAGE_ALIGNED uint8_t tstate[512];
	PAGE_ALIGNED uint8_t cframe[64];
	PAGE_ALIGNED uint8_t frame[128];
	PAGE_ALIGNED uint8_t code[256];
	PAGE_ALIGNED uint8_t qualname[128];
	PAGE_ALIGNED uint8_t filename[128];
	PAGE_ALIGNED uint8_t instr[4];
} fake;

static int put(uint8_t *buf, size_t size, uint32_t off, const void *v, size_t len)
{
	if (off + len > size)
		return -EINVAL;	/* a version whose structs do not fit: no figure */
	memcpy(buf + off, v, len);
	return 0;
}

#define PUT(field, off, v) put(fake.field, sizeof(fake.field), (off), &(v), sizeof(v))

/* A compact ASCII str object holding s. */
static int put_str(uint8_t *obj, size_t size, const struct bp_py_cfg *o, const char *s)
{
	/* state: kind 1 (bits 2-4), compact (5), ascii (6) */
	uint32_t state = 1 << 2 | 1 << 5 | 1 << 6;
	uint64_t len = strlen(s);

	if (put(obj, size, o->str_state, &state, sizeof(state)) ||
	    put(obj, size, o->str_length, &len, sizeof(len)))
		return -EINVAL;
	return put(obj, size, o->str_ascii_data, s, len);
}

static int lay_out(const struct bp_py_cfg *o)
{
	uint64_t tstate = (uint64_t)fake.tstate, cframe = (uint64_t)fake.cframe;
	uint64_t frame = (uint64_t)fake.frame, code = (uint64_t)fake.code;
	uint64_t qualname = (uint64_t)fake.qualname, filename = (uint64_t)fake.filename;
	uint64_t instr = (uint64_t)fake.instr;
	uint32_t line = 1;

	memset(&fake, 0, sizeof(fake));
	/* prev_instr + 2 is the RESUME, its argument 0: a frame's start */
	fake.instr[2] = o->op_resume;
	if (PUT(runtime, o->runtime_tstate, tstate) || PUT(tstate, o->tstate_cframe, cframe) ||
	    PUT(cframe, o->cframe_frame, frame) || PUT(frame, o->frame_code, code) ||
	    PUT(frame, o->frame_prev_instr, instr) || PUT(code, o->code_qualname, qualname) ||
	    PUT(code, o->code_filename, filename) || PUT(code, o->code_firstlineno, line))
		return -EINVAL;
	if (put_str(fake.qualname, sizeof(fake.qualname), o, "calibrate") ||
	    put_str(fake.filename, sizeof(fake.filename), o, "bpfprof"))
		return -EINVAL;
	return 0;
}

/* The version whose layout is used: any the table has (the cost does not depend on it). */
static const struct py_version *cal_version(void)
{
	return python__find_version(3, 11);
}

int calpy__prepare(void)
{
	const struct py_version *v = cal_version();

	return v ? lay_out(&v->off) : -ENOENT;
}

int calpy__attach(struct tracer *tr, const char *path, unsigned long off, struct py_tracer **out)
{
	const struct py_version *v = cal_version();
	uint64_t site = (uint64_t)(uintptr_t)bpfprof_cal_py;
	struct shared_maps maps;
	struct py_image img;
	int err;

	*out = NULL;
	if (!v)
		return -ENOENT;
	memset(&img, 0, sizeof(img));
	img.path = (char *)path;
	img.major = v->major;
	img.minor = v->minor;
	img.known = img.usdt = img.table = true;
	/* run-time addresses as "link-time" ones: python.bpf.c's load bias comes out 0 */
	img.runtime = (uint64_t)(uintptr_t)fake.runtime;
	img.sites[0] = (struct py_site){ .kind = BP_PY_SITE_RESUME, .addr = site, .off = off,
					 .emulated = true };
	img.sites[1] = (struct py_site){ .kind = BP_PY_SITE_RETURN, .addr = site + CALPY_RETURN_SITE,
					 .off = off + CALPY_RETURN_SITE, .emulated = true };
	img.nsites = 2;
	tracer__shared_maps(tr, &maps);
	/* a failure is the calibration's (reported by it in -v), not the recording's */
	log_muted = true;
	err = python__new(false, &maps, out);
	if (!err)
		err = cpython__attach(*out, &img);
	log_muted = false;
	if (err) {
		python__free(*out);
		*out = NULL;
	}
	return err;
}

void calpy__pause(struct py_tracer *p)
{
	if (p)
		python__pause(p);
}

void calpy__free(struct py_tracer *p)
{
	python__free(p);
}
