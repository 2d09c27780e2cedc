// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * closer: descriptors given to it are all closed, each by a thread of its
 * own, every one at once: none waits for another's close (base/closer.c).  A close that lasts is
 * made with TCP sockets on 127.0.0.1 whose peer reads nothing: with
 * SO_LINGER set, their close waits until the peer goes.  No timing is
 * asserted: what must happen is waited for, with a far deadline.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "base/closer.h"

#define MANY	300
#define SLOW	40

static void nap(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/* How many closes the closer has going now: its threads but the first, and processes. */
static int closing(pid_t pid)
{
	char path[64], buf[8192];
	int fd, n = 0;
	ssize_t r;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = 0;
	for (char *p = buf; *p; p++)
		n += *p == ' ';
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

/* Every descriptor given is closed: the read ends of MANY pipes see EOF. */
static void test_every_descriptor_closed(void **state)
{
	struct closer c;
	int rd[MANY], i, p[2];

	(void)state;
	assert_int_equal(closer__start(&c), 0);
	for (i = 0; i < MANY; i++) {
		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
		rd[i] = p[0];
		assert_int_equal(closer__give(&c, p[1]), 0);
		close(p[1]);
		closer__given(&c);
	}
	closer__stop(&c);
	for (i = 0; i < MANY; i++) {
		struct pollfd pf = { .fd = rd[i], .events = POLLIN };
		char b;

		assert_int_equal(poll(&pf, 1, 120000), 1);
		assert_int_equal(read(rd[i], &b, 1), 0);	/* EOF: closed */
		close(rd[i]);
	}
	waitpid(c.pid, NULL, 0);
}

/* A listening socket on 127.0.0.1 (its address in *a) with a small receive buffer. */
static int listener(struct sockaddr_in *a, int backlog)
{
	socklen_t al = sizeof(*a);
	int lis, small = 4096;

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lis = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lis >= 0);
	setsockopt(lis, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	assert_int_equal(bind(lis, (struct sockaddr *)a, sizeof(*a)), 0);
	assert_int_equal(getsockname(lis, (struct sockaddr *)a, &al), 0);
	assert_int_equal(listen(lis, backlog), 0);
	return lis;
}

/* A connected pair on 127.0.0.1 whose client's close lingers: the peer
 * reads nothing, both buffers are full, SO_LINGER waits up to 10 minutes. */
static void lingering_pair(int lis, struct sockaddr_in *a, int *cl, int *sv)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 600 };
	char junk[4096];
	int small = 4096, fl;

	*cl = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(*cl >= 0);
	setsockopt(*cl, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	assert_int_equal(connect(*cl, (struct sockaddr *)a, sizeof(*a)), 0);
	*sv = accept4(lis, NULL, NULL, SOCK_CLOEXEC);
	assert_true(*sv >= 0);
	memset(junk, 'x', sizeof(junk));
	fl = fcntl(*cl, F_GETFL);
	fcntl(*cl, F_SETFL, fl | O_NONBLOCK);
	while (write(*cl, junk, sizeof(junk)) > 0)
		;
	assert_int_equal(errno, EAGAIN);
	fcntl(*cl, F_SETFL, fl);
	assert_int_equal(setsockopt(*cl, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
}

/*
 * SLOW closes that last: all of them are going at once, none waits for
 * another (a uprobe link waiting its turn keeps its probes), and all end
 * once the peers go.
 */
static void test_every_close_at_once(void **state)
{
	struct sockaddr_in a;
	int lis, sv[SLOW], i, n, most = 0;
	struct closer c;

	(void)state;
	lis = listener(&a, SLOW);
	assert_int_equal(closer__start(&c), 0);
	for (i = 0; i < SLOW; i++) {
		int cl;

		lingering_pair(lis, &a, &cl, &sv[i]);
		assert_int_equal(closer__give(&c, cl), 0);
		close(cl);	/* not the last copy: returns at once */
		closer__given(&c);
	}
	/* every close comes, while none has ended */
	for (i = 0; i < 6000 && most < SLOW; i++, nap()) {
		n = closing(c.pid);
		assert_true(n >= 0);
		most = n > most ? n : most;
	}
	assert_int_equal(most, SLOW);
	/* the peers go (a reset): the closes end, the waiting ones follow */
	for (i = 0; i < SLOW; i++) {
		struct linger rst = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(sv[i], SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
		close(sv[i]);
	}
	closer__stop(&c);
	waitpid(c.pid, NULL, 0);	/* unless closer__stop reaped it */
	close(lis);
}

static void *close_it(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

/*
 * The caller's close is never the last, however late it comes: the closer
 * keeps its copy until closer__given.  The caller closes a lingering socket
 * long after giving it (the closer had all that time to close its copy
 * first); that close must return while the peer still holds the data (a
 * last close would wait for the peer, up to 10 minutes).
 */
static void test_caller_close_never_the_last(void **state)
{
	struct sockaddr_in a;
	struct linger rst = { .l_onoff = 1, .l_linger = 0 };
	int lis, cl, sv, i;
	struct closer c;
	pthread_t t;
	bool done = false;

	(void)state;
	lis = listener(&a, 1);
	assert_int_equal(closer__start(&c), 0);
	lingering_pair(lis, &a, &cl, &sv);
	assert_int_equal(closer__give(&c, cl), 0);
	for (i = 0; i < 25; i++)
		nap();	/* half a second: an eager closer has closed its copy by now */
	assert_int_equal(pthread_create(&t, NULL, close_it, (void *)(intptr_t)cl), 0);
	for (i = 0; i < 3000 && !done; i++, nap())
		done = !pthread_tryjoin_np(t, NULL);
	/* (on failure: the peer goes, so the close ends and the thread is joined) */
	setsockopt(sv, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
	close(sv);
	if (!done)
		pthread_join(t, NULL);
	assert_true(done);
	closer__given(&c);
	closer__stop(&c);
	waitpid(c.pid, NULL, 0);
	close(lis);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_descriptor_closed),
		cmocka_unit_test(test_every_close_at_once),
		cmocka_unit_test(test_caller_close_never_the_last),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
