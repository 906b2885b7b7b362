/*
 * The event record: the one definition the BPF programs (closuretrace.bpf.c) and the recorder
 * (cli/) share. Plain fixed-size integers only, so that both compilers lay it out the same way.
 */
#ifndef CLOSURETRACE_EVENT_H
#define CLOSURETRACE_EVENT_H

#ifndef __VMLINUX_H__ /* user space; the BPF side has the types from vmlinux.h */
#include <linux/types.h>
#endif

#include "closure_probes.h"

/*
 * The probe kinds: the operation probes of the contract (closure_probes.h), in its order, then
 * the records that are not operations. Passed to BPF as each attachment's cookie.
 */
/* clang-format off: the list expansion confuses its indentation */
enum ct_probe {
#define CT_PROBE_ENUM(name, NAME, a4, a5, a6) CT_##NAME,
	CLOSURE_PROBE_LIST(CT_PROBE_ENUM)
#undef CT_PROBE_ENUM
	CT_NR_OPS,	       /* the operation probes above; module below */
	CT_MODULE = CT_NR_OPS, /* closure:module(path, base) */
	CT_LOADER,	       /* the dynamic loader changed the process's objects */
	CT_EXEC,	       /* (follow mode) a traced process exec'ed: it waits, stopped */
};
/* clang-format on */

/*
 * The ring-buffer records. Every record begins with its kind (one byte, enum ct_probe), so that
 * the consumer switches on the first byte, never on the size (as retsnoop does). A new transport
 * (a batch of operations in one record) is one more kind here and one more case in the
 * recorder's switch (cli/event_loop.c).
 */

/*
 * One operation probe hit: 56 bytes, so that with the ring buffer's 8-byte header each event is
 * one 64-byte cache line (ring-buffer writes are most of an event's cost).
 */
struct ct_event {
	__u8 kind; /* enum ct_probe: an operation */
	__u8 x6;   /* arg6 (continue_at's how: small) */
	__u16 pad;
	__u32 tid;   /* the thread that hit the probe */
	__u64 ts;    /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 ip;    /* the call site: arg3 - 1 for a return address, else the probe's address */
	__u64 cl;    /* arg0 */
	__u64 x4;    /* arg4 (0 when absent) */
	__u64 x5;    /* arg5 */
	__u32 count; /* arg1 */
	__u32 flags; /* arg2 */
};

/* A closure:module hit: an object of the process and its load bias. */
#define CT_PATH_MAX 512
struct ct_module_event {
	__u8 kind; /* CT_MODULE */
	__u8 pad;
	__u16 path_len;
	__u32 tid;
	__u64 ts;
	__u64 base;
	char path[CT_PATH_MAX];
};

/*
 * The dynamic loader called _dl_debug_state (its debugger hook, after each change to the loaded
 * objects): the recorder reads the maps at once, to attach a dlopen'ed library's probes.
 */
struct ct_loader_event {
	__u8 kind; /* CT_LOADER */
	__u8 pad[3];
	__u32 tid;
	__u64 ts;
};

/*
 * Follow mode: a traced process (the launched command or a descendant) ran execve. The BPF side
 * has sent it SIGSTOP, so that the tracer attaches to the new program's probes before it runs any
 * of its code; the tracer sends SIGCONT.
 */
struct ct_exec_event {
	__u8 kind; /* CT_EXEC */
	__u8 pad[3];
	__u32 pid; /* the process, in the tracer's pid namespace */
	__u32 tid;
	__u32 pad2;
	__u64 ts;
};

/* Slots of the per-CPU statistics map. */
enum ct_stat {
	CT_STAT_LOST,	      /* operation hits whose record found the ring buffer full */
	CT_STAT_LOST_MODULES, /* module hits likewise: not events, but symbols may suffer */
	CT_NR_STATS,
};

#endif
