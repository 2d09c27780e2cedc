/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Several archives (runs, hosts) into one recording on one time axis,
 * written by any exporter.  See merge.c for how tables, times and ids are
 * reconciled.
 */
#ifndef BPFPROF_MERGE_H
#define BPFPROF_MERGE_H

#include <stddef.h>
#include "exporters/exporter.h"

/* 0 or -errno (printed). */
int merge__run(const char *const *paths, size_t n, const struct exporter_ops *ops,
	       const char *output);

#endif
