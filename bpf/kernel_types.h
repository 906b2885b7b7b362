/*
 * The few kernel types closuretrace.bpf.c reads, declared here instead of a vmlinux.h dumped from
 * the build machine's kernel BTF, so that the BPF object builds where there is none (a container,
 * a package builder). Each struct carries only the fields we read; preserve_access_index makes
 * every access a CO-RE relocation that libbpf resolves against the running kernel's BTF at load.
 * The UAPI (map types, helper flags, struct bpf_pidns_info) comes from <linux/bpf.h>.
 */
#ifndef CLOSURETRACE_KERNEL_TYPES_H
#define CLOSURETRACE_KERNEL_TYPES_H

/* bpf_tracing.h then names pt_regs' fields as the kernel does (di, ip), not as UAPI (rdi, rip). */
#define __VMLINUX_H__

#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>

typedef int pid_t;

/* Which of a task's ids bpf_send_signal_task signals (include/linux/pid_types.h). */
enum pid_type {
	PIDTYPE_PID,
	PIDTYPE_TGID,
	PIDTYPE_PGID,
	PIDTYPE_SID,
	PIDTYPE_MAX,
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

#include "arch.h" /* struct pt_regs */

struct pid_namespace;
struct linux_binprm;

/* One pid number of a task, as seen from one namespace level. */
struct upid {
	int nr;
	struct pid_namespace *ns;
};

struct pid {
	unsigned int level;
	struct upid numbers[1];
};

struct task_struct {
	pid_t pid;
	pid_t tgid;
	struct pid *thread_pid;
	__u64 self_exec_id;
};

#pragma clang attribute pop

#endif
