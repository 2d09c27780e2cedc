/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The little HTTP plumbing `view` and `serve` share, over libmicrohttpd:
 * parsing ADDR:PORT, starting a daemon on it (port 0: a free one), building
 * the URL to print, and replies from a buffer, a printf format or a file.
 *
 * A server on a loopback address also checks the Host header against the
 * addresses it listens on, so a web page elsewhere cannot reach it through
 * DNS rebinding (a name of theirs that resolves to 127.0.0.1): what these
 * servers hand out, traces of local processes, stays with local clients.
 *
 * Loopback is not a wall against web pages: a page on any site can make the
 * browser send a GET to 127.0.0.1 (`<img src=...>`), and a GET of serve's
 * /capture starts a capture.  So every request a browser marks as coming
 * from another origin (Origin, Sec-Fetch-Site, Referer) is refused; clients
 * that are not browsers (curl, Prometheus) send none of these and pass.
 */
#ifndef BPFPROF_HTTPD_H
#define BPFPROF_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

struct httpd_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	uint16_t port;		/* the port bound (after httpd__start with port 0) */
	bool loopback;
};

/*
 * "ADDR:PORT", "[V6ADDR]:PORT", ":PORT" (loopback) or "PORT" (loopback);
 * ADDR is numeric or a host name (its first address).  0 or -EINVAL
 * (printed, naming `opt`).
 */
int httpd__parse_listen(const char *opt, const char *arg, struct httpd_addr *a);
/* 127.0.0.1 and `port`. */
void httpd__loopback(struct httpd_addr *a, uint16_t port);

/*
 * Binds and listens on `a` (a->port set to the port bound): the socket, or
 * -1 with the reason printed.  Connections wait in its backlog until
 * httpd__start() serves them.
 */
int httpd__listen(struct httpd_addr *a);
/*
 * Starts a daemon on `a` with one internal thread (plus `flags`, e.g.
 * MHD_USE_THREAD_PER_CONNECTION) on fd (httpd__listen(); taken, closed on
 * failure too), or on a socket of its own when fd is -1, and sets a->port
 * to the port bound.
 * `done` (may be NULL) is called when a request ends, to free what the
 * handler kept in *con_cls.  No client holds more than its share of the
 * connections, and a request must come whole in time (slots.h).  NULL on
 * failure, with the reason printed.
 */
struct httpd;
struct httpd *httpd__start(struct httpd_addr *a, int fd, unsigned int flags,
			   MHD_AccessHandlerCallback fn, void *cls,
			   MHD_RequestCompletedCallback done);
/* Stops the server: waits for the requests running.  NULL is fine. */
void httpd__stop(struct httpd *h);
/* "http://127.0.0.1:8080" into buf. */
void httpd__url(const struct httpd_addr *a, char *buf, size_t len);

/*
 * False, with the refusal queued in *ret, when the request must not be
 * served: the server listens on loopback and the request's Host names
 * something else (421), or a browser sent it for a page of another origin
 * (403): an Origin that is not http://<its Host>, a Sec-Fetch-Site other
 * than same-origin/none (a same-site page on another port of 127.0.0.1 is
 * refused too), a Referer of another origin.  Call first in every handler.
 */
bool httpd__request_ok(const struct httpd_addr *a, struct MHD_Connection *c,
		       enum MHD_Result *ret);

/*
 * True when the client of `c` has closed its end (or the connection
 * broke): a request that waits (serve's captures) gives up.  A client that
 * only shuts down its sending side counts as gone.
 */
bool httpd__client_gone(struct MHD_Connection *c);

/*
 * The secret path prefix of a server any local user could otherwise read
 * (a loopback port is open to every user of the machine): 32 hex digits
 * from getrandom().  0 or -errno.
 */
#define HTTPD_TOKEN_LEN 32
int httpd__token_new(char token[HTTPD_TOKEN_LEN + 1]);
/*
 * url without its "/TOKEN" prefix ("/x" for "/TOKEN/x", "" for "/TOKEN"),
 * or NULL when the prefix is not there (compared in constant time).
 */
const char *httpd__strip_token(const char *url, const char *token);

/* Replies with buf (copied), `len` bytes. */
enum MHD_Result httpd__reply(struct MHD_Connection *c, unsigned int status, const char *ctype,
			     const void *buf, size_t len);
/* Replies with buf and frees it afterwards (malloc'd). */
enum MHD_Result httpd__reply_take(struct MHD_Connection *c, unsigned int status,
				  const char *ctype, void *buf, size_t len);
/* A short text/plain reply, printf-style, with a final newline. */
enum MHD_Result httpd__reply_text(struct MHD_Connection *c, unsigned int status,
				  const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * Replies with the whole of fd (a regular file; closed when sent, or now
 * on failure), with an optional Content-Disposition file name, and when
 * `dropped` is not 0 an X-Bpfprof-Dropped-Calls header saying how many calls
 * a capture left out.
 */
enum MHD_Result httpd__reply_fd(struct MHD_Connection *c, unsigned int status, const char *ctype,
				int fd, const char *filename, uint64_t dropped);

/* Content type for a file name's ending ("application/javascript" ...). */
const char *httpd__mime(const char *name);

#endif
