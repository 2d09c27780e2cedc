/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Python frames in the decoder (python.c); internal to user/decode/. */
#ifndef BPFPROF_DECODE_PYTHON_H
#define BPFPROF_DECODE_PYTHON_H

#include <stdint.h>
#include "bpf/events.h"

struct decoder;

int dec_on_pycode(struct decoder *d, const struct bp_rec_pycode *r);
/* Tells d->py_drop every code object named so far of the (dropped) Python function func. */
void dec_py_drop_codes(struct decoder *d, uint32_t func);
int dec_on_py(struct decoder *d, const struct bp_rec_py *r, uint64_t ts);
void dec_py_free(struct decoder *d);
int dec_on_pystack(struct decoder *d, const struct bp_rec_pystack *r, size_t size, uint64_t ts);
struct tstate;
/* The process exec'd: look at it again when it is sampled. */
void dec_py_forget_process(struct decoder *d, uint32_t pid);
/* The sampled stack `path` of t with its interpreter frames replaced by the Python frames. */
uint32_t dec_py_splice(struct decoder *d, struct tstate *t, uint32_t pid, uint32_t path);

#endif
