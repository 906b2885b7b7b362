/* uprobe_multi USDT attachment: see usdt_multi.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "arch.h"
#include "usdt_multi.h"

/* Offsets in struct pt_regs, by every name a register goes by (bpf/arch.h). */
#define CT_REGISTER(off, n64, n32, n16, n8) {{n64, n32, n16, n8}, off},
static const struct {
	const char *names[4];
	short off;
} registers[] = {CLOSURETRACE_SDT_REGISTERS(CT_REGISTER)};
#undef CT_REGISTER

static int register_offset(const char *name)
{
	for (size_t i = 0; i < sizeof(registers) / sizeof(registers[0]); i++)
		for (int k = 0; k < 4; k++)
			if (registers[i].names[k] && !strcmp(registers[i].names[k], name))
				return registers[i].off;
	return -1;
}

/* One argument: SIZE@$IMM, SIZE@%REG, SIZE@OFF(%REG) or SIZE@(%REG). */
static int parse_arg(const char *s, struct usdt_arg_spec *a)
{
	char reg[16];
	long long v = 0;
	int size, n = 0, off;

	memset(a, 0, sizeof(*a));
	if (sscanf(s, "%d@%n", &size, &n) != 1 || !n)
		return -EINVAL;
	s += n;
	if (sscanf(s, "$%lld%n", &v, &n) == 1 && !s[n]) {
		a->arg_type = 0;
		a->val_off = (uint64_t)v;
	} else if (sscanf(s, "%%%15s%n", reg, &n) == 1 && !s[n]) {
		a->arg_type = 1;
		off = register_offset(reg);
		if (off < 0)
			return -EINVAL;
		a->reg_off = (short)off;
	} else if ((sscanf(s, "%lld(%%%15[^)])%n", &v, reg, &n) == 2 ||
		    (v = 0, sscanf(s, "(%%%15[^)])%n", reg, &n) == 1)) &&
		   !s[n]) {
		a->arg_type = 2;
		a->val_off = (uint64_t)v;
		off = register_offset(reg);
		if (off < 0)
			return -EINVAL;
		a->reg_off = (short)off;
	} else {
		return -EINVAL;
	}
	a->arg_signed = size < 0;
	size = size < 0 ? -size : size;
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return -EINVAL;
	a->arg_bitshift = (char)(64 - size * 8);
	return 0;
}

int usdt_spec_parse(const char *args, uint64_t cookie, struct usdt_spec *out)
{
	char *copy = strdup(args), *save = NULL, *arg;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->usdt_cookie = cookie;
	if (!copy)
		return -ENOMEM;
	for (arg = strtok_r(copy, " ", &save); arg && !err; arg = strtok_r(NULL, " ", &save)) {
		if (out->arg_cnt == USDT_MAX_ARGS)
			err = -EINVAL;
		else
			err = parse_arg(arg, &out->args[out->arg_cnt++]);
	}
	free(copy);
	return err;
}

/* The spec id for args with cookie: an existing one, or a new entry in the specs map. */
static long spec_id(struct usdt_multi *u, const char *args, uint64_t cookie)
{
	struct usdt_spec spec;
	char *key, **keys;
	uint32_t id;
	int err;

	if (asprintf(&key, "%llu %s", (unsigned long long)cookie, args) < 0)
		return -ENOMEM;
	for (id = 0; id < u->n_specs; id++) {
		if (!strcmp(u->keys[id], key)) {
			free(key);
			return id;
		}
	}
	err = usdt_spec_parse(args, cookie, &spec);
	if (!err && u->n_specs == u->max_specs)
		err = -E2BIG;
	if (!err && bpf_map_update_elem(u->specs_fd, &id, &spec, BPF_ANY))
		err = -errno;
	keys = err ? NULL : realloc(u->keys, (u->n_specs + 1) * sizeof(*keys));
	if (!keys) {
		free(key);
		return err ? err : -ENOMEM;
	}
	u->keys = keys;
	u->keys[u->n_specs++] = key;
	return id;
}

/* BPF_LINK_CREATE's uprobe_multi layout (Linux 6.6 include/uapi/linux/bpf.h). */
struct link_create_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
};

int uprobe_multi_attach(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets,
			const uint64_t *ref_ctrs, const uint64_t *cookies, size_t n)
{
	struct link_create_uprobe_multi attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (uint32_t)prog_fd;
	attr.attach_type = USDT_ATTACH_UPROBE_MULTI;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)offsets;
	attr.ref_ctr_offsets = (uint64_t)(uintptr_t)ref_ctrs;
	attr.cookies = (uint64_t)(uintptr_t)cookies;
	attr.cnt = (uint32_t)n;
	attr.pid = (uint32_t)pid;
	fd = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

int usdt_multi_attach(struct usdt_multi *u, int prog_fd, pid_t pid, const char *path,
		      const struct elf_site *sites, const uint64_t *cookies, size_t n)
{
	uint64_t *offsets = calloc(n, sizeof(*offsets)), *ref_ctrs = calloc(n, sizeof(*ref_ctrs));
	uint64_t *ids = calloc(n, sizeof(*ids));
	bool any_ref_ctr = false;
	int fd = -ENOMEM;

	if (!offsets || !ref_ctrs || !ids)
		goto out;
	for (size_t i = 0; i < n; i++) {
		long id = spec_id(u, sites[i].args, cookies[i]);

		if (id < 0) {
			fd = (int)id;
			goto out;
		}
		ids[i] = (uint64_t)id;
		offsets[i] = sites[i].offset;
		ref_ctrs[i] = sites[i].ref_ctr;
		any_ref_ctr |= sites[i].ref_ctr != 0;
	}
	fd = uprobe_multi_attach(prog_fd, pid, path, offsets, any_ref_ctr ? ref_ctrs : NULL, ids,
				 n);
out:
	free(offsets);
	free(ref_ctrs);
	free(ids);
	return fd;
}

void usdt_multi_free(struct usdt_multi *u)
{
	for (uint32_t i = 0; i < u->n_specs; i++)
		free(u->keys[i]);
	free(u->keys);
	u->keys = NULL;
	u->n_specs = 0;
}
