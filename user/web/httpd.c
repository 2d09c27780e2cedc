// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* HTTP plumbing shared by `view` and `serve` (see httpd.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "httpd.h"
#include "slots.h"
#include "base/log.h"

struct httpd {
	struct MHD_Daemon *d;
	struct slots *slots;
	MHD_RequestCompletedCallback done;	/* the caller's */
	void *cls;
};

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
	return false;
}

static void set_port(struct httpd_addr *a, uint16_t port)
{
	a->port = port;
	if (a->ss.ss_family == AF_INET)
		((struct sockaddr_in *)&a->ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&a->ss)->sin6_port = htons(port);
}

void httpd__loopback(struct httpd_addr *a, uint16_t port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&a->ss;

	memset(a, 0, sizeof(*a));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a->len = sizeof(*sin);
	a->loopback = true;
	set_port(a, port);
}

static int parse_port(const char *s, uint16_t *port)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v > 65535 || s[0] == '-' || s[0] == '+')
		return -EINVAL;
	*port = v;
	return 0;
}

int httpd__parse_listen(const char *opt, const char *arg, struct httpd_addr *a)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	char *copy = xstrdup(arg), *host = copy, *colon;
	uint16_t port;
	int err = -EINVAL, gai;

	if (host[0] == '[') {
		colon = strstr(host, "]:");
		if (!colon)
			goto bad;
		*colon = 0;
		host++;
		colon++;
	} else {
		colon = strrchr(host, ':');
		if (!colon) {
			/* a bare port */
			if (parse_port(host, &port))
				goto bad;
			httpd__loopback(a, port);
			err = 0;
			goto out;
		}
		*colon = 0;
	}
	if (parse_port(colon + 1, &port))
		goto bad;
	if (!*host) {
		httpd__loopback(a, port);
		err = 0;
		goto out;
	}
	gai = getaddrinfo(host, NULL, &hints, &res);
	if (gai || !res || res->ai_addrlen > sizeof(a->ss)) {
		p_err("%s '%s': cannot resolve '%s': %s", opt, arg, host,
		      gai ? gai_strerror(gai) : "no address");
		err = -EINVAL;
		goto out;
	}
	memset(a, 0, sizeof(*a));
	memcpy(&a->ss, res->ai_addr, res->ai_addrlen);
	a->len = res->ai_addrlen;
	a->loopback = is_loopback(&a->ss);
	set_port(a, port);
	err = 0;
	goto out;
bad:
	p_err("invalid %s '%s': want ADDR:PORT (e.g. 127.0.0.1:9464, [::1]:9464, :9464)", opt, arg);
out:
	if (res)
		freeaddrinfo(res);
	free(copy);
	return err;
}

static void addr_str(const struct httpd_addr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (a->ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&a->ss)->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]", ip);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)&a->ss)->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s", ip);
	}
}

void httpd__url(const struct httpd_addr *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN + 2];

	addr_str(a, host, sizeof(host));
	snprintf(buf, len, "http://%s:%u", host, a->port);
}

/* libmicrohttpd's own complaints, through our log (only with -v: they are about clients). */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	if (!verbose)
		return;
	fputs("bpfprof: debug: http: ", stderr);
	vfprintf(stderr, fmt, ap);
}

/* A request ended: the next one on its connection has its deadline; then the caller's. */
static void request_done(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct httpd *h = cls;

	slots__request_done(c);
	if (h->done)
		h->done(h->cls, c, con_cls, why);
}

int httpd__listen(struct httpd_addr *a)
{
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	char host[INET6_ADDRSTRLEN + 2];
	int fd;

	/* Bind here, so the error is ours to word (libmicrohttpd only logs it). */
	fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		p_err("cannot create a socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof(int));
	if (bind(fd, (struct sockaddr *)&a->ss, a->len) || listen(fd, 64)) {
		int e = errno;

		addr_str(a, host, sizeof(host));
		p_err("cannot listen on %s:%u: %s%s", host, a->port, strerror(e),
		      e == EADDRINUSE ? " (choose another port)" : "");
		close(fd);
		return -1;
	}
	if (!a->loopback) {
		addr_str(a, host, sizeof(host));
		p_warn("listening on %s:%u, not a loopback address: whoever can reach it "
		       "reads what bpfprof serves (no authentication, no TLS)", host, a->port);
	}
	/* port 0: the kernel chose one */
	if (!getsockname(fd, (struct sockaddr *)&bound, &blen))
		set_port(a, ntohs(bound.ss_family == AF_INET6 ?
				  ((struct sockaddr_in6 *)&bound)->sin6_port :
				  ((struct sockaddr_in *)&bound)->sin_port));
	return fd;
}

struct httpd *httpd__start(struct httpd_addr *a, int fd, unsigned int flags,
			   MHD_AccessHandlerCallback fn, void *cls,
			   MHD_RequestCompletedCallback done)
{
	struct httpd *h;
	int err;

	flags |= MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	if (!(flags & MHD_USE_THREAD_PER_CONNECTION))
		flags |= MHD_USE_AUTO;
	if (a->ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (fd < 0)
		fd = httpd__listen(a);
	if (fd < 0)
		return NULL;
	h = xcalloc(1, sizeof(*h));
	h->done = done;
	h->cls = cls;
	err = slots__new(&h->slots);
	if (err) {
		p_err("cannot start the HTTP server: %s", strerror(-err));
		goto fail;
	}
	/*
	 * 64 connections in all (a thread each), at most SLOTS_PER_CLIENT of
	 * them per user or remote address, each request whole within
	 * SLOTS_REQUEST_S (slots.h); 120 s without a byte closes one too.
	 */
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, fn, cls,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,	/* first: it says so otherwise */
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, 64u,
				MHD_OPTION_CONNECTION_TIMEOUT, 120u,
				MHD_OPTION_NOTIFY_CONNECTION, slots__notify, h->slots,
				MHD_OPTION_NOTIFY_COMPLETED, request_done, h,
				MHD_OPTION_END);
	if (!h->d) {
		p_err("cannot start the HTTP server (libmicrohttpd)");
		goto fail;
	}
	return h;
fail:
	slots__free(h->slots);
	free(h);
	close(fd);
	return NULL;
}

void httpd__stop(struct httpd *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	slots__free(h->slots);
	free(h);
}

/* "host" or "host:port" equal to one of ours. */
static bool host_matches(const char *h, const char *name, uint16_t port)
{
	size_t n = strlen(name);
	char p[8];

	if (strncasecmp(h, name, n))
		return false;
	if (!h[n])
		return true;
	snprintf(p, sizeof(p), ":%u", port);
	return !strcmp(h + n, p);
}

static bool host_ok(const struct httpd_addr *a, struct MHD_Connection *c, enum MHD_Result *ret)
{
	static const char *const names[] = { "localhost", "127.0.0.1", "[::1]" };
	const char *h;
	char mine[INET6_ADDRSTRLEN + 2];
	size_t i;

	if (!a->loopback)
		return true;
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	if (!h)
		return true;	/* HTTP/1.0: no Host, no name to rebind */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (host_matches(h, names[i], a->port))
			return true;
	addr_str(a, mine, sizeof(mine));
	if (host_matches(h, mine, a->port))
		return true;
	*ret = httpd__reply_text(c, 421, "bpfprof serves local clients only (Host: %s)", h);
	return false;
}

/* "http://HOST[:PORT]" of `url` equal to "http://" + host (the request's own Host)? */
static bool same_origin(const char *url, const char *host, bool prefix_only)
{
	size_t n = strlen(host);

	if (strncasecmp(url, "http://", 7) || strncasecmp(url + 7, host, n))
		return false;
	url += 7 + n;
	/* an Origin ends there; a Referer goes on with its path */
	return !*url || (prefix_only && (*url == '/' || *url == '?' || *url == '#'));
}

bool httpd__request_ok(const struct httpd_addr *a, struct MHD_Connection *c, enum MHD_Result *ret)
{
	const char *host, *origin, *site, *referer;

	slots__request_in(c);	/* its headers are in: the deadline is met */
	if (!host_ok(a, c, ret))
		return false;
	host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	site = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
	referer = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Referer");
	/*
	 * Browsers say where a request comes from; other clients say nothing.
	 * "same-site" is refused too: a page on another port of 127.0.0.1
	 * (someone else's local server) is the same site.
	 */
	if (site && strcasecmp(site, "same-origin") && strcasecmp(site, "none"))
		goto refuse;
	if (origin && (!host || !same_origin(origin, host, false)))
		goto refuse;
	if (referer && (!host || !same_origin(referer, host, true)))
		goto refuse;
	return true;
refuse:
	p_dbg("http: refused a cross-site request (Origin %s, Sec-Fetch-Site %s, Referer %s)",
	      origin ?: "-", site ?: "-", referer ?: "-");
	*ret = httpd__reply_text(c, 403, "bpfprof answers no request from another site's page");
	return false;
}

bool httpd__client_gone(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci;
	struct pollfd p;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci)
		return false;
	p.fd = ci->connect_fd;
	p.events = POLLRDHUP;
	p.revents = 0;
	if (poll(&p, 1, 0) <= 0)
		return false;
	return p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL);
}

int httpd__token_new(char token[HTTPD_TOKEN_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[HTTPD_TOKEN_LEN / 2];
	size_t got = 0, i;
	ssize_t n;

	while (got < sizeof(r)) {
		n = getrandom(r + got, sizeof(r) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += n;
	}
	for (i = 0; i < sizeof(r); i++) {
		token[2 * i] = hex[r[i] >> 4];
		token[2 * i + 1] = hex[r[i] & 15];
	}
	token[HTTPD_TOKEN_LEN] = 0;
	return 0;
}

const char *httpd__strip_token(const char *url, const char *token)
{
	unsigned char diff = 0;
	size_t i;

	if (url[0] != '/' || strnlen(url + 1, HTTPD_TOKEN_LEN) != HTTPD_TOKEN_LEN)
		return NULL;
	/* every byte compared: the time says nothing about how much matched */
	for (i = 0; i < HTTPD_TOKEN_LEN; i++)
		diff |= (unsigned char)url[1 + i] ^ (unsigned char)token[i];
	if (diff)
		return NULL;
	url += 1 + HTTPD_TOKEN_LEN;
	return *url == '/' || !*url ? url : NULL;
}

static enum MHD_Result queue(struct MHD_Connection *c, unsigned int status, const char *ctype,
			     struct MHD_Response *r)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	if (ctype)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result httpd__reply(struct MHD_Connection *c, unsigned int status, const char *ctype,
			     const void *buf, size_t len)
{
	return queue(c, status, ctype,
		     MHD_create_response_from_buffer(len, (void *)buf, MHD_RESPMEM_MUST_COPY));
}

enum MHD_Result httpd__reply_take(struct MHD_Connection *c, unsigned int status,
				  const char *ctype, void *buf, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);

	if (!r)
		free(buf);
	return queue(c, status, ctype, r);
}

enum MHD_Result httpd__reply_text(struct MHD_Connection *c, unsigned int status,
				  const char *fmt, ...)
{
	va_list ap;
	size_t n;
	char *buf;

	va_start(ap, fmt);
	buf = xvasprintf(fmt, ap);
	va_end(ap);
	n = strlen(buf);
	buf = xrealloc(buf, n + 2);
	buf[n++] = '\n';
	buf[n] = 0;
	return httpd__reply_take(c, status, "text/plain; charset=utf-8", buf, n);
}

enum MHD_Result httpd__reply_fd(struct MHD_Connection *c, unsigned int status, const char *ctype,
				int fd, const char *filename, uint64_t dropped)
{
	struct MHD_Response *r;
	struct stat st;

	if (fstat(fd, &st)) {
		close(fd);
		return httpd__reply_text(c, 500, "cannot read the file: %s", strerror(errno));
	}
	r = MHD_create_response_from_fd((uint64_t)st.st_size, fd);	/* owns fd */
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	if (filename) {
		char disp[300];

		snprintf(disp, sizeof(disp), "attachment; filename=\"%s\"", filename);
		MHD_add_response_header(r, "Content-Disposition", disp);
	}
	if (dropped) {
		char n[24];

		snprintf(n, sizeof(n), "%llu", (unsigned long long)dropped);
		MHD_add_response_header(r, "X-Bpfprof-Dropped-Calls", n);
	}
	return queue(c, status, ctype, r);
}

const char *httpd__mime(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "application/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".json", "application/json" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".ico", "image/x-icon" },
		{ ".wasm", "application/wasm" },
		{ ".woff2", "font/woff2" },
		{ ".txt", "text/plain; charset=utf-8" },
		{ ".md", "text/plain; charset=utf-8" },
	};
	size_t n = strlen(name), i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t e = strlen(types[i].ext);

		if (n >= e && !strcasecmp(name + n - e, types[i].ext))
			return types[i].type;
	}
	return "application/octet-stream";
}
