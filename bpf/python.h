/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What python.bpf.c needs to know about one probed CPython binary (an
 * interpreter executable or a libpython3.X.so): where its probe sites and
 * _PyRuntime are (link-time addresses: the BPF side adds the load bias it
 * computes from the address of the probe that fired) and the struct offsets
 * of its CPython version (user/cpython/image.c has the table).  Shared by
 * BPF and userspace: fixed-width fields only.
 */
#ifndef BPFPROF_PYTHON_H
#define BPFPROF_PYTHON_H

/*
 * Probe sites.  The attach cookie is kind | slot << 4 | config index << 8;
 * addr[slot] is the site's link-time address (the load bias is the probe's
 * address less it).
 */
#define BP_PY_SITE_RESUME	0	/* in a RESUME opcode handler: a frame starts or resumes */
#define BP_PY_SITE_ENTRY	1	/* DTRACE_FUNCTION_ENTRY: fires for gen.throw() */
#define BP_PY_SITE_RETURN	2	/* DTRACE_FUNCTION_EXIT: every frame exit (return, yield, raise) */
#define BP_PY_NKINDS		3
#define BP_PY_MAX_SITES		16

/* bp_py_cfg.mode[slot] */
#define BP_PY_PREV_STORED	0x1	/* RESUME: prev_instr already points at the RESUME itself */

#define BP_PY_MAX_CFGS		64

struct bp_py_cfg {
	__u64 addr[BP_PY_MAX_SITES];	/* link-time addresses of the probe sites */
	__u8 mode[BP_PY_MAX_SITES];	/* BP_PY_PREV_STORED */
	__u64 runtime;			/* link-time address of _PyRuntime */
	/* offsets in bytes */
	__u32 runtime_tstate;		/* _PyRuntime.gilstate.tstate_current */
	__u32 tstate_cframe;		/* PyThreadState.cframe */
	__u32 tstate_curexc;		/* PyThreadState.curexc_type */
	__u32 cframe_frame;		/* _PyCFrame.current_frame */
	__u32 frame_code;		/* _PyInterpreterFrame.f_code */
	__u32 frame_previous;		/* .previous */
	__u32 frame_prev_instr;		/* .prev_instr */
	__u32 frame_owner;		/* .owner */
	__s32 gen_state;		/* PyGenObject.gi_frame_state - offsetof(gi_iframe) */
	__u32 code_filename;		/* PyCodeObject.co_filename */
	__u32 code_qualname;		/* .co_qualname */
	__u32 code_firstlineno;		/* .co_firstlineno */
	__u32 str_length;		/* PyASCIIObject.length */
	__u32 str_state;		/* PyASCIIObject.state */
	__u32 str_ascii_data;		/* sizeof(PyASCIIObject): a compact ASCII str's characters */
	__u32 str_compact_data;		/* sizeof(PyCompactUnicodeObject): other compact strs' */
	__u32 runtime_interp;		/* _PyRuntime.interpreters.head */
	__u32 interp_threads;		/* PyInterpreterState.threads.head */
	__u32 tstate_next;		/* PyThreadState.next */
	__u32 tstate_native_tid;	/* .native_thread_id */
	__u32 frame_is_entry;		/* _PyInterpreterFrame.is_entry */
	__u8 op_resume, op_resume_quick;	/* opcode numbers */
	__u8 owned_by_generator;	/* FRAME_OWNED_BY_GENERATOR */
	__s8 frame_suspended;		/* FRAME_SUSPENDED */
	__u32 code_flags;		/* PyCodeObject.co_flags */
	/* asyncio (0: not read) */
	__u32 frame_localsplus;		/* _PyInterpreterFrame.localsplus */
	__u32 gen_iframe;		/* PyGenObject.gi_iframe: a coroutine frame's object */
	__u32 handle_callback;		/* asyncio.events.Handle's _callback slot */
	__u32 task_coro;		/* _asyncio TaskObj.task_coro */
	__u32 task_name;		/* .task_name */
	__u32 fut_callback0;		/* _asyncio FutureObj.fut_callback0 (a Task's too) */
	__u32 task_fut_waiter;		/* TaskObj.task_fut_waiter */
	/* trio (0: not read): its Task's slots (a Python class: sorted slot names) */
	__u32 trio_task_coro;		/* trio._core._run.Task.coro */
	__u32 trio_task_name;		/* .name */
	__u32 trio_task_nursery;	/* ._parent_nursery (0: awaiters not read) */
	/*
	 * trio's Nursery is a plain class: its attributes are the object's
	 * inline values (3.11: a PyDictValues pointer at obj_values, before
	 * the GC header; NULL once its __dict__ was made), in the order
	 * Nursery.__init__ sets them; the two below are offsets in that array.
	 */
	__s32 obj_values;		/* managed-dict object -> its values */
	__u32 trio_nursery_parent;	/* ._parent_task */
	__u32 trio_nursery_waiting;	/* ._parent_waiting_in_aexit */
	/*
	 * Sampled stacks: the byte at frame_is_entry equal to entry_mark (0:
	 * 1) marks the first frame of a C activation (3.11: is_entry == 1);
	 * with entry_shim, that frame is the activation's entry shim (3.12:
	 * owner == FRAME_OWNED_BY_CSTACK), not Python code: sent flagged 2.
	 */
	__u8 entry_mark, entry_shim;
	__u16 pad_entry;
	__u32 samples_only;		/* no exact calls for this version (3.12) */
};

/*
 * Sampled stacks of a CPython process (sample.bpf.c, python_stack.bpf.h):
 * per process, where _PyRuntime is now (load bias applied) and the offsets.
 */
struct bp_py_proc {
	__u64 runtime;			/* run-time address of _PyRuntime */
	struct bp_py_cfg off;
};

/*
 * A code object whose calls the overhead governor dropped (py_dropped in
 * python.bpf.c): per process, since code objects live at per-process
 * addresses; the governor's decision is per function (file, name, line) and
 * reaches every code object of it the decoder names, later processes too.
 */
struct bp_py_drop_key {
	__u32 tgid;
	__u32 pad;
	__u64 code;
};
#define BP_PY_MAX_DROPPED	65536

#endif
