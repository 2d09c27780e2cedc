// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What the capture options ask together, checked once for every command (capture.h). */
#include <errno.h>
#include <stdlib.h>
#include "capture.h"
#include "base/log.h"
#include "symbols/select.h"

int capture_opts__validate(const struct capture_opts *co)
{
	size_t i;

	if ((co->stack != STACK_AUTO || co->stack_size) && !co->sample_hz && !co->offcpu) {
		p_err("--stack and --stack-size shape sampled stacks: add --sample or --offcpu");
		return -EINVAL;
	}
	if (co->gated && co->all) {
		p_err("--gated needs the targets' BPFPROF_START/STOP, not -a");
		return -EINVAL;
	}
	if (!co->all)
		return 0;
	for (i = 0; i < co->nincludes; i++) {
		const char *lib, *glob;
		char *copy = select__split(co->includes[i], &lib, &glob);

		free(copy);
		if (!lib) {
			p_err("-a traces every process: name the library, -F LIB:GLOB ('%s')",
			      co->includes[i]);
			return -EINVAL;
		}
	}
	if (!co->sample_hz && !co->offcpu && !co->nincludes) {
		p_err("-a needs --sample, --offcpu or -F LIB:GLOB");
		return -EINVAL;
	}
	return 0;
}

void capture_opts__free(struct capture_opts *co)
{
	free(co->pids);
	free(co->includes);
	free(co->excludes);
	free(co->usdts);
	co->pids = NULL;
	co->includes = co->excludes = co->usdts = NULL;
	co->npids = co->nincludes = co->nexcludes = co->nusdts = 0;
}
