# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Per-program extra flags for tests/progs/NAME (included by the Makefile):
#   PROG_CFLAGS_NAME := ...   compiler/linker flags
#   PROG_LDLIBS_NAME := ...   libraries

# nosyms: strip .symtab at link time; only .dynsym (undefined imports) remains.
PROG_CFLAGS_nosyms := -s

# spin: small_push must begin with push %rbp (see spin.c); without this GCC
# may move the prologue past the early exit ("shrink-wrapping").
PROG_CFLAGS_spin := -fno-shrink-wrap

# cpusplit: sampled stacks must show every frame: -O0 keeps a frame pointer even in
# leaf functions (GCC omits it there at -O1 whatever -fno-omit-frame-pointer says).
PROG_CFLAGS_cpusplit := -O0

# libwork: calls zlib
PROG_LDLIBS_libwork := -lz

# annotate: uses include/bpfprof.h
PROG_CFLAGS_annotate := -Iinclude

# nofp: built like a distribution binary, without frame pointers (see nofp.c)
PROG_CFLAGS_nofp := -O2 -fomit-frame-pointer

# ifunc: strlen and memset must stay calls into libc
PROG_CFLAGS_ifunc := -fno-builtin

# coldlabels: uses include/bpfprof.h
PROG_CFLAGS_coldlabels := -Iinclude
# hotmarks: uses include/bpfprof.h
PROG_CFLAGS_hotmarks := -Iinclude

# stepper: static, so that nothing it maps is a file someone else probes
# (the C library, the dynamic linker: another tracer's return or
# single-stepped probe there maps the [uprobes] area test_session looks for)
PROG_CFLAGS_stepper := -static

# slowsteady: sampled stacks must show slow/steady under main (as cpusplit)
PROG_CFLAGS_slowsteady := -O0

# pyembed, pyembed_static: CPython 3.11 linked in from python3.11-dev's static
# libraries (PIE with the -pic one and -E so extension modules find its
# symbols; fully static and not PIE).  Left out of `progs` where
# python3.11-dev is not installed (scripts/setup.sh --test installs it).
PY311_LIBDIR := /usr/lib/python3.11/config-3.11-x86_64-linux-gnu
PY311_LIBS := -lm -lz -lexpat -ldl -lutil
PROG_CFLAGS_pyembed := -I/usr/include/python3.11 -Wl,-E
PROG_LDLIBS_pyembed := $(PY311_LIBDIR)/libpython3.11-pic.a $(PY311_LIBS)
# glibc's static NSS functions warn at link time; they are not used
PROG_CFLAGS_pyembed_static := -I/usr/include/python3.11 -static -Wl,--no-warnings
PROG_LDLIBS_pyembed_static := $(PY311_LIBDIR)/libpython3.11.a $(PY311_LIBS)
# pyshared: the same on a shared libpython without USDT probes (pyshared.c)
PY311_SO := /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0
PYSHARED_SO := tests/progs/pyshared.d/libpython3.11.so.1.0
PROG_CFLAGS_pyshared := -I/usr/include/python3.11 -Wl,-rpath,'$$ORIGIN/pyshared.d'
PROG_LDLIBS_pyshared := $(PYSHARED_SO)
ifneq ($(words $(wildcard $(PY311_LIBDIR)/libpython3.11.a $(PY311_LIBDIR)/libpython3.11-pic.a /usr/include/python3.11/Python.h $(PY311_SO))),4)
PROG_BINS := $(filter-out tests/progs/pyembed tests/progs/pyembed_static tests/progs/pyshared,$(PROG_BINS))
else
PROG_BINS += $(PYSHARED_SO)
endif
tests/progs/pyembed_static tests/progs/pyshared: tests/progs/pyembed.c
tests/progs/pyshared: $(PYSHARED_SO)
$(PYSHARED_SO): $(PY311_SO)
	$(call msg,OBJCOPY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)objcopy --remove-section=.note.stapsdt $< $@

# plugins: links libstdc++ without using it (the exception support, and bpfprof's
# keeper, apply); its two plugins are the same source built as shared objects
# into plugins.d, outside the linker's path
PROG_LDLIBS_plugins := -Wl,--no-as-needed -lstdc++ -Wl,--as-needed
PLUGIN_SOS := tests/progs/plugins.d/libplug_a.so tests/progs/plugins.d/libplug_b.so
PROG_BINS += $(PLUGIN_SOS)
tests/progs/plugins.d/libplug_%.so: tests/progs/plugins.c tests/progs/progs.h include/bpfprof.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_CFLAGS) -Iinclude -fPIC -shared -DPLUGIN=$* $< -o $@

# argdouble: a debug build (-O0), where float/double parameters and return
# values pass through the frame or rax (see argdouble.c)
PROG_CFLAGS_argdouble := -O0

# argtypes0: argtypes.cc built -O0, as a debug build is: its float/double
# parameters and return values pass through memory or rax (test_args_typed)
PROG_BINS += tests/progs/argtypes0
tests/progs/argtypes0: tests/progs/argtypes.cc tests/progs/progs.h
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(PROG_CFLAGS) -O0 $< -o $@ -pthread

# hotgroups: its functions in the file in the source's order (the test relies on the layout)
PROG_CFLAGS_hotgroups := -fno-toplevel-reorder
# inflight: its functions in the file in the source's order (tiny, outer and main in one group)
PROG_CFLAGS_inflight := -fno-toplevel-reorder
