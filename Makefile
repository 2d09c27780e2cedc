# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
#   make            build ./bpfprof (BPF objects, skeletons, userspace)
#   make deps       install build dependencies (Debian; adds bookworm-backports)
#   make demo       deps + build + trace the bundled demo program
#   make test       deps + build + unit tests + end-to-end tests (root)
#   make check-layers  the layer rule (scripts/check-layers.sh; part of make unit)
#   make check-size    no .c file over 700 lines, no function over 120
#                      (scripts/check-size.sh; part of make unit)
#   make bench      overhead and throughput figures
#   make man        the man pages, from the option tables (.output/man)
#   make install    PREFIX=/usr/local DESTDIR=: binary, man pages, bash and zsh completion,
#                   include/bpfprof.h + bpfprof.pc, view's speedscope; make uninstall
#   make deb        a Debian package (.output/deb/bpfprof_VERSION_ARCH.deb)
#   V=1             show full commands

OUTPUT   := .output
# BPF objects do not depend on SANITIZE: one copy for both builds.
BPF_OUT  := .output/bpf
CLANG    ?= clang
BPFTOOL  ?= bpftool
CC       ?= cc
PYTHON   ?= /usr/bin/python3
ARCH     := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

# vmlinux.h: from the running kernel's BTF when there is one, else the
# committed fallback.  VMLINUX_H=path overrides both.
BTF_VMLINUX := /sys/kernel/btf/vmlinux
ifeq ($(VMLINUX_H),)
ifneq ($(wildcard $(BTF_VMLINUX)),)
VMLINUX_H := vmlinux/vmlinux.h
else
VMLINUX_H := vmlinux/vmlinux_fallback.h
endif
endif

CFLAGS   ?= -O2 -g
CFLAGS   += -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	    -D_GNU_SOURCE -MMD -MP -I. -Iuser
LDLIBS   += -lbpf -lelf -ldw -ldebuginfod -lz -llzma -lmicrohttpd -lcapstone -lstdc++ -lm

# The shipped binary runs as root on input from other users' processes and
# files: hardened (checked string/memory calls, stack canaries, PIE, a
# read-only GOT).  SANITIZE=1 builds an ASan+UBSan bpfprof instead, into its
# own output folder (.output-san/bpfprof), for `make test` and debugging;
# _FORTIFY_SOURCE is left out there (ASan checks the same calls, better).
HARDEN_CFLAGS  := -fstack-protector-strong -fPIE
HARDEN_LDFLAGS := -pie -Wl,-z,relro,-z,now
ifeq ($(SANITIZE),1)
OUTPUT   := .output-san
BPFPROF_BIN := $(OUTPUT)/bpfprof
CFLAGS   += -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	    -fno-sanitize-recover=undefined $(HARDEN_CFLAGS)
LDFLAGS  += -fsanitize=address,undefined $(HARDEN_LDFLAGS)
else
BPFPROF_BIN := bpfprof
CFLAGS   += -D_FORTIFY_SOURCE=2 $(HARDEN_CFLAGS)
LDFLAGS  += $(HARDEN_LDFLAGS)
endif
# libbpf's usdt.bpf.h includes <linux/errno.h>: the multiarch asm/ headers must be found
# (after vmlinux.h's own definitions), as libbpf-bootstrap does with clang's system dirs.
MULTIARCH  := $(shell $(CC) -dumpmachine 2>/dev/null)
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Ivmlinux -Ibpf \
	      -I$(dir $(VMLINUX_H)) -idirafter /usr/include/$(MULTIARCH)

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS   := $(wildcard bpf/*.bpf.c)
SKELS      := $(patsubst bpf/%.bpf.c,skel/%.skel.h,$(BPF_SRCS))
USER_SRCS  := $(wildcard user/*/*.c) $(wildcard exporters/*.c)
USER_OBJS  := $(patsubst %.c,$(OUTPUT)/%.o,$(USER_SRCS))
LIB_OBJS   := $(filter-out $(OUTPUT)/user/cmd/main.o,$(USER_OBJS))
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
PROG_SRCS  := $(wildcard tests/progs/*.c) $(wildcard tests/progs/*.cc)
PROG_BINS  := $(basename $(PROG_SRCS))

.DELETE_ON_ERROR:
# the BPF objects are intermediates of the skeletons: keep them (no rebuild on every make)
.SECONDARY: $(patsubst bpf/%.bpf.c,$(BPF_OUT)/%.bpf.o,$(BPF_SRCS)) $(SKELS)
.PHONY: FORCE all deps test-deps bench-deps demo test unit e2e bench clean progs format fuzz fuzz-smoke \
	check-layers check-size man install uninstall deb

all: $(BPFPROF_BIN) progs $(OUTPUT)/bench/repeat_archive

deps:
	$(Q)bash scripts/setup.sh

test-deps:
	$(Q)bash scripts/setup.sh --test

vmlinux/vmlinux.h: | $(BTF_VMLINUX)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(BTF_VMLINUX) format c > $@

$(OUTPUT) $(BPF_OUT) $(OUTPUT)/tests skel:
	$(Q)mkdir -p $@

$(BPF_OUT)/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H) | $(BPF_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MT $@ -MF $(@:.o=.d) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

skel/%.skel.h: $(BPF_OUT)/%.bpf.o | skel
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# A change of flags (SANITIZE, CFLAGS=...) rebuilds the objects that use them.
FLAGS_STAMP := $(OUTPUT)/flags
$(FLAGS_STAMP): FORCE
	$(Q)mkdir -p $(@D)
	$(Q)echo '$(CFLAGS) $(LDFLAGS)' | cmp -s - $@ || echo '$(CFLAGS) $(LDFLAGS)' > $@
FORCE:

# Userspace objects, one folder per layer (user/<layer>/x.c -> .output/user/<layer>/x.o).
$(OUTPUT)/user/%.o: user/%.c $(FLAGS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# Only an object that includes a skeleton ("skel/x.skel.h") waits for it (the
# rest need no clang, bpftool or vmlinux.h): "user/probes/sample.c:skel/sample.skel.h"
# from grep becomes ".output/user/probes/sample.o: skel/sample.skel.h".
SKEL_DEPS := $(shell grep -oH '"skel/[a-z_0-9]*\.skel\.h"' $(USER_SRCS) | tr -d '"')
$(foreach d,$(SKEL_DEPS),$(eval $(OUTPUT)/$(subst .c:,.o: ,$(d))))

# view's page is built into the binary (.incbin): -MMD does not see it.
$(OUTPUT)/user/web/view.o: user/web/view-page.html user/web/diff-page.html user/web/page.css

$(OUTPUT)/exporters/%.o: exporters/%.c $(FLAGS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BPFPROF_BIN): $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Unit tests: cmocka, and the helpers they share (tests/unit/helpers.c: not a
# test itself, UNIT_SRCS is test_*.c).  Linked against every layer but the live
# ones (LIVE_LAYERS: the pipeline, the BPF objects and what tracing needs; they
# load BPF skeletons), which only a test that includes one of their headers
# gets too.
LIVE_LAYERS := capture cost cpython probes target cmd
UNIT_HELPERS := $(OUTPUT)/tests/helpers.o
LIVE_OBJS  := $(filter $(foreach l,$(LIVE_LAYERS),$(OUTPUT)/user/$(l)/%),$(LIB_OBJS))
CORE_OBJS  := $(filter-out $(LIVE_OBJS),$(LIB_OBJS))
UNIT_LIVE  := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,\
		$(shell grep -lE '^#include "($(shell echo $(LIVE_LAYERS) | tr ' ' '|'))/' $(UNIT_SRCS)))
$(UNIT_HELPERS): tests/unit/helpers.c $(FLAGS_STAMP) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@
$(UNIT_LIVE): $(LIVE_OBJS)
$(OUTPUT)/tests/%: tests/unit/%.c $(UNIT_HELPERS) $(CORE_OBJS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(filter %.o,$^) $(LDLIBS) -lcmocka -o $@

# Test target programs: known behaviour, frame pointers, no inlining so every
# function in the source is a real call.  Per-program flags in tests/progs/flags.mk.
PROG_CFLAGS := -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread
-include tests/progs/flags.mk
tests/progs/%: tests/progs/%.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) $(PROG_CFLAGS_$*) $< -o $@ $(PROG_LDLIBS_$*) -pthread
tests/progs/%: tests/progs/%.cc
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(PROG_CFLAGS) $(PROG_CFLAGS_$*) $< -o $@ $(PROG_LDLIBS_$*) -pthread

progs: $(PROG_BINS)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	./bpfprof record -o demo-trace.json -- ./tests/progs/calltree
	@echo "demo: open demo-trace.json in https://ui.perfetto.dev or chrome://tracing"

# Layers use only the layers below them: their includes and, in the objects,
# the symbols they take from each other (the matrix: scripts/check-layers.sh).
check-layers: $(USER_OBJS)
	$(call msg,CHECK,layers)
	$(Q)bash scripts/check-layers.sh -o $(OUTPUT)

# the size rule: files of at most 700 lines, functions of at most 120
check-size:
	$(call msg,CHECK,size)
	$(Q)bash scripts/check-size.sh

# the layer and size rules, the C units, and the scripts' own tests (tests/scripts/test_*.sh)
unit: $(UNIT_BINS) check-layers check-size
	$(Q)set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done
	$(Q)set -e; for t in tests/scripts/test_*.sh; do echo "== $$t"; bash $$t; done

# SKIPPED_LOG=FILE: the skipped tests and their reasons are appended to FILE
e2e: bpfprof progs
	$(Q)$(if $(SKIPPED_LOG),BPFPROF_SKIPPED=$(SKIPPED_LOG)) $(PYTHON) -m pytest -q tests/e2e

# Fuzzing (libFuzzer; clang + libclang-rt-dev): one target per parser of
# untrusted input, tests/fuzz/fuzz_<name>.c, linked with the bpfprof sources
# it tests (FUZZ_SRCS_<name>) and the shared tests/fuzz/fuzz_util.c.  Its
# inputs: the committed regressions (tests/fuzz/corpus_<name>, kept as they
# are), the seeds made from real files by tests/fuzz/seeds.sh
# ($(OUTPUT)/fuzz/seeds_<name>), and what it found so far
# ($(OUTPUT)/fuzz/corpus_<name>); a crash is written to
# $(OUTPUT)/fuzz/<name>-crash-*.
FUZZ_CC    ?= clang
FUZZ_TIME  ?= 600
FUZZ_FLAGS := -g -O1 -Werror=implicit-function-declaration -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	      -D_GNU_SOURCE -I. -Iuser -Itests/fuzz
FUZZ_BASE  := user/base/log.c user/base/util.c user/base/safeopen.c user/base/status.c \
	      user/base/json.c user/base/utf8.c
FUZZ_ARCH  := user/archive/reader.c user/archive/tables.c user/archive/sigs.c user/archive/events.c \
	      user/model/session.c
# the archive reader
FUZZ_SRCS_archive   := $(FUZZ_ARCH)
FUZZ_LIBS_archive   := -lz
# the ELF reader: symbols, program headers, .eh_frame FDEs, PLT, IFUNCs
FUZZ_SRCS_elfsym    := user/symbols/elfsym.c user/symbols/elfsym_stripped.c user/symbols/insn.c user/symbols/debugsyms.c \
		       user/symbols/debuginfod.c user/symbols/ehframe.c user/symbols/binfile.c user/symbols/procmaps.c
FUZZ_LIBS_elfsym    := -lelf -ldw -ldebuginfod -lz -llzma -lstdc++
# .note.stapsdt
FUZZ_SRCS_usdt      := user/symbols/usdt_notes.c
FUZZ_LIBS_usdt      := -lelf
# the archive through the replay loop into every exporter, the report, the diff
FUZZ_SRCS_export    := $(wildcard user/archive/*.c user/model/*.c user/report/*.c exporters/*.c) \
		       $(filter-out $(FUZZ_BASE),$(wildcard user/base/*.c))
FUZZ_LIBS_export    := -lz -lm
# the readers of stripped files: build-id, .gnu_debuglink, MiniDebugInfo, .gopclntab, .eh_frame
FUZZ_SRCS_debugsyms := user/symbols/debugsyms.c user/symbols/debuginfod.c user/symbols/ehframe.c \
		       user/symbols/binfile.c user/symbols/procmaps.c
FUZZ_LIBS_debugsyms := -lelf -ldw -ldebuginfod -lz -llzma
# the DWARF unwinder of sampled stacks: CFI, registers, stack bytes
FUZZ_SRCS_unwind    := user/symbols/unwind.c user/symbols/debugsyms.c user/symbols/debuginfod.c \
		       user/symbols/binfile.c user/symbols/procmaps.c
FUZZ_LIBS_unwind    := -lelf -ldw -ldebuginfod -lz -llzma
# the DWARF subprograms of a binary (--deps parameter counts, file:line)
FUZZ_SRCS_dwarfinfo := user/symbols/dwarfinfo.c user/symbols/dwarfargs.c user/symbols/dwarfxmm.c \
		       user/model/argsig.c user/symbols/debugsyms.c \
		       user/symbols/debuginfod.c user/symbols/ehframe.c user/symbols/binfile.c user/symbols/procmaps.c
FUZZ_LIBS_dwarfinfo := -ldw -lelf -ldebuginfod -lz -llzma -lcapstone
FUZZ_TARGETS := archive elfsym usdt export debugsyms unwind dwarfinfo
# seconds of each in make test (fuzz-smoke), from a fixed seed: the smoke tries
# the same mutations each run, so that make test does not fail at random on a
# new finding (one did: a fresh-clone CI run); `make fuzz` explores anew
FUZZ_SMOKE_SEED := 1
FUZZ_SMOKE_archive  := 20
FUZZ_SMOKE_elfsym   := 15
FUZZ_SMOKE_usdt     := 8
FUZZ_SMOKE_export   := 20
FUZZ_SMOKE_debugsyms := 10
FUZZ_SMOKE_unwind   := 10
FUZZ_SMOKE_dwarfinfo := 8

FUZZERS    := $(patsubst %,$(OUTPUT)/fuzz/fuzz_%,$(FUZZ_TARGETS))
FUZZ_RUN    = $(OUTPUT)/fuzz/fuzz_$(1) -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	      -artifact_prefix=$(OUTPUT)/fuzz/$(1)- $(OUTPUT)/fuzz/corpus_$(1) \
	      $(wildcard tests/fuzz/corpus_$(1)) $(OUTPUT)/fuzz/seeds_$(1)

.SECONDEXPANSION:
$(OUTPUT)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.c tests/fuzz/fuzz_util.h tests/fuzz/fuzz_elf.h \
		       $$(FUZZ_SRCS_%) $(FUZZ_BASE) $(wildcard user/*/*.h exporters/*.h)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(OUTPUT)/fuzz/corpus_$*
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) $< tests/fuzz/fuzz_util.c $(FUZZ_SRCS_$*) $(FUZZ_BASE) \
		$(FUZZ_LIBS_$*) -o $@

# Seeds from real files: the built test programs, system libraries, recordings.
$(OUTPUT)/fuzz/seeds: tests/fuzz/seeds.sh tests/fuzz/inflate_archive.py tests/fuzz/mkseed_unwind.c $(PROG_BINS)
	$(call msg,SEEDS,$@)
	$(Q)tests/fuzz/seeds.sh $(OUTPUT)/fuzz $(FUZZ_TARGETS)
	$(Q)touch $@

fuzz: $(FUZZERS) $(OUTPUT)/fuzz/seeds
	$(Q)set -e; $(foreach t,$(FUZZ_TARGETS),echo "== fuzz_$(t) $(FUZZ_TIME) s"; \
		$(call FUZZ_RUN,$(t)) -max_total_time=$(FUZZ_TIME);)

# A few seconds of each target in make test; the log of a failure is shown.
fuzz-smoke: $(FUZZERS) $(OUTPUT)/fuzz/seeds
	$(Q)set -e; $(foreach t,$(FUZZ_TARGETS),\
		$(call FUZZ_RUN,$(t)) -seed=$(FUZZ_SMOKE_SEED) -max_total_time=$(FUZZ_SMOKE_$(t)) \
			> $(OUTPUT)/fuzz/smoke-$(t).log 2>&1 || \
		{ tail -n 60 $(OUTPUT)/fuzz/smoke-$(t).log; \
		  echo "fuzz-smoke: fuzz_$(t) failed, input in $(OUTPUT)/fuzz/" >&2; exit 1; }; \
		echo "fuzz_$(t): $$(tail -n 1 $(OUTPUT)/fuzz/smoke-$(t).log)";)

# The ASan+UBSan build (SANITIZE=1, in .output-san) runs the unit tests and
# the end-to-end files of SAN_E2E: record, every format through the archive,
# report, the faults (71 tests, ~4 min under ASan on the 2-CPU VM), serve and
# view (23 tests, 1.8 min on the VM at load 3, 5.5 min at load 9-15), dlopen following,
# exec following and the guard (13 tests, 7 s).  Left out: test_view_big.py
# (it records 10 M calls of a Python program; under ASan that recording alone
# ran past its 300 s limit; view's server is covered by test_view.py).
# Any report fails the run (UBSan halts; ASan and LeakSanitizer exit non-zero).
SAN_E2E    ?= tests/e2e/test_record.py tests/e2e/test_archive.py tests/e2e/test_report.py \
	      tests/e2e/test_faults.py tests/e2e/test_serve.py tests/e2e/test_view.py \
	      tests/e2e/test_dlfollow.py tests/e2e/test_exec.py
SAN_ENV    := UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	      ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
.PHONY: unit-san e2e-san
unit-san:
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 unit

e2e-san:
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 .output-san/bpfprof progs
	$(Q)$(SAN_ENV) BPFPROF_BIN=.output-san/bpfprof $(if $(SKIPPED_LOG),BPFPROF_SKIPPED=$(SKIPPED_LOG)) \
		$(PYTHON) -m pytest -q $(SAN_E2E)

# The last lines say which tests did not run here and why (nothing when all ran).
TEST_SKIPPED := $(abspath .output/test-skipped.txt)
test: test-deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS)
	$(Q)rm -f $(TEST_SKIPPED)
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory fuzz-smoke
	$(Q)$(MAKE) --no-print-directory e2e SKIPPED_LOG=$(TEST_SKIPPED)
	$(Q)$(MAKE) --no-print-directory unit-san
	$(Q)$(MAKE) --no-print-directory e2e-san SKIPPED_LOG=$(TEST_SKIPPED)
	$(Q)if [ -s $(TEST_SKIPPED) ]; then \
		echo "!!!!!!!!!! make test: passed, but some tests were SKIPPED on this machine:"; \
		cat $(TEST_SKIPPED); \
	else echo "make test: passed, every test ran"; fi

# Benchmarks (bench/run.sh): the empty-probe floor loader, the decoder
# throughput driver, uftrace's -pg target, 10,000 generated functions.
BENCH_OUT  := $(OUTPUT)/bench
BENCH_BINS := $(BENCH_OUT)/floor $(BENCH_OUT)/decode_bench $(BENCH_OUT)/insns $(BENCH_OUT)/uftrace_spin \
	      $(BENCH_OUT)/uftrace_spin_pg $(BENCH_OUT)/many $(BENCH_OUT)/diff_gen \
	      $(BENCH_OUT)/repeat_archive $(BENCH_OUT)/retsite $(BENCH_OUT)/retsite_prog

$(BENCH_OUT):
	$(Q)mkdir -p $@

$(BENCH_OUT)/floor.bpf.o: bench/floor.bpf.c bpf/events.h bpf/common.bpf.h $(VMLINUX_H) | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(BENCH_OUT)/floor.skel.h: $(BENCH_OUT)/floor.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name floor_bpf > $@

FLOOR_OBJS := $(LIB_OBJS)
$(BENCH_OUT)/floor: bench/floor.c $(BENCH_OUT)/floor.skel.h $(FLOOR_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(BENCH_OUT) $< $(FLOOR_OBJS) $(LDLIBS) -o $@

# Return events from uprobes on `ret` instructions vs uretprobes (bench/retsite.sh).
$(BENCH_OUT)/retsite.bpf.o: bench/retsite.bpf.c bpf/events.h bpf/common.bpf.h $(VMLINUX_H) | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(BENCH_OUT)/retsite.skel.h: $(BENCH_OUT)/retsite.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name retsite_bpf > $@

$(BENCH_OUT)/retsite: bench/retsite.c $(BENCH_OUT)/retsite.skel.h $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(BENCH_OUT) $< $(LIB_OBJS) $(LDLIBS) -o $@

$(BENCH_OUT)/retsite_prog: bench/retsite_prog.c | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROG_CFLAGS) $< -o $@

$(BENCH_OUT)/decode_bench: bench/decode_bench.c $(LIB_OBJS) | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

# A big synthetic recording for timing `bpfprof diff` (README, diff).
$(BENCH_OUT)/diff_gen: bench/diff_gen.c $(LIB_OBJS) | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

# A big recording made of a real small one, back to back (view's e2e test, README).
$(BENCH_OUT)/repeat_archive: bench/repeat_archive.c $(LIB_OBJS) | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

# Per-call targets timed in thread CPU time (bench/cputime.h): insns as in
# tests/progs, and one tiny function built for uftrace (-pg: mcount) and without.
BENCH_CC = $(CC) $(PROG_CFLAGS) -fno-shrink-wrap -include bench/cputime.h
$(BENCH_OUT)/insns: tests/progs/insns.c bench/cputime.h | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(BENCH_CC) $< -o $@
$(BENCH_OUT)/uftrace_spin_pg: bench/uftrace_spin.c bench/cputime.h | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(BENCH_CC) -pg $< -o $@
$(BENCH_OUT)/uftrace_spin: bench/uftrace_spin.c bench/cputime.h | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(BENCH_CC) $< -o $@

$(BENCH_OUT)/many.c: bench/gen_many.sh | $(BENCH_OUT)
	$(call msg,GEN,$@)
	$(Q)bash $< 10000 > $@
$(BENCH_OUT)/many: $(BENCH_OUT)/many.c
	$(call msg,CC,$@)
	$(Q)$(CC) -O0 -fno-omit-frame-pointer $< -o $@

bench-deps:
	$(Q)bash scripts/setup.sh --bench

bench: bench-deps
	$(Q)$(MAKE) --no-print-directory bpfprof progs $(BENCH_BINS)
	$(Q)bash bench/run.sh

# Man pages: written by bpfprof itself from its option tables (user/cmd/options.h),
# so that they say what --help and the parser say.
VERSION  := $(shell sed -n 's/^\#define BPFPROF_VERSION "\(.*\)"/\1/p' user/cmd/main.c)
MAN_OUT  := $(OUTPUT)/man
$(MAN_OUT)/stamp: $(BPFPROF_BIN)
	$(call msg,MAN,$(MAN_OUT))
	$(Q)rm -rf $(MAN_OUT) && mkdir -p $(MAN_OUT)
	$(Q)./$(BPFPROF_BIN) --man $(MAN_OUT)
	$(Q)touch $@
man: $(MAN_OUT)/stamp

# Installation (PREFIX, DESTDIR as usual).  view's pages are inside the binary;
# speedscope (MIT, from npm by scripts/setup.sh) is copied to share/bpfprof,
# where the installed view finds it beside its own binary.
PREFIX     ?= /usr/local
BINDIR     := $(PREFIX)/bin
MAN1DIR    := $(PREFIX)/share/man/man1
BASHCOMPDIR := $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR := $(PREFIX)/share/zsh/vendor-completions
INCDIR     := $(PREFIX)/include
PCDIR      := $(PREFIX)/share/pkgconfig
DATADIR    := $(PREFIX)/share/bpfprof
SPEEDSCOPE_DIST := tests/clients/node_modules/speedscope
install: $(BPFPROF_BIN) $(MAN_OUT)/stamp
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -D -m 0755 $(BPFPROF_BIN) $(DESTDIR)$(BINDIR)/bpfprof
	$(Q)install -d $(DESTDIR)$(MAN1DIR)
	$(Q)install -m 0644 $(MAN_OUT)/*.1 $(DESTDIR)$(MAN1DIR)/
	$(Q)install -D -m 0644 completion/bpfprof.bash $(DESTDIR)$(BASHCOMPDIR)/bpfprof
	$(Q)install -D -m 0644 completion/_bpfprof $(DESTDIR)$(ZSHCOMPDIR)/_bpfprof
	$(Q)install -D -m 0644 include/bpfprof.h $(DESTDIR)$(INCDIR)/bpfprof.h
	$(Q)install -d $(DESTDIR)$(PCDIR)
	$(Q)sed 's|@PREFIX@|$(PREFIX)|; s|@VERSION@|$(VERSION)|' scripts/bpfprof.pc.in \
		> $(DESTDIR)$(PCDIR)/bpfprof.pc && chmod 0644 $(DESTDIR)$(PCDIR)/bpfprof.pc
	$(Q)if [ -e $(SPEEDSCOPE_DIST)/dist/release/index.html ]; then \
		install -d $(DESTDIR)$(DATADIR)/speedscope && \
		cp -R --no-preserve=ownership $(SPEEDSCOPE_DIST)/dist/release/. $(DESTDIR)$(DATADIR)/speedscope/ && \
		install -m 0644 $(SPEEDSCOPE_DIST)/LICENSE $(DESTDIR)$(DATADIR)/speedscope/LICENSE; \
	else echo "make install: speedscope is not in $(SPEEDSCOPE_DIST) (make deps): view will have no timeline" >&2; fi

# A Debian package (scripts/mkdeb.sh): make install into a staging root, then
# dpkg-deb; Depends from dpkg-shlibdeps.  Install it with apt install ./FILE.deb.
DEB_ROOT := $(OUTPUT)/deb/root
deb: $(BPFPROF_BIN) $(MAN_OUT)/stamp
	$(Q)rm -rf $(DEB_ROOT)
	$(Q)$(MAKE) --no-print-directory install DESTDIR=$(abspath $(DEB_ROOT)) PREFIX=/usr
	$(call msg,DEB,$(OUTPUT)/deb)
	$(Q)bash scripts/mkdeb.sh $(DEB_ROOT) $(VERSION) $(OUTPUT)/deb

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(BINDIR)/bpfprof $(DESTDIR)$(MAN1DIR)/bpfprof.1 \
		$(DESTDIR)$(MAN1DIR)/bpfprof-*.1 $(DESTDIR)$(BASHCOMPDIR)/bpfprof $(DESTDIR)$(ZSHCOMPDIR)/_bpfprof \
		$(DESTDIR)$(INCDIR)/bpfprof.h $(DESTDIR)$(PCDIR)/bpfprof.pc
	$(Q)rm -rf $(DESTDIR)$(DATADIR)

format:
	clang-format -i $(USER_SRCS) $(BPF_SRCS) bpf/*.h user/*/*.h exporters/*.h

clean:
	rm -rf .output .output-san skel bpfprof vmlinux/vmlinux.h $(PROG_BINS) demo-trace.json

-include $(patsubst %.o,%.d,$(USER_OBJS) $(LIB_OBJS)) $(wildcard $(BPF_OUT)/*.bpf.d) $(wildcard $(OUTPUT)/tests/*.d)
