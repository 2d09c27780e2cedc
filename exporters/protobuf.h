/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A minimal protocol buffers encoder: just the wire format pprof and
 * Perfetto need (varints, fixed64, length-delimited fields, packed repeated
 * integers).  No schema compiler and no library: the schemas are small and
 * stable, and their field numbers live as constants beside the exporter that
 * uses them (pprof.c, perfetto.c).
 *
 * Messages are built bottom-up: a nested message is encoded into its own
 * buffer first, then appended to its parent with its length in front.
 */
#ifndef BPFPROF_PROTOBUF_H
#define BPFPROF_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

/* Wire types (the low three bits of a tag). */
#define PB_VARINT	0
#define PB_I64		1
#define PB_LEN		2

struct pb_buf {
	uint8_t *data;
	size_t len, cap;
};

/* Empties the buffer, keeping its memory for the next message. */
static inline void pb_reset(struct pb_buf *b)
{
	b->len = 0;
}

void pb_free(struct pb_buf *b);
void pb_raw(struct pb_buf *b, const void *p, size_t n);
/* Base-128 varint, least significant group first; an int64 is its two's complement. */
void pb_varint(struct pb_buf *b, uint64_t v);
void pb_tag(struct pb_buf *b, uint32_t field, unsigned int wire);
/* A varint field.  proto3 omits zero scalars: callers that must not, use pb_tag + pb_varint. */
void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v);
/* A length-delimited field (string, bytes); written even when empty. */
void pb_bytes(struct pb_buf *b, uint32_t field, const void *p, size_t n);
void pb_str(struct pb_buf *b, uint32_t field, const char *s);
/* A nested message already encoded in `sub`. */
void pb_msg(struct pb_buf *b, uint32_t field, const struct pb_buf *sub);
/* A packed repeated varint field (omitted when n is 0). */
void pb_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);
/* Bytes a varint of v takes: 1..10. */
size_t pb_varint_len(uint64_t v);
/* A fixed64 field (little-endian, 8 bytes), written even when zero. */
void pb_fixed64(struct pb_buf *b, uint32_t field, uint64_t v);
/* Makes room for n more bytes; returns where they go (the caller bumps len). */
uint8_t *pb_space(struct pb_buf *b, size_t n);

/*
 * The same encoding into a caller's array, for hot paths that build a small
 * message on the stack (at most 10 bytes per varint): returns the new end.
 */
static inline uint8_t *pb_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint8_t *pb_put_tag(uint8_t *p, uint32_t field, unsigned int wire)
{
	return pb_put_varint(p, (uint64_t)field << 3 | wire);
}

#endif
