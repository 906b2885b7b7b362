/*
 * The event record: the one definition the BPF programs (closuretrace.bpf.c) and the recorder
 * (recorder/) share. Plain fixed-size integers only, so that both compilers lay it out the same
 * way.
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
		CT_NR_OPS,     /* the operation probes above; module below */
	CT_MODULE = CT_NR_OPS, /* closure:module(path, base) */
	CT_LOADER,	       /* the dynamic loader changed the process's objects */
	CT_EXEC,	       /* (follow mode) a traced process exec'ed: it waits, stopped */
	CT_BATCH,	       /* closure:batch(registry, records, n, tid, handed, dropped) */
	CT_NAME,	       /* never in the ring: a batch's name record, decoded (below) */
	CT_FORK,	       /* (per process) a traced process forked one: it waits, stopped */
	CT_EXIT,	       /* (per process) a traced process ended */
};
/* clang-format on */

/*
 * The ring-buffer records. Every record begins with its kind (one byte, enum ct_probe), so that
 * the consumer switches on the first byte, never on the size (as retsnoop does). A new transport
 * (a batch of operations in one record) is one more kind here and one more case in the
 * recorder's switch on it (session_take_record in recorder/session_life.c).
 */

/*
 * One operation probe hit: 56 bytes, so that with the ring buffer's 8-byte header each event is
 * one 64-byte cache line (ring-buffer writes are most of an event's cost).
 */
struct ct_event {
	__u8 kind;   /* enum ct_probe: an operation */
	__u8 x6;     /* arg6 (continue_at's how: small) */
	__u16 pad;   /* 0; CT_EVENT_SNAPSHOT: an init made by the recorder (never by BPF) */
	__u32 tid;   /* the thread that hit the probe */
	__u64 ts;    /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 ip;    /* the call site: arg3 - 1 for a return address, else the probe's address */
	__u64 cl;    /* arg0 */
	__u64 x4;    /* arg4 (0 when absent) */
	__u64 x5;    /* arg5 */
	__u32 count; /* arg1 */
	__u32 flags; /* arg2 */
};

/*
 * --stacks N (const volatile stack_bytes = N * 8): an init's or a get's record is the event
 * followed by N user-stack addresses (bpf_get_stack, innermost first: the probe's address, then
 * return addresses), the frames not walked 0. Without --stacks the record is the event alone.
 */
#define CT_STACK_MAX 64

/* CT_NAME: a batch's name record (closure_batch.h), decoded; recorder/batch_decode.h lays it out
 * in a struct ct_event (ct_name_set). */

/* ct_event.pad: a synthetic init, a closure alive at attach (recorder/snapshot.h) */
#define CT_EVENT_SNAPSHOT 1

/* A closure:module hit: an object of the process and its load bias. */
#define CT_PATH_MAX 512
struct ct_module_event {
	__u8 kind; /* CT_MODULE */
	__u8 pad;
	__u16 path_len;
	__u32 tid;
	__u64 ts;
	__u32 uid; /* the thread's user: what it may read is what a record may name once it exited
		    */
	__u32 pad2;
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
 * Follow mode: a traced process (the launched command or a descendant) ran execve (CT_EXEC). The
 * BPF side has sent it SIGSTOP, so that the tracer attaches to the new program's probes before
 * it runs any of its code; the tracer sends SIGCONT. With the probes attached per process
 * (docs/design.md, "Attaching per process"), also: a traced process forked another (CT_FORK,
 * the child stopped likewise until its links are made) or ended (CT_EXIT: its links go).
 */
#define CT_PROC_STOPPED 1 /* CT_FORK: the child was sent SIGSTOP */
#define CT_PROC_MOVED	2 /* CT_EXEC: not by its first thread (the pid names another task) */
struct ct_proc_event {
	__u8 kind;  /* CT_EXEC, CT_FORK or CT_EXIT */
	__u8 flags; /* CT_PROC_* */
	__u8 pad[2];
	__u32 pid;    /* the process, in the tracer's pid namespace */
	__u32 tid;    /* CT_EXEC: the thread, the same namespace */
	__u32 parent; /* CT_FORK: the process that forked it */
	__u64 ts;
};

/*
 * A closure:batch hit, or a thread's buffer drained by BPF when the thread exits or its process
 * execs: this header, then n records of lib/include/closure_batch.h's layout
 * (CT_BATCH_RECORD_SIZE bytes each), as many as the thread had buffered.
 */
#define CT_BATCH_RECORD_SIZE 56
#define CT_BATCH_MAX	     256 /* CLOSURE_BATCH_RECORDS */
#define CT_RECORD_SEQ_OFF    48	 /* offsetof(struct closure_batch_record, seq) */
enum ct_batch_why {
	CT_BATCH_HANDED,      /* the library handed the buffer over */
	CT_BATCH_THREAD_EXIT, /* drained at the thread's do_exit (SIGKILL, no exit handler) */
	CT_BATCH_EXEC,	      /* drained as the thread's process execs: the image ends */
};
struct ct_batch_event {
	__u8 kind;    /* CT_BATCH */
	__u8 why;     /* enum ct_batch_why */
	__u8 foreign; /* 1: tid is not the thread that handed the buffer over (another thread's
			 buffer, at process exit; or a lie: the recorder checks it) */
	__u8 pad;
	__u32 pid;	/* the process (tgid) */
	__u32 tid;	/* arg3: the thread whose buffer this is */
	__u32 n;	/* arg2 */
	__u32 dropped;	/* arg5 */
	__u32 image;	/* the process's exec count (task self_exec_id): seqs restart at exec */
	__u64 registry; /* arg0: the process's struct closure_batch_registry */
	__u64 records;	/* arg1: the buffer's records in the process (names the buffer) */
	__u64 handed;	/* arg4: records the process had handed over, these included */
	/* The registry's sampling counters when it was read (version 3 on, else 0): roots decided
	 * while a recorder sampled, and those left out (lib/include/closure_batch.h). */
	__u64 trees;
	__u64 trees_left_out;
};

/* Where struct closure_batch_registry keeps its version and its sampling counters
 * (recorder/batch_proc.c checks them against the header). */
#define CT_REGISTRY_VERSION_OFF 4
#define CT_REGISTRY_TREES_OFF	64

/*
 * The head of a struct closure_batch_buf (lib/include/closure_batch.h), as BPF reads it at a
 * thread's exit; its records follow at CT_BUF_HEAD_SIZE.
 */
struct ct_buf_head {
	__u64 next;
	__u64 base;
	__u64 first_ts;
	__u32 owner;
	__u32 tid;
	__u32 n;
	__u32 depth;
	__u32 dropped;
	__u32 pad;
};
#define CT_BUF_HEAD_SIZE 48

/*
 * A batch whose records did not reach the ring buffer (full): which sequence numbers, so that
 * the recorder counts as lost only those it did not get another way (a poll, a drain).
 */
struct ct_lost_key {
	__u32 pid;
	__u32 image;
	__u64 records;
	__u32 seq0; /* the first record's sequence number */
	__u32 pad;
};

/*
 * touch_ring's records: one header in every 4 KiB page of the ring buffer (a record takes its
 * size plus an 8-byte header, rounded up to 8 bytes: 4,088 bytes).
 */
#define CT_TOUCH_RECORD_SIZE 4080

/* Slots of the per-CPU statistics map. */
enum ct_stat {
	CT_STAT_LOST,	      /* operation hits whose record found the ring buffer full */
	CT_STAT_LOST_MODULES, /* module hits likewise: not events, but symbols may suffer */
	CT_STAT_LOST_BATCHED, /* batched records lost and not listed in the lost map (full) */
	CT_NR_STATS,
};

#endif
