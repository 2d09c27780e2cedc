// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a hit of a program's annotation costs (calibrate.h, annot_ns).
 *
 * An annotation (bpfprof.h) or a -U probe is a USDT probe: a nop the kernel
 * emulates, running usdt.bpf.c, which reads the probe's arguments and its
 * label string and writes a record of its own.  That is more than a
 * function entry costs (hotmarks: ~2x half a Python call, ~4x half an
 * emulated one).  bpfprof_cal_annot has one bpfprof:event probe: the helper calls
 * it as it calls the other paths' functions, with usdt.bpf.c attached to
 * the note in bpfprof's own file.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/sdt.h>
#include "calibrate.h"
#include "probes/usdt.h"
#include "base/log.h"

__attribute__((noinline)) void bpfprof_cal_annot(void)
{
	/* what BPFPROF_EVENT("calibrate", 0) is (include/bpfprof.h, a layer above) */
	DTRACE_PROBE2(bpfprof, event, (const char *)"calibrate", (int64_t)0);
	__asm__ volatile("" ::: "memory");	/* the call is not folded away */
}

int calannot__attach(struct tracer *tr, const char *path, struct usdt_tracer **out)
{
	struct usdt_opts o = { 0 };
	struct shared_maps maps;
	int err, n;

	*out = NULL;
	tracer__shared_maps(tr, &maps);
	/* a failure is the calibration's (reported by it in -v), not the recording's */
	log_muted = true;
	err = usdt__new(&o, &maps, out);
	if (!err) {
		n = usdt__attach_bpfprof(*out, path);
		err = n == 1 ? 0 : -ENOENT;
	}
	log_muted = false;
	if (err) {
		usdt__free(*out);
		*out = NULL;
	}
	return err;
}
