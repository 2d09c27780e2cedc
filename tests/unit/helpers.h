/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the unit tests share (tests/unit/helpers.c, linked into every one):
 * a scratch directory removed with its files, whole files and in-memory
 * streams read back, a text handed to an outside checker in a temporary file,
 * call and loss events built field by field, and a child process whose exit
 * status is the verdict (for what changes process-wide state: limits,
 * signal settings, stdout).  They assert with cmocka: call them from a test
 * or a setup, after including <cmocka.h>.
 */
#ifndef BPFPROF_UNIT_HELPERS_H
#define BPFPROF_UNIT_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model/session.h"

/* The process every event below belongs to (the exporter tests' "demo"). */
#define UNIT_PID 100

/*
 * A fresh directory /tmp/bpfprof-test-TAG.XXXXXX in dir (64 bytes) and, when
 * file is not NULL, path = dir/file (path_len bytes).  0, or -1 (for a setup).
 */
int unit__mkdtemp(char *dir, char *path, size_t path_len, const char *tag, const char *file);
/* Removes dir and the files in it (not subdirectories: the tests make none). */
void unit__rmtree(const char *dir);
/* A fixture's end: dir removed (unit__rmtree), s and fx freed.  Returns 0 (for a teardown). */
int unit__fixture_free(const char *dir, struct bp_session *s, void *fx);
/* How many entries dir holds, "." and ".." left out. */
int unit__count_entries(const char *dir);

/*
 * A session for the exporter tests: module 0 "/usr/bin/demo", thread 100 of
 * process 100, both named "demo".  Returns the module's index.
 */
uint32_t unit__demo_session(struct bp_session *s);

/* The whole file, NUL-terminated (free it); its length in *len when len is not NULL. */
char *unit__slurp(const char *path, size_t *len);
/* Fails the test, showing both, when needle is not in hay. */
void unit__assert_contains(const char *hay, const char *needle);

/* Output written to memory: unit__mem_open, write to the FILE, unit__mem_close. */
struct unit_mem {
	char *buf;
	size_t len;
	FILE *f;
};
FILE *unit__mem_open(struct unit_mem *m);
/* Closes the stream (checked) and returns what was written, NUL-terminated (free it). */
char *unit__mem_close(struct unit_mem *m);
/* Closes the stream and asserts that exactly `want` was written. */
void unit__assert_mem(struct unit_mem *m, const char *want);

/*
 * Writes text to a temporary file, runs the shell command cmd with that
 * file's path in $UNIT_FILE (an outside checker: python3, a real parser),
 * removes the file; returns system()'s status (0: the checker agreed).
 */
int unit__system_on(const char *text, const char *cmd);

/* A call of process UNIT_PID; every other field is zero. */
struct bp_event unit__call(uint64_t id, uint64_t parent_id, uint32_t func, uint32_t path,
			   uint32_t tid, uint64_t begin, uint64_t end, uint64_t self,
			   uint32_t depth, uint32_t flags);
/* count records lost on cpu, noticed at ts. */
struct bp_event unit__loss(uint64_t ts, uint64_t count, uint32_t cpu);

/*
 * Runs fn(arg) in a child process that exits with what fn returns; returns
 * that exit status (the test fails if the child died of a signal).
 */
int unit__in_child(int (*fn)(void *arg), void *arg);

#endif
