// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * closuretrace's kernel side: one program for every closure operation probe (the probe's
 * argument spec, found by the attachment's cookie, says which probe it is), one for
 * closure:module, and one on the dynamic loader's _dl_debug_state. Each hit becomes one
 * ring-buffer record; a record that does not fit is counted, never dropped silently.
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>

#include "event.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Wake the consumer only once this much data waits: a wake-up per event cost 3-6x, measured. */
const volatile __u64 wakeup_bytes = 1 << 20;

/*
 * Stop the process at each loader change until the recorder has attached the new objects (it
 * sends SIGCONT): set for a launched command only, whose parent is the recorder, so that no
 * shell's job control sees the stops.
 */
const volatile bool stop_on_load = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* the recorder sets the size before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CT_NR_STATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * Follow mode (a launched command): the set of traced processes, the launched command, added
 * when it execs, and every process forked by a traced one. The probes' links name each of them
 * (per_process, below), else they are attached for every process that maps the object and
 * filtered here. A uprobe attached for one pid is not inherited by the processes it forks.
 */
const volatile bool follow = false;
const volatile __u64 pidns_dev = 0, pidns_ino = 0; /* the tracer's pid namespace */
const volatile __u32 root_pid = 0;		   /* the launched command, in that namespace */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* tgid, as the kernel's root namespace numbers it */
	__type(value, __u8);
} traced SEC(".maps");

/* The process of every thread the traced processes started: events carry only the thread. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);   /* tid */
	__type(value, __u32); /* its tgid */
} thread_process SEC(".maps");

static __always_inline bool wanted(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return !follow || bpf_map_lookup_elem(&traced, &tgid);
}

static __always_inline void count_lost_n(__u32 slot, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		*v += n; /* per CPU: no other writer */
}

static __always_inline void count_lost(__u32 slot)
{
	count_lost_n(slot, 1);
}

/*
 * The recorder's drain thread reads the ring buffer every 5 ms by itself; it is woken only when
 * a record takes what it has to read past wakeup_bytes, once per crossing. A wakeup is an IPI
 * (irq_work): forced on every record while the reader was behind, it cost a traced get+put 18 %
 * more on a virtual machine, where the IPI traps to the hypervisor. added: this record's bytes
 * when the ring buffer already counts them (reserved), 0 when not yet (bpf_ringbuf_output).
 */
static __always_inline __u64 wakeup_flag(__u64 added, __u64 size)
{
	__u64 after = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) - added + size;

	return after > wakeup_bytes && after - size <= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
								    : BPF_RB_NO_WAKEUP;
}

/*
 * A register by its offset in struct pt_regs, from a copy of the registers made once per hit
 * with plain context loads: a helper call (bpf_probe_read_kernel, as usdt.bpf.h does) per
 * argument doubled the cost of an event.
 */
#define NR_REGS (sizeof(struct pt_regs) / sizeof(__u64))

static __always_inline __u64 read_reg(const __u64 *regs, short off)
{
	__u32 i = (__u32)off / sizeof(__u64);

	return i < NR_REGS ? regs[i] : 0;
}

/*
 * One argument, as usdt.bpf.h's bpf_usdt_arg() reads it, but from a spec looked up once per hit
 * rather than once per argument (9 map lookups per event otherwise).
 */
static __always_inline __u64 read_arg(const __u64 *regs, struct __bpf_usdt_arg_spec *a)
{
	__u64 v = 0;

	switch (a->arg_type) {
	case BPF_USDT_ARG_CONST:
		v = a->val_off;
		break;
	case BPF_USDT_ARG_REG:
		v = read_reg(regs, a->reg_off);
		break;
	case BPF_USDT_ARG_REG_DEREF:
		v = read_reg(regs, a->reg_off);
		bpf_probe_read_user(&v, sizeof(v), (void *)v + a->val_off);
		break;
	}
	v <<= a->arg_bitshift;
	return a->arg_signed ? (__u64)((long)v >> a->arg_bitshift) : v >> a->arg_bitshift;
}

/* Argument i of the hit, or 0 when the probe has fewer. */
static __always_inline __u64 arg(const __u64 *regs, struct __bpf_usdt_spec *spec, int i)
{
	return i < spec->arg_cnt && i < BPF_USDT_MAX_ARG_CNT ? read_arg(regs, &spec->args[i]) : 0;
}

/*
 * --stacks N: the bytes of user stack (N frames, walked by frame pointers) taken at each init
 * and get, after the event in the same record (event.h, CT_STACK_MAX); 0, the default: none,
 * and the verifier removes the branch (a read-only constant), so that the record and the cost
 * of every event are unchanged.
 */
const volatile __u32 stack_bytes = 0;

/* The event's record: with room for a stack after it when one is taken. */
static __always_inline struct ct_event *reserve_op(struct pt_regs *ctx, __u64 kind, __u32 *size)
{
	struct ct_event *e;

	if (stack_bytes && stack_bytes <= CT_STACK_MAX * 8 && (kind == CT_INIT || kind == CT_GET)) {
		*size = sizeof(*e) + stack_bytes;
		e = bpf_ringbuf_reserve(&events, sizeof(*e) + stack_bytes, 0);
		/* Frames not walked are zeroed by the helper: the recorder stops at the first. */
		if (e && bpf_get_stack(ctx, e + 1, stack_bytes, BPF_F_USER_STACK) < 0)
			__builtin_memset(e + 1, 0, 8); /* no stack: an empty one */
		return e;
	}
	*size = sizeof(*e);
	return bpf_ringbuf_reserve(&events, sizeof(*e), 0);
}

static __always_inline int record_op(struct pt_regs *ctx)
{
	int spec_id = __bpf_usdt_spec_id(ctx);
	struct __bpf_usdt_spec *spec;
	__u64 regs[NR_REGS], ip;
	struct ct_event *e;
	__u32 size;

	if (!wanted())
		return 0;
	spec = spec_id < 0 ? NULL : bpf_map_lookup_elem(&__bpf_usdt_specs, &spec_id);
	if (!spec)
		return 0;
	e = reserve_op(ctx, spec->usdt_cookie, &size);
	if (!e) {
		count_lost(CT_STAT_LOST);
		return 0;
	}
	__builtin_memcpy(regs, ctx, sizeof(regs));
	e->ts = bpf_ktime_get_ns();
	ip = arg(regs, spec, 3);
	e->ip = ip ? ip - 1 : PT_REGS_IP(ctx); /* docs/trace-format.md: the calling instruction */
	e->cl = arg(regs, spec, 0);
	e->count = (__u32)arg(regs, spec, 1);
	e->flags = (__u32)arg(regs, spec, 2);
	e->x4 = arg(regs, spec, 4);
	e->x5 = arg(regs, spec, 5);
	e->x6 = (__u8)arg(regs, spec, 6);
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->kind = (__u8)spec->usdt_cookie;
	e->pad = 0;
	bpf_ringbuf_submit(e, wakeup_flag(size, size));
	return 0;
}

static __always_inline int record_module(struct pt_regs *ctx)
{
	struct ct_module_event *e;
	long len, path = 0, base = 0;

	if (!wanted())
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost(CT_STAT_LOST_MODULES);
		return 0;
	}
	e->ts = bpf_ktime_get_ns();
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->kind = CT_MODULE;
	e->pad = 0;
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->pad2 = 0;
	bpf_usdt_arg(ctx, 0, &path);
	bpf_usdt_arg(ctx, 1, &base);
	e->base = base;
	len = bpf_probe_read_user_str(e->path, sizeof(e->path), (const void *)path);
	e->path_len = len > 0 ? len - 1 : 0;
	bpf_ringbuf_submit(e, wakeup_flag(sizeof(*e), sizeof(*e)));
	return 0;
}

/* A batch: the header and up to CT_BATCH_MAX records, assembled here, then copied out. */
struct batch_scratch {
	struct ct_batch_event h;
	__u8 rec[CT_BATCH_MAX * CT_BATCH_RECORD_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct batch_scratch);
} batch_scratch SEC(".maps");

/*
 * Each thread's buffer, learnt from its batch hits, so that the records it still holds when it
 * dies without handing them over (SIGKILL) or when its process execs are drained here.
 */
struct thread_buf {
	__u64 registry;
	__u64 records;
	__u32 tid;  /* the library's number for the thread (its pid namespace's) */
	__u32 tgid; /* the process that named the buffer: only its own thread is drained */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid, as the root namespace numbers it */
	__type(value, struct thread_buf);
} thread_bufs SEC(".maps");

/* Batches that found the ring buffer full, by their sequence numbers (struct ct_lost_key). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ct_lost_key);
	__type(value, __u32); /* records */
} lost_batches SEC(".maps");

/* The current thread's id in its own pid namespace, as gettid() there says. */
static __always_inline __u32 ns_tid(struct task_struct *t)
{
	struct pid *p = BPF_CORE_READ(t, thread_pid);
	unsigned int level = BPF_CORE_READ(p, level);
	/* The array's offset relocated explicitly: an index not known at compile time is not. */
	struct upid *numbers = (void *)p + bpf_core_field_offset(struct pid, numbers);
	int nr = 0;

	bpf_probe_read_kernel(&nr, sizeof(nr), &numbers[level & 63].nr);
	return (__u32)nr;
}

/* Which image of its process the current thread runs: exec changes it. */
static __always_inline __u32 image_of(struct task_struct *t)
{
	return (__u32)BPF_CORE_READ(t, self_exec_id);
}

/* b->h's records, b->rec (size bytes), into the ring buffer; a batch that does not fit is lost. */
static __always_inline void output_batch(struct batch_scratch *b, __u32 size)
{
	struct ct_lost_key key = {.pid = b->h.pid, .image = b->h.image, .records = b->h.records};
	__u32 n = b->h.n;

	if (!bpf_ringbuf_output(&events, b, sizeof(b->h) + size,
				wakeup_flag(0, sizeof(b->h) + size)))
		return;
	/* Records without a sequence number (dropped by the library) are counted as they are. */
	count_lost_n(CT_STAT_LOST_BATCHED, b->h.dropped);
	if (!n)
		return;
	key.seq0 = *(__u32 *)(b->rec + CT_RECORD_SEQ_OFF);
	if (bpf_map_update_elem(&lost_batches, &key, &n, BPF_ANY))
		count_lost_n(CT_STAT_LOST_BATCHED, n);
}

/* The registry's sampling counters into h (0 when it is older than version 3 or unreadable). */
static __always_inline void read_trees(struct ct_batch_event *h, __u64 registry)
{
	__u32 version = 0;
	__u64 c[2] = {};

	if (!bpf_probe_read_user(&version, sizeof(version),
				 (const void *)(registry + CT_REGISTRY_VERSION_OFF)) &&
	    version >= 3)
		bpf_probe_read_user(c, sizeof(c), (const void *)(registry + CT_REGISTRY_TREES_OFF));
	h->trees = c[0];
	h->trees_left_out = c[1];
}

/*
 * closure:batch: one thread's buffer of records, copied from the process as one ring-buffer
 * record. A batch that does not fit is counted record by record.
 */
static __always_inline int record_batch(struct pt_regs *ctx)
{
	long registry = 0, recs = 0, n = 0, tid = 0, handed = 0, dropped = 0;
	struct task_struct *task = (void *)bpf_get_current_task();
	struct thread_buf tb = {}, *known;
	struct batch_scratch *b;
	__u32 zero = 0, size, me;

	if (!wanted())
		return 0;
	b = bpf_map_lookup_elem(&batch_scratch, &zero);
	if (!b)
		return 0;
	bpf_usdt_arg(ctx, 0, &registry);
	bpf_usdt_arg(ctx, 1, &recs);
	bpf_usdt_arg(ctx, 2, &n);
	bpf_usdt_arg(ctx, 3, &tid);
	bpf_usdt_arg(ctx, 4, &handed);
	bpf_usdt_arg(ctx, 5, &dropped);
	if (n < 0 || n > CT_BATCH_MAX)
		n = 0;
	/* The thread's own buffer (at process exit one thread hands over the others'): remember. */
	me = (__u32)bpf_get_current_pid_tgid();
	known = bpf_map_lookup_elem(&thread_bufs, &me);
	if ((!known || known->records != (__u64)recs || known->registry != (__u64)registry) &&
	    (__u32)tid == ns_tid(task)) {
		tb.registry = registry;
		tb.records = recs;
		tb.tid = (__u32)tid;
		tb.tgid = bpf_get_current_pid_tgid() >> 32;
		bpf_map_update_elem(&thread_bufs, &me, &tb, BPF_ANY);
	}
	size = (__u32)n * CT_BATCH_RECORD_SIZE;
	if (size > sizeof(b->rec))
		return 0;
	b->h.kind = CT_BATCH;
	b->h.why = CT_BATCH_HANDED;
	b->h.foreign = (__u32)tid != ns_tid(task);
	b->h.pad = 0;
	b->h.image = image_of(task);
	b->h.registry = registry;
	b->h.records = recs;
	b->h.handed = handed;
	read_trees(&b->h, (__u64)registry);
	b->h.pid = bpf_get_current_pid_tgid() >> 32;
	b->h.tid = (__u32)tid;
	b->h.n = (__u32)n;
	b->h.dropped = (__u32)dropped;
	if (size && bpf_probe_read_user(b->rec, size, (const void *)recs))
		b->h.n = 0, size = 0, b->h.dropped += (__u32)n; /* unreadable: counted as dropped */
	output_batch(b, size);
	return 0;
}

/*
 * The current thread dies (do_exit, before exit_mm: its memory is still there) or its process
 * execs (before the old image is gone): the records still in its buffer, [0, n), as a batch.
 * A record whose sequence number is not base + slot was being written when the thread was
 * stopped: the recorder leaves it out. Records that cannot be read are counted as lost.
 */
static __always_inline void drain_thread(__u8 why)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u32 me = (__u32)bpf_get_current_pid_tgid(), zero = 0, n, size;
	struct thread_buf tb, *known = bpf_map_lookup_elem(&thread_bufs, &me);
	struct batch_scratch *b;
	struct ct_buf_head head;

	if (!known)
		return;
	tb = *known;
	bpf_map_delete_elem(&thread_bufs, &me);
	/*
	 * Named by another process (a buffer head read from a traced process says which thread
	 * owns it, and may lie): this thread's memory is not that process's to read.
	 */
	if (tb.tgid != (__u32)(bpf_get_current_pid_tgid() >> 32))
		return;
	b = bpf_map_lookup_elem(&batch_scratch, &zero);
	if (!b)
		return;
	if (bpf_probe_read_user(&head, sizeof(head), (const void *)(tb.records - CT_BUF_HEAD_SIZE)))
		return; /* unmapped: nothing the library could have handed over either */
	if (!head.owner || head.tid != tb.tid)
		return; /* handed over and given up at the thread's exit: another thread's now */
	n = head.n < CT_BATCH_MAX ? head.n : CT_BATCH_MAX;
	read_trees(&b->h, tb.registry);
	if (!n && !head.dropped && !b->h.trees)
		return; /* an empty drain only to say how many trees were sampled */
	size = n * CT_BATCH_RECORD_SIZE;
	b->h.kind = CT_BATCH;
	b->h.why = why;
	b->h.foreign = 0; /* the exiting thread's own buffer, its tid known to BPF */
	b->h.pad = 0;
	b->h.image = image_of(task);
	b->h.registry = tb.registry;
	b->h.records = tb.records;
	b->h.handed = 0; /* not handed over: the library's total is unchanged */
	/* h.trees, h.trees_left_out: read above */
	b->h.pid = bpf_get_current_pid_tgid() >> 32;
	b->h.tid = tb.tid;
	b->h.n = n;
	b->h.dropped = head.dropped;
	if (size > sizeof(b->rec))
		return;
	if (size && bpf_probe_read_user(b->rec, size, (const void *)tb.records)) {
		/*
		 * Not resident: listed as a lost batch from the buffer's base, so that the records
		 * a poll took before are not counted lost too (the recorder subtracts them).
		 */
		struct ct_lost_key key = {.pid = b->h.pid,
					  .image = b->h.image,
					  .records = b->h.records,
					  .seq0 = (__u32)head.base};

		if (bpf_map_update_elem(&lost_batches, &key, &n, BPF_ANY))
			count_lost_n(CT_STAT_LOST_BATCHED, n);
		b->h.n = 0, size = 0;
	}
	output_batch(b, size);
}

/*
 * A thread ends: sched_process_exit fires in do_exit before exit_mm since Linux 6.16 (with its
 * group_dead argument), so its memory is still there; on older kernels the read fails and the
 * records are lost as before. (fentry on do_exit is refused: noreturn; kprobes may be absent.)
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_thread_exit, struct task_struct *p)
{
	drain_thread(CT_BATCH_THREAD_EXIT);
	return 0;
}

/*
 * An exec passes its point of no return (Linux 6.10): the thread still runs the old image with
 * its memory (the other threads are killed next, each through do_exit with the old memory). A
 * plain tracepoint: detaching it waits for no RCU-tasks grace period, where the syscalls' do
 * (45-85 ms measured, the largest part of what every check paid to end).
 */
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(on_prepare_exec)
{
	drain_thread(CT_BATCH_EXEC);
	return 0;
}

/*
 * Before Linux 6.10, the same at the exec syscalls' entry. An exec that fails leaves the records
 * in the buffer: handed over later, they are received twice, and written once.
 */
SEC("tracepoint/syscalls/sys_enter_execve")
int on_execve(void *ctx)
{
	drain_thread(CT_BATCH_EXEC);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_execveat")
int on_execveat(void *ctx)
{
	drain_thread(CT_BATCH_EXEC);
	return 0;
}

/*
 * Every closure probe, whichever it is: the attachment's usdt cookie names it (enum ct_kind). One
 * program, so that an object takes one uprobe_multi link: each link's detach waits for an
 * RCU-tasks grace period (30-40 ms measured here), and two links seldom share one.
 */
static __always_inline int record_probe(struct pt_regs *ctx)
{
	long kind = bpf_usdt_cookie(ctx);

	return kind == CT_MODULE  ? record_module(ctx)
	       : kind == CT_BATCH ? record_batch(ctx)
				  : record_op(ctx);
}

/*
 * Two attachments of the same code. on_probe_multi is attached with one uprobe_multi link per
 * object (the recorder sets its attach type before load): attaching and detaching then cost one
 * RCU grace period per object, where libbpf 1.1's one perf event per call site costs one per
 * site (80-250 ms each, measured). on_probe is libbpf's attach_usdt, for kernels without
 * uprobe_multi (before 6.6).
 */
SEC("usdt")
int on_probe(struct pt_regs *ctx)
{
	return record_probe(ctx);
}

SEC("usdt")
int on_probe_multi(struct pt_regs *ctx)
{
	return record_probe(ctx);
}

/* The dynamic loader's _dl_debug_state: objects were added or removed. */
SEC("uprobe")
int on_loader(struct pt_regs *ctx)
{
	struct ct_loader_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	/* No record, no stop: nobody would know to let the process go (the rescan finds it). */
	if (!e)
		return 0;
	if (stop_on_load)
		bpf_send_signal(19 /* SIGSTOP */);
	e->ts = bpf_ktime_get_ns();
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->kind = CT_LOADER;
	e->pad[0] = e->pad[1] = e->pad[2] = 0;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/*
 * Whether a process forked by a traced one is new to the set (threads share their process's
 * entry): it is traced from now on.
 */
static __always_inline bool follow_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = parent->tgid, child_tid = child->pid, child_tgid = child->tgid;
	__u8 yes = 1;

	if (!bpf_map_lookup_elem(&traced, &parent_tgid))
		return false;
	bpf_map_update_elem(&thread_process, &child_tid, &child_tgid, BPF_ANY);
	if (child_tid != child_tgid)
		return false;
	bpf_map_update_elem(&traced, &child_tgid, &yes, BPF_ANY);
	return true;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	follow_fork(parent, child);
	return 0;
}

/*
 * Attached per process (set before load), the probes' links name each traced process: a forked
 * one inherits its parent's breakpoints and raised semaphores, but no link runs the programs
 * for it until the recorder has made its own. Stopped before its first instruction, announced;
 * the recorder sends SIGCONT once its links are made. Linux 6.13 (the recorder loads on_fork
 * instead on older kernels).
 */
const volatile bool per_process = false;

extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type,
				__u64 value) __ksym __weak;

/* A CT_FORK or CT_EXIT record, or NULL (the ring buffer is full). */
static __always_inline struct ct_proc_event *proc_record(__u8 kind, __u32 pid)
{
	struct ct_proc_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return NULL;
	e->ts = bpf_ktime_get_ns();
	e->kind = kind;
	e->flags = 0;
	e->pad[0] = e->pad[1] = 0;
	e->pid = pid;
	e->tid = pid;
	e->parent = 0;
	return e;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork_stop, struct task_struct *parent, struct task_struct *child)
{
	struct ct_proc_event *e;

	if (!follow_fork(parent, child))
		return 0;
	/* No record, no stop: nobody would know to let it go. It runs unlinked: say so. */
	e = proc_record(CT_FORK, (__u32)child->tgid);
	if (!e) {
		count_lost(CT_STAT_LOST);
		return 0;
	}
	e->parent = (__u32)parent->tgid;
	if (!bpf_send_signal_task(child, 19 /* SIGSTOP */, PIDTYPE_TGID, 0))
		e->flags = CT_PROC_STOPPED;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* An exec of a traced process (or the launched command's first): stop it for the tracer. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct bpf_pidns_info ns;
	struct ct_proc_event *e;
	__u8 yes = 1;

	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)))
		return 0; /* outside the tracer's namespace: not ours */
	if (!bpf_map_lookup_elem(&traced, &tgid)) {
		if (ns.tgid != root_pid)
			return 0;
		bpf_map_update_elem(&traced, &tgid, &yes, BPF_ANY);
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost(CT_STAT_LOST);
		return 0;
	}
	e->ts = bpf_ktime_get_ns();
	e->pid = ns.tgid;
	e->tid = ns.pid;
	e->kind = CT_EXEC;
	/* old_pid: the exec'ing thread's id before it took the process's (the kernel's numbers). */
	e->flags = (__u32)old_pid != tgid ? CT_PROC_MOVED : 0;
	e->pad[0] = e->pad[1] = 0;
	e->parent = 0;
	bpf_send_signal(19 /* SIGSTOP */);
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* A process that ended leaves the set: its pid may be reused by anyone. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;
	struct ct_proc_event *e;

	if (p->pid != tgid || bpf_map_delete_elem(&traced, &tgid))
		return 0;
	/* Per process: its links go (they can fire no more; lost, they go at the end). No hurry:
	 * no wake-up. */
	if (per_process && (e = proc_record(CT_EXIT, tgid)))
		bpf_ringbuf_submit(e, wakeup_flag(sizeof(*e), sizeof(*e)));
	return 0;
}

/* One of touch_ring's records: reserved (its header written) and discarded at once. */
static long touch_one(__u64 index, void *ctx)
{
	void *r = bpf_ringbuf_reserve(&events, CT_TOUCH_RECORD_SIZE, 0);

	(void)index;
	if (!r)
		return 1; /* full: the recorder reads (skips) them and runs this again */
	bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
	++*(__u32 *)ctx;
	return 0;
}

/*
 * Run by the recorder before it attaches anything (BPF_PROG_TEST_RUN): writes into every page of
 * the ring buffer once, so that the traced process's first pass through it does not pay for
 * first touches (on a virtual machine with shadow paging, measured: a service's CPU per request
 * 25 % higher during the first pass of a 16 MiB ring). Returns the records reserved.
 */
SEC("syscall")
int touch_ring(void *ctx)
{
	__u32 n = 0;

	(void)ctx;
	bpf_loop(1 << 23, touch_one, &n, 0);
	return (int)n;
}
