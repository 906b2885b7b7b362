// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * closuretrace's kernel side: one program for every closure operation probe (the probe's
 * argument spec, found by the attachment's cookie, says which probe it is), one for
 * closure:module, and one on the dynamic loader's _dl_debug_state. Each hit becomes one
 * ring-buffer record; a record that does not fit is counted, never dropped silently.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
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
 * Follow mode (check): probes are attached for every process and filtered here by the set of
 * traced processes: the launched command, added when it execs, and every process forked by a
 * traced one. A uprobe attached for one pid is not inherited by the processes it forks.
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

static __always_inline void count_lost(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		*v += 1; /* per CPU: no other writer */
}

static __always_inline __u64 wakeup_flag(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > wakeup_bytes ? BPF_RB_FORCE_WAKEUP
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

static __always_inline int record_op(struct pt_regs *ctx)
{
	int spec_id = __bpf_usdt_spec_id(ctx);
	struct __bpf_usdt_spec *spec;
	__u64 regs[NR_REGS], ip;
	struct ct_event *e;

	if (!wanted())
		return 0;
	spec = spec_id < 0 ? NULL : bpf_map_lookup_elem(&__bpf_usdt_specs, &spec_id);
	if (!spec)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
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
	bpf_ringbuf_submit(e, wakeup_flag());
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
	bpf_usdt_arg(ctx, 0, &path);
	bpf_usdt_arg(ctx, 1, &base);
	e->base = base;
	len = bpf_probe_read_user_str(e->path, sizeof(e->path), (const void *)path);
	e->path_len = len > 0 ? len - 1 : 0;
	bpf_ringbuf_submit(e, wakeup_flag());
	return 0;
}

/*
 * Two attachments of the same code. The *_multi programs are attached with one uprobe_multi link
 * per object (the recorder sets their attach type before load): attaching and detaching then
 * cost one RCU grace period per object, where libbpf 1.1's one perf event per call site costs one
 * per site (80-250 ms each, measured). The plain ones are libbpf's attach_usdt, for kernels
 * without uprobe_multi (before 6.6).
 */
SEC("usdt")
int on_op(struct pt_regs *ctx)
{
	return record_op(ctx);
}

SEC("usdt")
int on_module(struct pt_regs *ctx)
{
	return record_module(ctx);
}

SEC("usdt")
int on_op_multi(struct pt_regs *ctx)
{
	return record_op(ctx);
}

SEC("usdt")
int on_module_multi(struct pt_regs *ctx)
{
	return record_module(ctx);
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

/* A process forked by a traced one is traced (threads share their process's entry). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = parent->tgid, child_tid = child->pid, child_tgid = child->tgid;
	__u8 yes = 1;

	if (!bpf_map_lookup_elem(&traced, &parent_tgid))
		return 0;
	bpf_map_update_elem(&thread_process, &child_tid, &child_tgid, BPF_ANY);
	if (child_tid == child_tgid)
		bpf_map_update_elem(&traced, &child_tgid, &yes, BPF_ANY);
	return 0;
}

/* An exec of a traced process (or the launched command's first): stop it for the tracer. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct bpf_pidns_info ns;
	struct ct_exec_event *e;
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
	e->pad[0] = e->pad[1] = e->pad[2] = 0;
	e->pad2 = 0;
	bpf_send_signal(19 /* SIGSTOP */);
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* A process that ended leaves the set: its pid may be reused by anyone. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (p->pid == tgid)
		bpf_map_delete_elem(&traced, &tgid);
	return 0;
}
