// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * closuretrace's kernel side: one program for every closure operation probe (the attachment's
 * cookie says which probe it is) and one for closure:module. Each hit becomes one ring-buffer
 * record; a record that does not fit is counted, never dropped silently.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "event.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Wake the consumer only once this much data waits: a wake-up per event costs 3-6x (tech-notes). */
const volatile __u64 wakeup_bytes = 1 << 20;

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
 * Follow mode (check): probes are attached for every process (pid -1) and filtered here by the
 * set of traced processes: the launched command, added when it execs, and every process forked
 * by a traced one. A pid-filtered attach would not follow fork (tech-notes section 1).
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

static __always_inline bool wanted(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return !follow || bpf_map_lookup_elem(&traced, &tgid);
}

static __always_inline void count(__u32 slot)
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

SEC("usdt")
int on_op(struct pt_regs *ctx)
{
	struct ct_event *e;
	int n, i;

	if (!wanted())
		return 0;
	count(CT_STAT_HITS);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(CT_STAT_LOST);
		return 0;
	}
	e->ts = bpf_ktime_get_ns();
	e->probe_ip = PT_REGS_IP(ctx);
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->kind = (__u16)bpf_usdt_cookie(ctx);
	n = bpf_usdt_arg_cnt(ctx);
	e->nargs = n < 0 ? 0 : n;
	for (i = 0; i < CT_MAX_ARGS; i++) {
		long v = 0;

		if (i < n)
			bpf_usdt_arg(ctx, i, &v);
		e->args[i] = v;
	}
	bpf_ringbuf_submit(e, wakeup_flag());
	return 0;
}

SEC("usdt")
int BPF_USDT(on_module, const char *path, long base)
{
	struct ct_module_event *e;
	long len;

	if (!wanted())
		return 0;
	count(CT_STAT_HITS);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(CT_STAT_LOST);
		return 0;
	}
	e->ts = bpf_ktime_get_ns();
	e->probe_ip = 0;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->kind = CT_MODULE;
	e->base = base;
	len = bpf_probe_read_user_str(e->path, sizeof(e->path), path);
	e->path_len = len > 0 ? len - 1 : 0;
	bpf_ringbuf_submit(e, wakeup_flag());
	return 0;
}

/* A process forked by a traced one is traced (threads share their process's entry). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = parent->tgid, child_tgid = child->tgid;
	__u8 yes = 1;

	if (child->pid != child_tgid || !bpf_map_lookup_elem(&traced, &parent_tgid))
		return 0;
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
		count(CT_STAT_LOST);
		return 0;
	}
	e->ts = bpf_ktime_get_ns();
	e->probe_ip = 0;
	e->tid = ns.pid;
	e->kind = CT_EXEC;
	e->unused = 0;
	e->pid = ns.tgid;
	e->unused2 = 0;
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
