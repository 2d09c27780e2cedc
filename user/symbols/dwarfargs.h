/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A function's typed signature from DWARF, in the text form of model/argsig.h. */
#ifndef BPFPROF_DWARFARGS_H
#define BPFPROF_DWARFARGS_H

#include <elfutils/libdw.h>

/* The signature of the subprogram fn (malloc'd), or NULL. */
char *dwarfargs__sig(Dwarf_Die *fn);

#endif
