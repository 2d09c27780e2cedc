/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Who may hold the connections of `view` and `serve` (see httpd.h).
 *
 * A loopback port is open to every local user, and a connection takes one
 * of the server's slots (and a thread) before its request's token, Host or
 * origin can be checked: idle or half-sent requests from one user would
 * hold them all, and the user the server is for would wait for minutes.
 * So, on top of libmicrohttpd's total and its idle timeout:
 *
 *   - one client holds at most SLOTS_PER_CLIENT connections.  A local
 *     client is the user owning the connecting socket (the kernel's
 *     sock_diag says whose it is): every local client comes from 127.0.0.1,
 *     so a cap per address would let one user lock out the others.  A
 *     remote client is its address.  A connection above the cap is shut
 *     down as soon as it is accepted;
 *   - a request must arrive whole (its headers) within SLOTS_REQUEST_S of
 *     the connection, or of the previous reply on it, however its bytes
 *     trickle in (each byte restarts the idle timeout, not this one);
 *     the connection is shut down otherwise.  The time a handler then takes
 *     (serve's captures wait for their window) is not bounded here.
 */
#ifndef BPFPROF_SLOTS_H
#define BPFPROF_SLOTS_H

#include <microhttpd.h>

#define SLOTS_PER_CLIENT	16
#define SLOTS_REQUEST_S		10

struct slots;

/* Starts the thread that enforces the deadline.  0 or -errno. */
int slots__new(struct slots **out);
/* After MHD_stop_daemon (every connection closed).  NULL is fine. */
void slots__free(struct slots *s);

/* MHD_OPTION_NOTIFY_CONNECTION's callback, with `cls` the slots. */
void slots__notify(void *cls, struct MHD_Connection *c, void **socket_context,
		   enum MHD_ConnectionNotificationCode code);
/* The request's headers are in (its handler runs): its deadline is met. */
void slots__request_in(struct MHD_Connection *c);
/* Its reply is done: the next request on the connection has its deadline. */
void slots__request_done(struct MHD_Connection *c);

#endif
