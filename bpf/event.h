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
	CT_LOADER,	       /* the dynamic loader changed the process's objects */
	CT_EXEC,	       /* (follow mode) a traced process exec'ed: it waits, stopped */
	CT_BATCH,	       /* closure:batch(registry, records, n, tid, handed, dropped) */
};

/*
 * One operation probe hit: 56 bytes, so that with the ring buffer's 8-byte header each event is
 * one 64-byte cache line (ring-buffer writes are most of an event's cost).
 */
struct ct_event {
	__u64 ts;    /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 ip;    /* the call site: arg3 - 1 for a return address, else the probe's address */
	__u64 cl;    /* arg0 */
	__u64 x4;    /* arg4 (0 when absent) */
	__u64 x5;    /* arg5 */
	__u32 count; /* arg1 */
	__u32 flags; /* arg2 */
	__u32 tid;   /* the thread that hit the probe */
	__u8 kind;   /* enum ct_probe */
	__u8 x6;     /* arg6 (continue_at's how: small) */
	__u16 pad;
};

/* A closure:module hit: an object of the process and its load bias. */
#define CT_PATH_MAX 512
struct ct_module_event {
	__u64 ts;
	__u64 base;
	__u32 tid;
	__u16 kind; /* CT_MODULE; its size tells this record from a struct ct_event */
	__u16 path_len;
	char path[CT_PATH_MAX];
};

/*
 * The dynamic loader called _dl_debug_state (its debugger hook, after each change to the loaded
 * objects): the recorder reads the maps at once, to attach a dlopen'ed library's probes.
 */
struct ct_loader_event {
	__u64 ts;
	__u32 tid;
	__u16 kind; /* CT_LOADER; its size tells this record from the others */
	__u16 pad;
};

/*
 * Follow mode: a traced process (the launched command or a descendant) ran execve. The BPF side
 * has sent it SIGSTOP, so that the tracer attaches to the new program's probes before it runs any
 * of its code; the tracer sends SIGCONT. Its size tells it from the other records.
 */
struct ct_exec_event {
	__u64 ts;
	__u32 pid; /* the process, in the tracer's pid namespace */
	__u32 tid;
	__u16 kind; /* CT_EXEC */
	__u16 pad[3];
};

/*
 * A closure:batch hit: this header, then n records of lib/include/closure_batch.h's layout
 * (CT_BATCH_RECORD_SIZE bytes each). The magic at offset 0 tells it from the other records,
 * which all start with a timestamp (far below it).
 */
#define CT_BATCH_MAGIC	     0xc1b47c00c1b47c00ull
#define CT_BATCH_RECORD_SIZE 56
#define CT_BATCH_MAX	     256 /* CLOSURE_BATCH_RECORDS */
struct ct_batch_event {
	__u64 magic;	/* CT_BATCH_MAGIC */
	__u64 registry; /* arg0: the process's struct closure_batch_registry */
	__u64 records;	/* arg1: the buffer's records in the process (names the buffer) */
	__u64 handed;	/* arg4: records the process had handed over, these included */
	__u32 pid;	/* the process (tgid) */
	__u32 tid;	/* arg3: the thread whose buffer this is */
	__u32 n;	/* arg2 */
	__u32 dropped;	/* arg5 */
};

/* Slots of the per-CPU statistics map. */
enum ct_stat {
	CT_STAT_LOST,	      /* operation hits whose record found the ring buffer full */
	CT_STAT_LOST_MODULES, /* module hits likewise: not events, but symbols may suffer */
	CT_STAT_LOST_BATCHED, /* records of batches that found the ring buffer full */
	CT_NR_STATS,
};

#endif
