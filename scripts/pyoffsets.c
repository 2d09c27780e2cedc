// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Prints the CPython struct offsets python.bpf.c reads, as facts from the
 * headers of the python3.X-dev installed, for the version table in
 * user/cpython/image.c.  Layout of 3.11 (_PyInterpreterFrame, _PyCFrame,
 * gilstate.tstate_current); other versions need their own field names.
 *
 *   cc -I/usr/include/python3.11 scripts/pyoffsets.c -o /tmp/pyoffsets && /tmp/pyoffsets
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include "internal/pycore_frame.h"
#include "internal/pycore_runtime.h"
#include "internal/pycore_genobject.h"
#include "internal/pycore_interp.h"
#include "opcode.h"

#define P(name, expr) printf("\t\t.%s = %ld,\n", name, (long)(expr))

int main(void)
{
	printf("\t{ %d, %d, {\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
	P("runtime_tstate", offsetof(_PyRuntimeState, gilstate.tstate_current));
	P("tstate_cframe", offsetof(PyThreadState, cframe));
	P("tstate_curexc", offsetof(PyThreadState, curexc_type));
	P("cframe_frame", offsetof(_PyCFrame, current_frame));
	P("frame_code", offsetof(_PyInterpreterFrame, f_code));
	P("frame_previous", offsetof(_PyInterpreterFrame, previous));
	P("frame_prev_instr", offsetof(_PyInterpreterFrame, prev_instr));
	P("frame_owner", offsetof(_PyInterpreterFrame, owner));
	P("gen_state", (long)offsetof(PyGenObject, gi_frame_state) -
		       (long)offsetof(PyGenObject, gi_iframe));
	P("code_filename", offsetof(PyCodeObject, co_filename));
	P("code_qualname", offsetof(PyCodeObject, co_qualname));
	P("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("str_length", offsetof(PyASCIIObject, length));
	P("str_state", offsetof(PyASCIIObject, state));
	P("str_ascii_data", sizeof(PyASCIIObject));
	P("str_compact_data", sizeof(PyCompactUnicodeObject));
	P("runtime_interp", offsetof(_PyRuntimeState, interpreters.head));
	P("interp_threads", offsetof(PyInterpreterState, threads.head));
	P("tstate_next", offsetof(PyThreadState, next));
	P("tstate_native_tid", offsetof(PyThreadState, native_thread_id));
	P("frame_is_entry", offsetof(_PyInterpreterFrame, is_entry));
	P("op_resume", RESUME);
	P("op_resume_quick", RESUME_QUICK);
	P("owned_by_generator", FRAME_OWNED_BY_GENERATOR);
	P("frame_suspended", FRAME_SUSPENDED);
	P("code_flags", offsetof(PyCodeObject, co_flags));
	P("frame_localsplus", offsetof(_PyInterpreterFrame, localsplus));
	P("gen_iframe", offsetof(PyGenObject, gi_iframe));
	printf("\t} },\n");
	return 0;
}
