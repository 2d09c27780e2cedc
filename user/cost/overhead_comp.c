// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The probes' cost taken out of the durations (overhead.h,
 * overhead__compensate): the calibrated figures given to the decoder
 * (decode/compensate.h), and the session's timing line saying which were
 * in use, the calibration's or those the recording measured itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "overhead.h"
#include "calibrate.h"
#include "decode/compensate.h"
#include "decode/decode.h"
#include "base/log.h"

static unsigned path_index(const struct bp_func *f)
{
	return (unsigned)calibrate__path(f);
}

void overhead__compensate(struct overhead *ov, struct decoder *dec, struct bp_session *s)
{
	const struct probe_costs *pc = overhead__costs(ov);
	struct comp_costs cc = { .path = path_index, .adapt = true };
	int k;

	for (k = 0; k < PP_NPATHS && k < COMP_NPATHS; k++) {
		cc.total_ns[k] = pc->total_ns[k];
		cc.inside_ns[k] = pc->inside_ns[k];
	}
	cc.exit_ns = pc->exit_ns;
	decoder__compensate(dec, &cc);
	overhead__compensate_end(ov, dec, s);
}

void overhead__compensate_end(struct overhead *ov, struct decoder *dec, struct bp_session *s)
{
	const struct probe_costs *pc = overhead__costs(ov);
	struct comp_costs in;
	uint32_t pid;
	unsigned mask, p;
	size_t n;
	char buf[768];

	if (!decoder__comp_in_use(dec, &in, &pid, &mask))
		return;
	snprintf(buf, sizeof(buf), "compensated%s: per call %.0f ns inside, %.0f ns per traced "
		 "child (emulated); %.0f / %.0f (single-step); %.0f / %.0f (nop5); return probe "
		 "%.0f ns (calibrated)",
		 pc->measured ? "" : " (not measured here: development VM figures)",
		 pc->inside_ns[PP_EMULATED], pc->total_ns[PP_EMULATED],
		 pc->inside_ns[PP_SINGLE_STEP], pc->total_ns[PP_SINGLE_STEP],
		 pc->inside_ns[PP_NOP5], pc->total_ns[PP_NOP5], pc->exit_ns);
	/* what the process with the most calls showed itself (compensate.h), where it did */
	for (p = 0; mask && p <= PP_NOP5; p++) {
		n = strlen(buf);
		if (p == 0)
			snprintf(buf + n, sizeof(buf) - n, "; measured in the recording (pid %u):", pid);
		n = strlen(buf);
		if (mask & (1u << p))
			snprintf(buf + n, sizeof(buf) - n, " %.0f / %.0f (%s);", in.inside_ns[p],
				 in.total_ns[p], calibrate__path_name((enum probe_path_kind)p));
	}
	n = strlen(buf);
	if (mask & COMP_IN_USE_RETURN)
		snprintf(buf + n, sizeof(buf) - n, " return probe %.0f ns;", in.exit_ns);
	n = strlen(buf);
	if (mask & COMP_IN_USE_FLUSH)
		snprintf(buf + n, sizeof(buf) - n, " batch flush %.0f ns;", in.flush_ns);
	n = strlen(buf);
	if (in.stalls)
		snprintf(buf + n, sizeof(buf) - n, " %s%llu stalls in the probes taken out (%.0f us);",
			 mask ? "" : "; ", (unsigned long long)in.stalls, in.stall_ns / 1000);
	n = strlen(buf);
	if (n && buf[n - 1] == ';')
		buf[n - 1] = '\0';
	free(s->timing);
	s->timing = xstrdup(buf);
}
