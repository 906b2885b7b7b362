/*
 * The one architecture closuretrace's tool supports: x86-64 (the library itself is portable C).
 * Everything that depends on it is here, chosen by the one switch CLOSURETRACE_ARCH (CMake, from
 * CMAKE_SYSTEM_PROCESSOR; only x86_64 is accepted): struct pt_regs as the BPF programs read it, and
 * the registers an SDT argument names ("8@%rdi") with their offsets in it (recorder/usdt_multi.c),
 * and where ld.so finds the system's libraries (process/ld_search.c). Porting means another block
 * here with both, and its -D__TARGET_ARCH_ in bpf/CMakeLists.txt.
 */
#ifndef CLOSURETRACE_ARCH_H
#define CLOSURETRACE_ARCH_H

#if defined(__bpf__)
/* The kernel's x86-64 struct pt_regs, in its order (the offsets below are into it). */
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax, ip,
		cs, flags, sp, ss;
};
#endif

/* X(offset, name, 32-bit, 16-bit, 8-bit): every name an SDT argument may give a register. */
#define CLOSURETRACE_SDT_REGISTERS(X)                                                              \
	X(80, "rax", "eax", "ax", "al")                                                            \
	X(40, "rbx", "ebx", "bx", "bl")                                                            \
	X(88, "rcx", "ecx", "cx", "cl")                                                            \
	X(96, "rdx", "edx", "dx", "dl")                                                            \
	X(104, "rsi", "esi", "si", "sil")                                                          \
	X(112, "rdi", "edi", "di", "dil")                                                          \
	X(32, "rbp", "ebp", "bp", "bpl")                                                           \
	X(152, "rsp", "esp", "sp", "spl")                                                          \
	X(72, "r8", "r8d", "r8w", "r8b")                                                           \
	X(64, "r9", "r9d", "r9w", "r9b")                                                           \
	X(56, "r10", "r10d", "r10w", "r10b")                                                       \
	X(48, "r11", "r11d", "r11w", "r11b")                                                       \
	X(24, "r12", "r12d", "r12w", "r12b")                                                       \
	X(16, "r13", "r13d", "r13w", "r13b")                                                       \
	X(8, "r14", "r14d", "r14w", "r14b")                                                        \
	X(0, "r15", "r15d", "r15w", "r15b")                                                        \
	X(128, "rip", "eip", NULL, NULL)

/* The multiarch folder name of the system's libraries, and ld.so.cache's flags for them. */
#define CLOSURETRACE_MULTIARCH	   "x86_64-linux-gnu"
#define CLOSURETRACE_LD_CACHE_FLAGS 0x0303 /* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 */

#endif
