/*
 * Reading another process's memory without stopping it (process_vm_readv, or /proc/PID/mem
 * where that is not available). Needs ptrace rights over the process: root, or its owner when
 * the Yama ptrace scope allows.
 */
#ifndef CLOSURETRACE_PROC_MEM_H
#define CLOSURETRACE_PROC_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Process pid's executable (/proc/PID/exe) into buf as a string: false when it cannot be read
 * (gone, not permitted) or is longer than len - 1. */
bool proc_exe(pid_t pid, char *buf, size_t len);

/* Copies len bytes at addr in process pid into buf: 0, or -errno (-EFAULT: not all mapped). */
int proc_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* The CPU time process pid has used, user and system, in ns (to a clock tick): false when its
 * /proc/PID/stat cannot be read (gone). */
bool proc_cpu_ns(pid_t pid, uint64_t *ns);

/* The state letter and flags of /proc/PID/stat ('?' and 0 when it cannot be read). */
char proc_state(pid_t pid, unsigned long *flags);
#define PROC_PF_EXITING 0x00000004ul /* linux/sched.h: the process is ending */
#define PROC_PF_KTHREAD 0x00200000ul /* linux/sched.h: a kernel thread */

#endif
