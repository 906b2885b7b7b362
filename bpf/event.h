/*
 * The event record: the one definition the BPF programs (closuretrace.bpf.c) and the recorder
 * (cli/) share. Plain fixed-size integers only, so that both compilers lay it out the same way.
 */
#ifndef CLOSURETRACE_EVENT_H
#define CLOSURETRACE_EVENT_H

#ifndef __VMLINUX_H__ /* user space; the BPF side has the types from vmlinux.h */
#include <linux/types.h>
#endif

/* The probe kinds, in docs/probes.md order; passed to BPF as each attachment's cookie. */
enum ct_probe {
	CT_INIT,
	CT_GET,
	CT_PUT,
	CT_SUB,
	CT_CONTINUE_AT,
	CT_RUN,
	CT_FINISH,
	CT_DESTRUCTOR,
	CT_WAIT,
	CT_WAKE,
	CT_SYNC_BEGIN,
	CT_SYNC_END,
	CT_BUG,
	CT_NR_OPS,	       /* the operation probes above; module below */
	CT_MODULE = CT_NR_OPS, /* closure:module(path, base) */
	CT_EXEC,	       /* (follow mode) a traced process exec'ed: it waits, stopped */
};

/* Arguments an operation probe can carry: cl, count, flags, ip and up to three extras. */
#define CT_MAX_ARGS 7

/* One operation probe hit. */
struct ct_event {
	__u64 ts;		 /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 probe_ip;		 /* the probe's own address: the call site of an inlined probe */
	__u32 tid;		 /* the thread that hit the probe */
	__u16 kind;		 /* enum ct_probe */
	__u16 nargs;		 /* how many of args[] the probe carried */
	__u64 args[CT_MAX_ARGS]; /* arg0..arg6 as docs/probes.md numbers them */
};

/* A closure:module hit: an object of the process and its load bias. */
#define CT_PATH_MAX 512
struct ct_module_event {
	__u64 ts;
	__u64 probe_ip; /* always 0: tells the consumer this is a module record */
	__u32 tid;
	__u16 kind; /* CT_MODULE */
	__u16 path_len;
	__u64 base;
	char path[CT_PATH_MAX];
};

/*
 * Follow mode: a traced process (the launched command or a descendant) ran execve. The BPF side
 * has sent it SIGSTOP, so that the tracer attaches to the new program's probes before it runs any
 * of its code; the tracer sends SIGCONT.
 */
struct ct_exec_event {
	__u64 ts;
	__u64 probe_ip; /* always 0 */
	__u32 tid;
	__u16 kind; /* CT_EXEC */
	__u16 unused;
	__u32 pid; /* the process, in the tracer's pid namespace */
	__u32 unused2;
};

/* Slots of the per-CPU statistics map. */
enum ct_stat {
	CT_STAT_HITS, /* probe hits seen by BPF */
	CT_STAT_LOST, /* hits whose record found the ring buffer full */
	CT_NR_STATS,
};

#endif
