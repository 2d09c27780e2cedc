/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Private to user/target/: the keeper's protocol between bpfprof's side
 * (keeper.c) and the keeper's process (keeper_proc.c).  bpfprof sends struct
 * kmsg over a SOCK_SEQPACKET pair and waits for struct kreply.  End of file
 * without KOP_END is bpfprof's death.
 */
#ifndef BPFPROF_TARGET_INTERNAL_H
#define BPFPROF_TARGET_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum { KOP_SEIZE = 1, KOP_SEIZE_HOLD, KOP_HOLD, KOP_RELEASE, KOP_RELEASE_EXEC, KOP_END };

struct kmsg {
	int32_t op;
	int32_t pid;
};

struct kreply {
	int64_t ret;
	uint64_t restored, failed;
};

/* How long a hold waits for a thread to stop (one in uninterruptible sleep is left alone). */
#define HOLD_TIMEOUT_MS	2000
/* How long a dead bpfprof's links may take to go before the return addresses are put back anyway. */
#define DEATH_WAIT_MS	600000

struct trace_bpf;
/*
 * The keeper's process, forked by keeper__start(): serves bpfprof on sock
 * until KOP_END or bpfprof's death (parent), then ends its targets' holds.
 */
void keeper_run(int sock, pid_t parent, struct trace_bpf *skel, bool follow_forks);

#endif
