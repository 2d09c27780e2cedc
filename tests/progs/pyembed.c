// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A program with CPython 3.11 linked in (python3.11-dev's static library),
 * under a name that says nothing of Python: bpfprof must recognise the
 * interpreter from the binary (Py_Version), not from the file name.  Runs
 * like `python3.11 ARGS`.  Built PIE here (the library's -pic build) and
 * fully static, non-PIE, as pyembed_static (tests/progs/flags.mk).
 */
#include <Python.h>

int main(int argc, char **argv)
{
	return Py_BytesMain(argc, argv);
}
