// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pyembed.c linked statically (no dynamic linker, not PIE): see tests/progs/flags.mk. */
#include "pyembed.c"
