/*
 * USDT attachment through uprobe_multi links (Linux 6.6+): one link per object and program
 * instead of libbpf 1.1's one perf event per call site. It fills the argument specs that
 * libbpf's usdt.bpf.h reads (the __bpf_usdt_specs map, indexed by the uprobe's BPF cookie), so
 * the BPF side is the same whichever way it was attached.
 */
#ifndef CLOSURETRACE_USDT_MULTI_H
#define CLOSURETRACE_USDT_MULTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf_probes.h"

/* The BPF attach type for uprobe_multi programs (not in Debian 12's linux/bpf.h). */
#define USDT_ATTACH_UPROBE_MULTI 48

/* The layout of usdt.bpf.h's struct __bpf_usdt_spec (libbpf 1.1). */
struct usdt_arg_spec {
	uint64_t val_off;
	int32_t arg_type; /* 0 constant, 1 register, 2 memory at register + val_off */
	int16_t reg_off;  /* offset in struct pt_regs */
	bool arg_signed;
	char arg_bitshift;
};

#define USDT_MAX_ARGS 12
struct usdt_spec {
	struct usdt_arg_spec args[USDT_MAX_ARGS];
	uint64_t usdt_cookie;
	int16_t arg_cnt;
};

struct usdt_multi {
	int specs_fd;	    /* the __bpf_usdt_specs map */
	uint32_t max_specs; /* its size */
	char **keys;	    /* "cookie args" of each spec id, to share ids between sites */
	uint32_t n_specs;
};

/* Parses an SDT argument string (x86-64: bpf/arch.h) ("8@%rdi -4@$0 8@-8(%rbp)"). 0, or -EINVAL. */
int usdt_spec_parse(const char *args, uint64_t cookie, struct usdt_spec *out);

/*
 * Attaches prog_fd to sites[0..n) of the object at path, for process pid, each site with
 * cookies[i] as its usdt cookie. Returns the link fd, or -errno (-EINVAL or -EOPNOTSUPP: the
 * kernel has no uprobe_multi).
 */
int usdt_multi_attach(struct usdt_multi *u, int prog_fd, pid_t pid, const char *path,
		      const struct elf_site *sites, const uint64_t *cookies, size_t n);

/*
 * One uprobe_multi link of prog_fd on offsets[0..n) of path (file offsets), for process pid;
 * ref_ctrs and cookies may be NULL. Returns the link fd, or -errno.
 */
int uprobe_multi_attach(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets,
			const uint64_t *ref_ctrs, const uint64_t *cookies, size_t n);

void usdt_multi_free(struct usdt_multi *u);

#endif
