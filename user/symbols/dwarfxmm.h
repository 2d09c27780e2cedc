/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Places inside a function where its float/double arguments and return value can be read. */
#ifndef BPFPROF_DWARFXMM_H
#define BPFPROF_DWARFXMM_H

#include <gelf.h>
#include <elfutils/libdw.h>

/*
 * Appends to the signature *sig (dwarfargs__sig's, realloc'd) the "@" lines
 * (model/argsig.h) of subprogram fn, whose code and unwind tables are in
 * elf (a separate debug file has no code: no places).
 */
void dwarfxmm__places(Dwarf_Die *fn, Elf *elf, char **sig);

#endif
