/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Python frames in the decoder (python.c); internal to user/decode/. */
#ifndef BPFPROF_DECODE_PYTHON_H
#define BPFPROF_DECODE_PYTHON_H

#include <stdint.h>
#include "bpf/events.h"

struct decoder;

int dec_on_pycode(struct decoder *d, const struct bp_rec_pycode *r);
int dec_on_py(struct decoder *d, const struct bp_rec_py *r, uint64_t ts);
void dec_py_free(struct decoder *d);

#endif
