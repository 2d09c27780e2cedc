/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What python.bpf.c needs to know about one probed CPython binary (an
 * interpreter executable or a libpython3.X.so): where its probe sites and
 * _PyRuntime are (link-time addresses: the BPF side adds the load bias it
 * computes from the address of the probe that fired) and the struct offsets
 * of its CPython version (user/capture/python.c has the table).  Shared by
 * BPF and userspace: fixed-width fields only.
 */
#ifndef BPFPROF_PYTHON_H
#define BPFPROF_PYTHON_H

/* Probe sites; the attach cookie is site | config index << 8. */
#define BP_PY_SITE_RESUME	0	/* the interpreter's RESUME opcode handler */
#define BP_PY_SITE_RESUME_QUICK	1	/* RESUME_QUICK (3.11: RESUME after warm-up) */
#define BP_PY_SITE_ENTRY	2	/* USDT python:function__entry (fires for gen.throw) */
#define BP_PY_SITE_RETURN	3	/* USDT python:function__return: every frame exit */
#define BP_PY_NSITES		4

#define BP_PY_MAX_CFGS		64

struct bp_py_cfg {
	__u64 site[BP_PY_NSITES];	/* link-time addresses, 0: not probed */
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
	__u8 op_resume, op_resume_quick;	/* opcode numbers */
	__u8 owned_by_generator;	/* FRAME_OWNED_BY_GENERATOR */
	__s8 frame_suspended;		/* FRAME_SUSPENDED */
	__u32 pad;
};

#endif
