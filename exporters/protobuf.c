// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "protobuf.h"

void pb_free(struct pb_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static void reserve(struct pb_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;

	if (b->len + n <= b->cap)
		return;
	while (cap < b->len + n)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

uint8_t *pb_space(struct pb_buf *b, size_t n)
{
	reserve(b, n);
	return b->data + b->len;
}

void pb_raw(struct pb_buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

size_t pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

void pb_varint(struct pb_buf *b, uint64_t v)
{
	reserve(b, 10);
	while (v >= 0x80) {
		b->data[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->data[b->len++] = (uint8_t)v;
}

void pb_tag(struct pb_buf *b, uint32_t field, unsigned int wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_tag(b, field, PB_VARINT);
	pb_varint(b, v);
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *p, size_t n)
{
	pb_tag(b, field, PB_LEN);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

void pb_str(struct pb_buf *b, uint32_t field, const char *s)
{
	s = s ? s : "";
	pb_bytes(b, field, s, strlen(s));
}

void pb_msg(struct pb_buf *b, uint32_t field, const struct pb_buf *sub)
{
	pb_bytes(b, field, sub->data, sub->len);
}

void pb_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t i, len = 0;

	if (!n)
		return;
	/* The length comes first, so size the payload before writing it. */
	for (i = 0; i < n; i++)
		len += pb_varint_len(v[i]);
	pb_tag(b, field, PB_LEN);
	pb_varint(b, len);
	for (i = 0; i < n; i++)
		pb_varint(b, v[i]);
}

void pb_fixed64(struct pb_buf *b, uint32_t field, uint64_t v)
{
	int i;

	pb_tag(b, field, PB_I64);
	reserve(b, 8);
	for (i = 0; i < 8; i++)
		b->data[b->len++] = (uint8_t)(v >> (8 * i));
}
