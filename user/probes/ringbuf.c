// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BPF ring buffer as the kernel lays it out for mmap (include/uapi/
 * linux/bpf.h, kernel/bpf/ringbuf.c): one page holding the consumer
 * position (the only page user space may write), then one page holding the
 * producer position, then the data pages mapped twice in a row so that a
 * record crossing the end reads as contiguous.  Each record starts with an
 * 8-byte header: a 32-bit length whose top bit says "still being written"
 * and next bit "discarded", then the kernel's page offset; records are
 * 8-byte aligned.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "base/log.h"
#include "ringbuf.h"

#define RB_BUSY		(1u << 31)
#define RB_DISCARD	(1u << 30)
#define RB_HDR		8u

struct bp_ringbuf {
	unsigned long *consumer;	/* rw page */
	const unsigned long *producer;	/* ro: producer page, then the data twice */
	const unsigned char *data;
	size_t size;			/* data bytes, a power of two */
	size_t page;
	int epfd;
};

int ringbuf__new(int map_fd, struct bp_ringbuf **out)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	struct bp_ringbuf *r;
	/*
	 * Edge-triggered: the map polls readable whenever data is pending, but
	 * records wait for a large enough drain; only a wakeup should end a wait.
	 */
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	void *p;
	int err;

	memset(&info, 0, sizeof(info));
	if (bpf_map_get_info_by_fd(map_fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1)))
		return -EINVAL;
	r = xcalloc(1, sizeof(*r));
	r->size = info.max_entries;
	r->page = sysconf(_SC_PAGESIZE);
	r->epfd = -1;
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	r->consumer = p;
	p = mmap(NULL, r->page + 2 * r->size, PROT_READ, MAP_SHARED, map_fd, r->page);
	if (p == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	r->producer = p;
	r->data = (const unsigned char *)p + r->page;
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0 || epoll_ctl(r->epfd, EPOLL_CTL_ADD, map_fd, &ev)) {
		err = -errno;
		goto fail;
	}
	*out = r;
	return 0;
fail:
	ringbuf__free(r);
	return err;
}

long ringbuf__consume(struct bp_ringbuf *r, ringbuf_fn fn, void *ctx, size_t max)
{
	unsigned long cons = __atomic_load_n(r->consumer, __ATOMIC_RELAXED);
	unsigned long prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
	unsigned long published = cons;
	size_t mask = r->size - 1;
	long n = 0;
	int err = 0;

	while (n < (long)max) {
		const __u32 *hdr;
		__u32 len;

		if (cons == prod) {
			prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
			if (cons == prod)
				break;
		}
		hdr = (const __u32 *)(r->data + (cons & mask));
		len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		if (len & RB_BUSY)
			break;	/* reserved, not committed yet: the order is the reserve order */
		if (!(len & RB_DISCARD)) {
			size_t size = len & ~(RB_BUSY | RB_DISCARD);

			n++;
			err = fn(ctx, (const unsigned char *)hdr + RB_HDR, size);
		}
		cons += (RB_HDR + (len & ~(RB_BUSY | RB_DISCARD)) + 7) & ~7ul;
		if (err)
			break;
		/* room for the producers inside a long drain */
		if (cons - published >= r->size / 4) {
			__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
			published = cons;
		}
	}
	if (cons != published)
		__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
	return err ? err : n;
}

size_t ringbuf__pending(const struct bp_ringbuf *r)
{
	return __atomic_load_n(r->producer, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(r->consumer, __ATOMIC_RELAXED);
}

bool ringbuf__wait(struct bp_ringbuf *r, int timeout_ms)
{
	struct epoll_event ev;

	return epoll_wait(r->epfd, &ev, 1, timeout_ms) > 0;
}

void ringbuf__free(struct bp_ringbuf *r)
{
	if (!r)
		return;
	if (r->consumer)
		munmap(r->consumer, r->page);
	if (r->producer)
		munmap((void *)r->producer, r->page + 2 * r->size);
	if (r->epfd >= 0)
		close(r->epfd);
	free(r);
}
