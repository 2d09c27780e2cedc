// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Per-client connection caps and request deadlines of the HTTP servers (see slots.h). */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include "slots.h"
#include "base/log.h"
#include "base/util.h"

/* A client: a local user, or a remote address. */
struct client {
	bool local;
	uid_t uid;
	int family;
	unsigned char addr[16];
};

struct slot {
	struct slot *prev, *next;
	struct slots *owner;
	int fd;
	struct client who;
	uint64_t since;		/* CLOCK_MONOTONIC ns the request is awaited from; 0: it is in */
	bool cut;		/* shut down by us: no longer counted */
};

struct slots {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t reaper;
	bool stop;
	struct slot *head;
};

static bool same_client(const struct client *a, const struct client *b)
{
	if (a->local != b->local)
		return false;
	if (a->local)
		return a->uid == b->uid;
	return a->family == b->family && !memcmp(a->addr, b->addr, sizeof(a->addr));
}

/* An IPv4 address of `ss` (also when IPv4-mapped in IPv6) into a4: true. */
static bool ipv4_of(const struct sockaddr_storage *ss, unsigned char a4[4])
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET) {
		memcpy(a4, &((const struct sockaddr_in *)ss)->sin_addr, 4);
		return true;
	}
	if (ss->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		memcpy(a4, s6->sin6_addr.s6_addr + 12, 4);
		return true;
	}
	return false;
}

static uint16_t port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_port;
	return ((const struct sockaddr_in6 *)ss)->sin6_port;
}

/*
 * The owner of the socket at the other end of the TCP connection `fd`, when
 * that socket is on this machine: the kernel's socket table looked up by
 * the connection's two ends, seen from the client (sock_diag needs no
 * privilege).  0, -ENOENT (a remote client, or one gone) or -errno.
 */
static int peer_uid(int fd, const struct sockaddr_storage *peer, uid_t *uid)
{
	struct sockaddr_storage me;
	socklen_t len = sizeof(me);
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req;
	union {
		struct nlmsghdr nh;
		char buf[8192];
	} resp;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	unsigned char p4[4], m4[4];
	struct nlmsghdr *nh;
	int s, err = -ENOENT;
	ssize_t n;

	if (getsockname(fd, (struct sockaddr *)&me, &len))
		return -errno;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	req.r.id.idiag_sport = port_of(peer);
	req.r.id.idiag_dport = port_of(&me);
	req.r.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (ipv4_of(peer, p4) && ipv4_of(&me, m4)) {
		req.r.sdiag_family = AF_INET;
		memcpy(req.r.id.idiag_src, p4, 4);
		memcpy(req.r.id.idiag_dst, m4, 4);
	} else if (peer->ss_family == AF_INET6 && me.ss_family == AF_INET6) {
		req.r.sdiag_family = AF_INET6;
		memcpy(req.r.id.idiag_src, &((const struct sockaddr_in6 *)peer)->sin6_addr, 16);
		memcpy(req.r.id.idiag_dst, &((struct sockaddr_in6 *)&me)->sin6_addr, 16);
	} else {
		return -EAFNOSUPPORT;
	}
	s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (s < 0)
		return -errno;
	/* the kernel answers within sendto: the reply is queued when it returns */
	if (sendto(s, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		err = -errno;
		goto out;
	}
	n = recv(s, &resp, sizeof(resp), MSG_DONTWAIT);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	for (nh = &resp.nh; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
		if (nh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			err = e->error ? e->error : -ENOENT;
			break;
		}
		if (nh->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		    nh->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
			*uid = ((const struct inet_diag_msg *)NLMSG_DATA(nh))->idiag_uid;
			err = 0;
			break;
		}
	}
out:
	close(s);
	return err;
}

static void identify(int fd, struct client *who)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	unsigned char a4[4];

	memset(who, 0, sizeof(*who));
	if (getpeername(fd, (struct sockaddr *)&peer, &len))
		return;		/* gone already: one anonymous client */
	if (peer_uid(fd, &peer, &who->uid) == 0) {
		who->local = true;
		return;
	}
	if (ipv4_of(&peer, a4)) {
		who->family = AF_INET;
		memcpy(who->addr, a4, 4);
	} else if (peer.ss_family == AF_INET6) {
		who->family = AF_INET6;
		memcpy(who->addr, &((struct sockaddr_in6 *)&peer)->sin6_addr, 16);
	}
}

static void cut(struct slot *sl, const char *why)
{
	/* under the lock: libmicrohttpd closes the fd only after telling us (CLOSED) */
	shutdown(sl->fd, SHUT_RDWR);
	sl->cut = true;
	if (sl->who.local)
		p_dbg("http: closed a connection of uid %u: %s", (unsigned)sl->who.uid, why);
	else
		p_dbg("http: closed a connection of a remote client: %s", why);
}

void slots__notify(void *cls, struct MHD_Connection *c, void **socket_context,
		   enum MHD_ConnectionNotificationCode code)
{
	struct slots *s = cls;
	struct slot *sl = *socket_context, *o;
	const union MHD_ConnectionInfo *ci;
	unsigned int held = 0;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (!sl)
			return;
		pthread_mutex_lock(&s->lock);
		if (sl->prev)
			sl->prev->next = sl->next;
		else
			s->head = sl->next;
		if (sl->next)
			sl->next->prev = sl->prev;
		pthread_mutex_unlock(&s->lock);
		free(sl);
		*socket_context = NULL;
		return;
	}
	if (code != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci)
		return;
	sl = calloc(1, sizeof(*sl));
	if (!sl)
		return;
	sl->owner = s;
	sl->fd = ci->connect_fd;
	identify(sl->fd, &sl->who);
	sl->since = now_ns(CLOCK_MONOTONIC);
	pthread_mutex_lock(&s->lock);
	for (o = s->head; o; o = o->next)
		held += !o->cut && same_client(&o->who, &sl->who);
	sl->next = s->head;
	if (s->head)
		s->head->prev = sl;
	s->head = sl;
	if (held >= SLOTS_PER_CLIENT)
		cut(sl, "it holds too many already");
	pthread_mutex_unlock(&s->lock);
	*socket_context = sl;
}

static struct slot *slot_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void slots__request_in(struct MHD_Connection *c)
{
	struct slot *sl = slot_of(c);

	if (!sl)
		return;
	pthread_mutex_lock(&sl->owner->lock);
	sl->since = 0;
	pthread_mutex_unlock(&sl->owner->lock);
}

void slots__request_done(struct MHD_Connection *c)
{
	struct slot *sl = slot_of(c);

	if (!sl)
		return;
	pthread_mutex_lock(&sl->owner->lock);
	sl->since = now_ns(CLOCK_MONOTONIC);
	pthread_mutex_unlock(&sl->owner->lock);
}

/* Once a second: shut the connections whose request is late. */
static void *reaper(void *arg)
{
	struct slots *s = arg;
	const uint64_t limit = SLOTS_REQUEST_S * 1000000000ull;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		struct timespec ts;
		uint64_t now;
		struct slot *sl;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
		now = now_ns(CLOCK_MONOTONIC);
		for (sl = s->head; sl; sl = sl->next)
			if (!sl->cut && sl->since && now - sl->since > limit)
				cut(sl, "no whole request in time");
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int slots__new(struct slots **out)
{
	struct slots *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* signals are the main thread's to take */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&s->reaper, NULL, reaper, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

void slots__free(struct slots *s)
{
	struct slot *sl;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->reaper, NULL);
	while ((sl = s->head)) {
		s->head = sl->next;
		free(sl);
	}
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
