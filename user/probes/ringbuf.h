/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Consumer side of a BPF ring buffer map, mapped directly.
 *
 * libbpf's ring_buffer__consume() publishes the consumer position after
 * every record.  The producer (the uprobe programs, on the traced thread's
 * CPU) reads that position in every reserve, so a consumer draining on the
 * other CPU moved its cache line across on every record: measured here,
 * ~60 ns added to each traced event, as much as the record itself costs.
 * This consumer publishes its position once per drain (and every quarter
 * of the buffer inside a long one), so the line stays shared.
 */
#ifndef BPFPROF_RINGBUF_H
#define BPFPROF_RINGBUF_H

#include <stdbool.h>
#include <stddef.h>

struct bp_ringbuf;

/* Called for each record; a negative return stops the drain (the record counts as read). */
typedef int (*ringbuf_fn)(void *ctx, const void *data, size_t size);

/* Maps the ring buffer map `map_fd`; -errno on failure. */
int ringbuf__new(int map_fd, struct bp_ringbuf **out);
/*
 * Hands up to `max` records to fn, oldest first.  Returns the number handed
 * over, or fn's negative return.
 */
long ringbuf__consume(struct bp_ringbuf *r, ringbuf_fn fn, void *ctx, size_t max);
/* Bytes written by the producers and not consumed yet. */
size_t ringbuf__pending(const struct bp_ringbuf *r);
/*
 * Sleeps up to timeout_ms, less when a record was submitted with a wakeup;
 * true if one was.
 */
bool ringbuf__wait(struct bp_ringbuf *r, int timeout_ms);
void ringbuf__free(struct bp_ringbuf *r);

#endif
