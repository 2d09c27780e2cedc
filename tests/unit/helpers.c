// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What the unit tests share: see helpers.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

/*
 * UNIT_FILTER=PATTERN runs only the cases whose name matches it (cmocka's
 * patterns: * and ?), in whichever unit binary: set before main() runs its
 * group.
 */
__attribute__((constructor)) static void unit__filter_from_env(void)
{
	const char *p = getenv("UNIT_FILTER");

	if (p && *p)
		cmocka_set_test_filter(p);
}

int unit__mkdtemp(char *dir, char *path, size_t path_len, const char *tag, const char *file)
{
	/* dir is 64 bytes in every fixture: the tags are short words */
	snprintf(dir, 64, "/tmp/bpfprof-test-%s.XXXXXX", tag);
	if (!mkdtemp(dir))
		return -1;
	if (file)
		snprintf(path, path_len, "%s/%s", dir, file);
	return 0;
}

void unit__rmtree(const char *dir)
{
	struct dirent *d;
	char p[512];
	DIR *dh = opendir(dir);

	if (dh) {
		while ((d = readdir(dh))) {
			if (d->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, d->d_name);
			unlink(p);
		}
		closedir(dh);
	}
	rmdir(dir);
}

int unit__fixture_free(const char *dir, struct bp_session *s, void *fx)
{
	unit__rmtree(dir);
	session__free(s);
	free(fx);
	return 0;
}

int unit__count_entries(const char *dir)
{
	struct dirent *d;
	DIR *dh = opendir(dir);
	int n = 0;

	assert_non_null(dh);
	while ((d = readdir(dh)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			n++;
	closedir(dh);
	return n;
}

uint32_t unit__demo_session(struct bp_session *s)
{
	uint32_t mod;

	session__init(s);
	mod = session__add_module(s, "/usr/bin/demo");
	strcpy(session__thread(s, UNIT_PID, UNIT_PID)->name, "demo");
	session__set_process_name(s, UNIT_PID, "demo");
	return mod;
}

char *unit__slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

void unit__assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("missing:\n%s\nin:\n%s", needle, hay);
}

FILE *unit__mem_open(struct unit_mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	assert_non_null(m->f);
	return m->f;
}

char *unit__mem_close(struct unit_mem *m)
{
	assert_int_equal(fclose(m->f), 0);
	m->f = NULL;
	return m->buf;
}

void unit__assert_mem(struct unit_mem *m, const char *want)
{
	char *got = unit__mem_close(m);

	assert_string_equal(got, want);
	free(got);
}

int unit__system_on(const char *text, const char *cmd)
{
	char path[] = "/tmp/bpfprof-test-text.XXXXXX";
	int fd = mkstemp(path), rc;
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(setenv("UNIT_FILE", path, 1), 0);
	rc = system(cmd);
	unsetenv("UNIT_FILE");
	unlink(path);
	return rc;
}

struct bp_event unit__call(uint64_t id, uint64_t parent_id, uint32_t func, uint32_t path,
			   uint32_t tid, uint64_t begin, uint64_t end, uint64_t self,
			   uint32_t depth, uint32_t flags)
{
	struct bp_event ev = { .kind = BP_EV_CALL };

	ev.call = (struct bp_call){ .id = id, .parent_id = parent_id, .begin = begin, .end = end,
				    .self = self, .pid = UNIT_PID, .tid = tid, .func = func,
				    .depth = depth, .flags = flags, .path = path };
	return ev;
}

struct bp_event unit__loss(uint64_t ts, uint64_t count, uint32_t cpu)
{
	struct bp_event ev = { .kind = BP_EV_LOSS };

	ev.loss = (struct bp_loss){ .ts = ts, .count = count, .cpu = cpu };
	return ev;
}

int unit__in_child(int (*fn)(void *arg), void *arg)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn(arg));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}
