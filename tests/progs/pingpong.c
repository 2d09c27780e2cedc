// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pingpong pipe|cond [N]: a producer hands N messages (default 20) to a
 * consumer, over a pipe to a forked child process ("pipe") or through a
 * mutex + condition variable to a second thread ("cond").
 *
 * Before each message the producer waits until the consumer is asleep
 * (its /proc/.../status state is 'S'), so every message wakes it: exactly N
 * wakeups from produce() (where the write/signal happens) to consume()
 * (where the consumer blocks), and produce() and consume() are called
 * exactly N times each.  The producer also forks/spawns from start_consumer().
 * Prints "pingpong: N messages, consumer tid T".
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;
static int fds[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int pending, done;
static volatile pid_t consumer_tid;

/* The scheduler state letter of the thread ('S': asleep), from its "State:" line. */
static char state_of(pid_t pid, pid_t tid)
{
	char path[64], line[128], state = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	while (fgets(line, sizeof(line), f) && sscanf(line, "State: %c", &state) != 1)
		;
	fclose(f);
	return state;
}

static void wait_asleep(pid_t pid, pid_t tid)
{
	struct timespec ts = { 0, 200000 };

	/* asleep twice in a row: blocked, not just passing through */
	while (state_of(pid, tid) != 'S' || (nanosleep(&ts, NULL), state_of(pid, tid) != 'S'))
		nanosleep(&ts, NULL);
}

/* consumer side: blocks until a message arrives */
TRACED int consume(int pipe_mode)
{
	char c;

	sink++;
	if (pipe_mode)
		return read(fds[0], &c, 1) == 1 ? c : -1;
	pthread_mutex_lock(&mu);
	while (!pending && !done)
		pthread_cond_wait(&cv, &mu);
	pending = 0;
	pthread_mutex_unlock(&mu);
	return 1;
}

/* producer side: this call wakes the consumer */
TRACED void produce(int pipe_mode, int i)
{
	char c = 'a' + i % 26;

	sink++;
	if (pipe_mode) {
		if (write(fds[1], &c, 1) != 1)
			exit(1);
		return;
	}
	pthread_mutex_lock(&mu);
	pending = 1;
	pthread_mutex_unlock(&mu);
	/* signalled after the unlock: the consumer never wakes into a held mutex */
	pthread_cond_signal(&cv);
}

static void *consumer_thread(void *arg)
{
	long n = (long)arg, i;

	consumer_tid = syscall(SYS_gettid);
	for (i = 0; i < n; i++)
		consume(0);
	return NULL;
}

TRACED pid_t start_consumer(int pipe_mode, long n, pthread_t *th)
{
	pid_t pid;
	long i;

	sink++;
	if (!pipe_mode) {
		pthread_create(th, NULL, consumer_thread, (void *)n);
		while (!consumer_tid)
			usleep(100);
		return getpid();
	}
	pid = fork();
	if (pid == 0) {
		close(fds[1]);
		for (i = 0; i < n; i++)
			consume(1);
		_exit(0);
	}
	consumer_tid = pid;
	return pid;
}

int main(int argc, char **argv)
{
	int pipe_mode = argc > 1 && !strcmp(argv[1], "pipe");
	long n = argc > 2 ? atol(argv[2]) : 20, i;
	pthread_t th;
	pid_t pid;

	if (argc < 2 || (strcmp(argv[1], "pipe") && strcmp(argv[1], "cond"))) {
		fprintf(stderr, "usage: pingpong pipe|cond [N]\n");
		return 2;
	}
	if (pipe(fds))
		return 1;
	pid = start_consumer(pipe_mode, n, &th);
	for (i = 0; i < n; i++) {
		wait_asleep(pid, consumer_tid);
		produce(pipe_mode, i);
	}
	if (pipe_mode) {
		waitpid(pid, NULL, 0);
	} else {
		pthread_mutex_lock(&mu);
		done = 1;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
		pthread_join(th, NULL);
	}
	printf("pingpong: %ld messages, consumer tid %d\n", n, consumer_tid);
	return 0;
}
