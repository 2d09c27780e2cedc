/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPython support: recognising an interpreter binary (an executable with
 * the interpreter linked in, or libpython3.X.so), reading what python.bpf.c
 * needs from it (version, probe sites, struct offsets: image.c), and the
 * Python side of one recording (pycap.c), which loads python.bpf.c
 * (probes/python.h) when the first interpreter is met.  See README "Python".
 *
 * Selection: `-F py:GLOB` / `-N py:GLOB` select Python functions by
 * qualified name (`Class.method`, `outer.<locals>.inner`) or by
 * `FILE:QUALNAME`, FILE a glob on the file's base name or path
 * (`-F 'py:app.py:handle_*'`).
 */
#ifndef BPFPROF_CPYTHON_H
#define BPFPROF_CPYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "bpf/python.h"
#include "probes/python.h"

/*
 * Is the process running `exe` (pid > 0: also its mappings) a CPython
 * interpreter?  1 with *img filled (the executable, or the libpython3.X it
 * loads), 0 if not, -errno when a file cannot be read.
 */
int python__find(const char *exe, pid_t pid, struct py_image *img);
void python__image_free(struct py_image *img);
/* Why Python calls cannot be traced in img (NULL: they can). */
const char *python__unsupported(const struct py_image *img);
/* python__attach() of img with its version's offsets; -EOPNOTSUPP: img cannot be traced. */
int cpython__attach(struct py_tracer *p, const struct py_image *img);

/* "py:GLOB" patterns: moved from pats[] into py[] (both arrays of borrowed strings). */
void python__take_patterns(char **pats, size_t *n, char ***py, size_t *npy);

/* A CPython version bpfprof knows the struct layout of (image.c). */
struct py_version {
	unsigned major, minor;
	struct bp_py_cfg off;
};
/* Its offsets, or NULL for a version without a table. */
const struct py_version *python__find_version(unsigned major, unsigned minor);


/*
 * The Python side of one recording (record/attach): the py: patterns, the
 * interpreter images met, and the tracer loaded when the first one is.
 */
struct py_capture;

/* Takes the py: patterns out of -F/-N (the arrays are compacted). */
struct py_capture *pycap__new(char **inc, size_t *ninc, char **exc, size_t *nexc, bool trace_all);
/* Were py: patterns given? */
bool pycap__patterns(const struct py_capture *pc);
/*
 * A target runs exe (pid > 0: already running): is it CPython?  1: its
 * Python calls will be traced (pycap__attach); 0: not CPython; -errno:
 * CPython whose calls cannot be traced (says why, and what is traced).
 * `others`: something besides Python calls is recorded (native -F,
 * sampling): then an untraceable interpreter is a warning, not an error.
 */
int pycap__check(struct py_capture *pc, const char *exe, pid_t pid, bool others);
/* Loads python.bpf.c (first time) and attaches the images checked so far.  0 or -errno. */
int pycap__attach(struct py_capture *pc, const struct shared_maps *maps);
/* Images checked and attached. */
size_t pycap__nimages(const struct py_capture *pc);
uint64_t pycap__lost(struct py_capture *pc, uint64_t *per_cpu, size_t ncpu);
uint64_t pycap__misses(struct py_capture *pc);
/* python__drop_code() / python__filtered() of the capture's tracer; -ENOENT / 0 without one. */
int pycap__drop_code(struct py_capture *pc, uint32_t pid, uint64_t code);
uint64_t pycap__filtered(struct py_capture *pc);
/* Are Python calls traced (probes attached)? */
bool pycap__traced(const struct py_capture *pc);
/* python__detach() of pc's interpreters. */
void pycap__detach(struct py_capture *pc, struct closer *cl);
void pycap__pause(struct py_capture *pc);
void pycap__free(struct py_capture *pc);
struct sampler;
/*
 * Sampling: if process pid runs a CPython bpfprof knows, the sampler is
 * told where its interpreter is (its samples then carry Python frames).
 * path: its executable when known (a command not exec'd yet), else NULL.
 * Returns 1 if so, 0 if not.
 */
int pycap__sample_proc(struct py_capture *pc, struct sampler *smp, uint32_t pid, const char *path);
/* Names a code object of pid (a process pycap__sample_proc() accepted) from its memory. */
int pycap__name_code(struct py_capture *pc, uint32_t pid, uint64_t code, char *name,
		     size_t name_len, char *file, size_t file_len, uint32_t *line);
/* The patterns, for decoder__set_python_filter(). */
void pycap__patterns_get(const struct py_capture *pc, char ***inc, size_t *ninc, char ***exc,
			 size_t *nexc);

#endif
