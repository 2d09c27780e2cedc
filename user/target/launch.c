// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "launch.h"
#include "base/log.h"

static int check_exec(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (access(path, X_OK))
		return -errno;
	return 0;
}

int launch__resolve(const char *cmd, char **path)
{
	char *found = NULL;
	int err = launch__find(cmd, &found);

	if (err)
		return err;
	*path = realpath(found, NULL);
	err = *path ? 0 : -errno;
	free(found);
	return err;
}

int launch__find(const char *cmd, char **path)
{
	const char *env, *p;
	int err = -ENOENT;

	if (!*cmd)
		return -ENOENT;
	if (strchr(cmd, '/')) {
		err = check_exec(cmd);
		if (!err)
			*path = xstrdup(cmd);
		return err;
	}
	env = getenv("PATH");
	if (!env)
		env = "/usr/local/bin:/usr/bin:/bin";
	for (p = env;; p = strchr(p, ':') + 1) {
		const char *end = strchrnul(p, ':');
		size_t len = end - p;
		char *cand = xmalloc(len + strlen(cmd) + 3);
		int e;

		if (len)
			memcpy(cand, p, len);
		else
			cand[len++] = '.';
		cand[len] = '/';
		strcpy(cand + len + 1, cmd);
		e = check_exec(cand);
		if (!e) {
			*path = cand;
			return 0;
		}
		if (e == -EACCES)
			err = e;	/* like execvp: remember, keep looking */
		free(cand);
		if (!*end)
			break;
	}
	return err;
}

int launch__resolve_file(const char *name, char **path)
{
	struct stat st;

	if (!strchr(name, '/'))
		return launch__resolve(name, path);
	/* read, never run: a shared library needs no execute bit */
	if (stat(name, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (access(name, R_OK))
		return -errno;
	*path = realpath(name, NULL);
	return *path ? 0 : -errno;
}

/*
 * Who the command runs as: the user who ran sudo, unless --as-root.  Looked
 * up in bpfprof before the fork: the user and group databases go through
 * NSS, which dlopens its modules, and a child that dlopened while bpfprof
 * waits for it at the launch hold would be held at the dynamic linker's
 * _dl_debug_state (dlopen following, -F LIB:GLOB) with nobody to let it go.
 * The child only calls setgroups, setgid and setuid.
 */
struct run_as {
	bool drop;
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t *groups;
	char *home, *name;
};

static void run_as__free(struct run_as *ra)
{
	free(ra->groups);
	free(ra->home);
	free(ra->name);
	memset(ra, 0, sizeof(*ra));
}

static int run_as__lookup(struct run_as *ra)
{
	const char *suid = getenv("SUDO_UID"), *sgid = getenv("SUDO_GID");
	struct passwd *pw;
	int n = 32;

	memset(ra, 0, sizeof(*ra));
	if (getuid() != 0 || !suid || !sgid)
		return 0;
	ra->uid = strtoul(suid, NULL, 10);
	ra->gid = strtoul(sgid, NULL, 10);
	if (ra->uid == 0)
		return 0;
	ra->drop = true;
	pw = getpwuid(ra->uid);
	if (!pw)
		return 0;	/* no such user in the database: no supplementary groups */
	ra->name = strdup(pw->pw_name);
	ra->home = strdup(pw->pw_dir);
	if (!ra->name || !ra->home)
		return -ENOMEM;
	for (;;) {
		gid_t *g = realloc(ra->groups, n * sizeof(*g));
		int got = n;

		if (!g)
			return -ENOMEM;
		ra->groups = g;
		if (getgrouplist(ra->name, ra->gid, g, &got) >= 0) {
			ra->ngroups = got;
			return 0;
		}
		if (got <= n)
			got = n * 2;
		if (got > 65536)
			return -E2BIG;
		n = got;
	}
}

/* In the child: no lookups, no allocation. */
static int run_as__become(const struct run_as *ra)
{
	if (!ra->drop)
		return 0;
	if (setgroups(ra->ngroups, ra->groups) || setgid(ra->gid) || setuid(ra->uid))
		return -errno;
	if (ra->name) {
		setenv("HOME", ra->home, 1);
		setenv("USER", ra->name, 1);
		setenv("LOGNAME", ra->name, 1);
	}
	return 0;
}

#define PF_KTHREAD_FLAG 0x00200000	/* include/linux/sched.h: I am a kernel thread */

/*
 * Why pid has no executable: a kernel thread (PF_KTHREAD in /proc/PID/stat),
 * a zombie, or gone.  NULL when none of these.
 */
static const char *no_exe_reason(pid_t pid)
{
	char path[64], buf[1024], *p, state = 0;
	unsigned long flags = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return "no such process";
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* comm may hold spaces and parentheses: the fields start after the last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
		return NULL;
	if (flags & PF_KTHREAD_FLAG)
		return "it is a kernel thread (no user-space code to trace)";
	if (state == 'Z' || state == 'X')
		return "it has exited (a zombie)";
	return NULL;
}

int launch__targets(const pid_t *pids, size_t n, char **exe)
{
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		if (kill(pids[i], 0) && errno == ESRCH) {
			p_err("cannot attach to pid %d: no such process", pids[i]);
			return -ESRCH;
		}
	}
	for (i = 0; i < n; i++) {
		const char *why = no_exe_reason(pids[i]);

		if (why) {
			p_err("cannot attach to pid %d: %s", pids[i], why);
			return -ESRCH;
		}
	}
	err = launch__pid_exe(pids[0], exe);
	if (err) {
		p_err("cannot attach to pid %d: %s", pids[0],
		      err == -ESRCH ? "no such process" : strerror(-err));
		return err;
	}
	for (i = 1; i < n; i++) {
		char *other = NULL;

		if (!launch__pid_exe(pids[i], &other) && strcmp(other, *exe))
			p_warn("pid %d runs %s, not %s: only its shared-library functions are traced",
			       pids[i], other, *exe);
		free(other);
	}
	return 0;
}

int launch__start(struct launch *l, char *path, char *const argv[], bool as_root)
{
	int hold[2] = { -1, -1 }, errp[2] = { -1, -1 };
	struct run_as ra = { 0 };
	pid_t pid;
	int err;

	memset(l, 0, sizeof(*l));
	l->release_fd = l->err_fd = -1;
	l->path = path;
	if (!as_root) {
		err = run_as__lookup(&ra);
		if (err)
			goto cleanup;
	}
	if (pipe2(hold, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		err = -errno;
		goto cleanup;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto cleanup;
	}
	if (pid == 0) {
		sigset_t none;
		char c;
		int e = 0;

		/* Die with bpfprof if it dies before releasing us. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(hold[1]);
		close(errp[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (read(hold[0], &c, 1) != 1)
			_exit(127);	/* bpfprof gave up: never run untraced */
		e = run_as__become(&ra);
		/* The parent-death signal must not outlive the hold (and is reset by setuid). */
		prctl(PR_SET_PDEATHSIG, 0);
		if (!e) {
			execv(path, argv);
			e = -errno;
		}
		e = -e;
		if (write(errp[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(hold[0]);
	close(errp[1]);
	l->pid = pid;
	l->release_fd = hold[1];
	l->err_fd = errp[0];
	run_as__free(&ra);
	return 0;
cleanup:
	run_as__free(&ra);
	if (hold[0] >= 0) {
		close(hold[0]);
		close(hold[1]);
	}
	if (errp[0] >= 0) {
		close(errp[0]);
		close(errp[1]);
	}
	l->path = NULL;
	return err;
}

int launch__release(struct launch *l)
{
	char c = 1;
	int e = 0;
	ssize_t n;

	if (write(l->release_fd, &c, 1) != 1)
		return -errno;
	close(l->release_fd);
	l->release_fd = -1;
	/* EOF: exec succeeded (the pipe was close-on-exec); otherwise the child's errno. */
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == sizeof(e))
		return -e;
	return 0;
}

void launch__abort(struct launch *l)
{
	if (l->pid > 0 && l->release_fd >= 0) {
		kill(l->pid, SIGKILL);
		waitpid(l->pid, NULL, 0);
		l->pid = 0;
	}
}

void launch__free(struct launch *l)
{
	if (l->release_fd >= 0)
		close(l->release_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	free(l->path);
	memset(l, 0, sizeof(*l));
	l->release_fd = l->err_fd = -1;
}

int launch__pid_exe(pid_t pid, char **path)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	buf[n] = 0;
	if (strstr(buf, " (deleted)") || access(buf, R_OK))
		*path = xstrdup(link);
	else
		*path = xstrdup(buf);
	return 0;
}
