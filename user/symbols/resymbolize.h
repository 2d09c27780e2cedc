/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Naming a recording after the fact (bpfprof symbolize): the functions of
 * its tables that the recording host could not name -- FILE+0xADDR
 * functions found by their FDE, "[unknown] FILE+0xOFFSET" sample frames --
 * and the definition file:line, parameters and typed signature of every
 * function of a module, from the debug file found by the module's build-id
 * (the archive keeps it since format 1.4): --debug-dir directories and
 * /usr/lib/debug, then debuginfod (debugsyms.h).
 *
 * A sample frame is renamed to the function holding it, with that
 * function's address: the frames of one function then compare equal and
 * are one function of the output (archive/merge.c shares them).
 */
#ifndef BPFPROF_RESYMBOLIZE_H
#define BPFPROF_RESYMBOLIZE_H

#include <stddef.h>
#include "model/session.h"

struct resymbolize_stats {
	size_t named;		/* functions and sample frames named */
	size_t described;	/* functions given file:line or a signature */
	size_t modules;		/* modules a debug file was found for */
	size_t missing;		/* modules with unnamed functions and no debug file */
};

struct debug_conf;

/*
 * Renames in place the functions of s (tables only), from the debug files
 * found where debug says (debugsyms.h; NULL: as configured before); st may
 * be NULL.
 */
void resymbolize__session(struct bp_session *s, const struct debug_conf *debug,
			  struct resymbolize_stats *st);

#endif
