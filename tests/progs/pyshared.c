// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pyembed.c as a PIE executable on a shared libpython3.11 without USDT
 * probes, as CPython builds other than Debian's are (pyenv's, configured
 * without --with-dtrace): Debian's libpython3.11.so.1.0 with its
 * .note.stapsdt removed, in pyshared.d beside it (found through its
 * RUNPATH).  See tests/progs/flags.mk.
 */
#include "pyembed.c"
