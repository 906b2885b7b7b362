/*
 * Sleeping on a word and waking its sleepers (closure_sync()'s futex, sleep.h), the clock in
 * milliseconds, and under valgrind the side stack the sleeps run on.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "clock.h"
#include "closure.h"
#include "sleep.h"

/*
 * Under memcheck, a sync that sleeps runs on a side stack, and so leaves the program's stack below
 * its caller as the program left it.
 *
 * Why: a program may leave the control block of an asynchronous read dead on its stack, and
 * valgrind reads it there. bcachefs-tools submits its reads with io_submit from a function that
 * returns at once (linux/blkdev.c, aio_op: the iocb and the I/O vector are its locals); its caller
 * syncs a closure, and another thread reaps the read with io_getevents and puts it. The kernel
 * copied the control block at io_submit; valgrind looks at it only when io_getevents returns,
 * through the event's pointer, to learn which buffer the kernel wrote. By then the owner is asleep
 * in closure_sync, and what the sleep wrote below its caller's frame is what valgrind reads: an
 * opcode it does not know ("unhandled io_getevents opcode") or another buffer, and memcheck never
 * marks the data as written. bcachefs-tools' own closure_sync sleeps within 88 bytes of its
 * caller's stack pointer, above the dead iocb (208 bytes below bch2_write_super's, its vector 112);
 * libclosure's sleep (the probes, the debug list, the batch clock) went deeper, so on libclosure
 * every superblock read-back read as uninitialised (docs/design.md). The data itself was there:
 * the read completes before the put that wakes the sync.
 *
 * So under memcheck the sleeping part of closure_sync and closure_return_sync runs on a stack of
 * the thread's own (mapped at its first closure_init or sleep, registered with valgrind as a
 * stack), switched to by closure_call_on_stack: on the program's stack, a sleeping closure_sync
 * writes a few words (32 bytes on x86-64 at -O2: return addresses and a saved register),
 * closure_return_sync its own frame first. Elsewhere the side stack is never mapped nor used.
 * valgrind.h's requests are inline code that does nothing without valgrind: no dependency at run
 * time.
 */
#if defined(__has_include) && !defined(CLOSURE_NO_VALGRIND)
#if __has_include(<valgrind/valgrind.h>) && (defined(__x86_64__) || defined(__aarch64__))
#define CLOSURE_SIDE_STACK 1
#endif
#endif

#ifdef CLOSURE_SIDE_STACK
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <valgrind/valgrind.h>

/*
 * uintptr_t closure_call_on_stack(closure_word_fn *fn, void *top, a, b, c, d): fn(a, b, c, d) with
 * the stack pointer at top (16-byte aligned), back on the caller's stack when it returns. A frame
 * pointer links the two stacks, so that a debugger unwinds from the side stack into the program's.
 */
uintptr_t closure_call_on_stack(closure_word_fn *fn, void *top, uintptr_t a, uintptr_t b,
				uintptr_t c, uintptr_t d);
#if defined(__x86_64__)
__asm__(".text\n"
	".globl closure_call_on_stack\n"
	".hidden closure_call_on_stack\n"
	".type closure_call_on_stack, @function\n"
	"closure_call_on_stack:\n"
	".cfi_startproc\n"
	"	pushq %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"	movq %rsi, %rsp\n"
	"	movq %rdi, %rax\n"
	"	movq %rdx, %rdi\n"
	"	movq %rcx, %rsi\n"
	"	movq %r8, %rdx\n"
	"	movq %r9, %rcx\n"
	"	call *%rax\n"
	"	movq %rbp, %rsp\n"
	"	popq %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size closure_call_on_stack, .-closure_call_on_stack\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl closure_call_on_stack\n"
	".hidden closure_call_on_stack\n"
	".type closure_call_on_stack, %function\n"
	"closure_call_on_stack:\n"
	".cfi_startproc\n"
	"	stp x29, x30, [sp, #-16]!\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset x29, -16\n"
	".cfi_offset x30, -8\n"
	"	mov x29, sp\n"
	".cfi_def_cfa_register x29\n"
	"	mov sp, x1\n"
	"	mov x6, x0\n"
	"	mov x0, x2\n"
	"	mov x1, x3\n"
	"	mov x2, x4\n"
	"	mov x3, x5\n"
	"	blr x6\n"
	"	mov sp, x29\n"
	"	ldp x29, x30, [sp], #16\n"
	".cfi_def_cfa sp, 0\n"
	"	ret\n"
	".cfi_endproc\n"
	".size closure_call_on_stack, .-closure_call_on_stack\n");
#endif

/* Enough for the library's own code (a bug report's formatting is the deepest); no program code. */
#define SIDE_STACK_SIZE (256u * 1024)

struct side_stack {
	unsigned valgrind_id; /* VALGRIND_STACK_REGISTER's */
};

bool closure_under_memcheck;
static pthread_key_t side_stack_key;
/* initial-exec: read without a call (__tls_get_addr would write on the program's stack). */
static __thread struct side_stack *my_side_stack __attribute__((tls_model("initial-exec")));

/* The header at the low end of the mapping, the stack above it: its top is the mapping's end. */
static void *side_stack_top(struct side_stack *s)
{
	return (char *)s + SIDE_STACK_SIZE;
}

/* Whether this thread runs on s now (a sleep nested in one: it stays there). */
static inline bool on_side_stack(const struct side_stack *s)
{
	uintptr_t sp;

#if defined(__x86_64__)
	__asm__("movq %%rsp, %0" : "=r"(sp));
#else
	__asm__("mov %0, sp" : "=r"(sp));
#endif
	return sp - (uintptr_t)s < SIDE_STACK_SIZE;
}

static void side_stack_free(void *p)
{
	struct side_stack *s = p;

	VALGRIND_STACK_DEREGISTER(s->valgrind_id);
	munmap(s, SIDE_STACK_SIZE);
}

static struct side_stack *side_stack_new(void)
{
	struct side_stack *s = mmap(NULL, SIDE_STACK_SIZE, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);

	if (s == MAP_FAILED)
		return NULL;
	s->valgrind_id = VALGRIND_STACK_REGISTER((char *)(s + 1), side_stack_top(s));
	my_side_stack = s;
	pthread_setspecific(side_stack_key, s); /* unmapped when the thread exits */
	return s;
}

void closure_side_stack_map(void)
{
	if (!my_side_stack)
		side_stack_new();
}

/* No side stack yet (a first sleep before any closure_init in this thread: mapped here, deeper). */
static __attribute__((noinline, cold)) uintptr_t
sleep_off_stack_first(closure_word_fn *fn, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d)
{
	struct side_stack *s = side_stack_new();

	if (!s)
		return fn(a, b, c, d);
	return closure_call_on_stack(fn, side_stack_top(s), a, b, c, d);
}

/*
 * Nothing kept across the call, so that it is a jump: the program's stack holds only the return
 * address of its own call and closure_call_on_stack's saved frame pointer.
 */
uintptr_t closure_sleep_off_stack(closure_word_fn *fn, uintptr_t a, uintptr_t b, uintptr_t c,
				  uintptr_t d)
{
	struct side_stack *s = my_side_stack;

	if (__builtin_expect(!s, 0))
		return sleep_off_stack_first(fn, a, b, c, d);
	if (on_side_stack(s))
		return fn(a, b, c, d);
	return closure_call_on_stack(fn, side_stack_top(s), a, b, c, d);
}

/*
 * Only under memcheck, the tool that learns from the control block what the kernel wrote (helgrind
 * and DRD track no definedness), whose library valgrind preloads. DRD 3.19 aborts at exit in any
 * process that registered a stack ("drd_stop_using_mem: Assertion 'a1 <= a2' failed").
 */
static bool under_memcheck(void)
{
	const char *preload = getenv("LD_PRELOAD");

	return RUNNING_ON_VALGRIND && preload && strstr(preload, "/vgpreload_memcheck-");
}

__attribute__((constructor)) static void side_stack_init(void)
{
	if (!under_memcheck() || pthread_key_create(&side_stack_key, side_stack_free))
		return;
	closure_under_memcheck = true;
	side_stack_new(); /* the thread that loads the library: usually main */
}
#else
bool closure_under_memcheck; /* never set: no valgrind.h, or no stack switch for this machine */

void closure_side_stack_map(void)
{
}

uintptr_t closure_sleep_off_stack(closure_word_fn *fn, uintptr_t a, uintptr_t b, uintptr_t c,
				  uintptr_t d)
{
	return fn(a, b, c, d);
}
#endif

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
	return syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, timeout, NULL, 0);
}

/* Sleeps while *word is val, until until_ns on CLOCK_MONOTONIC (0: no limit); 0 or an errno. */
static int futex_wait_until(uint32_t *word, uint32_t val, uint64_t until_ns)
{
	struct timespec until = {(time_t)(until_ns / 1000000000u), (long)(until_ns % 1000000000u)};

	if (!until_ns)
		return futex(word, FUTEX_WAIT, val, NULL) ? errno : 0;
	/* FUTEX_WAIT_BITSET: an absolute time on CLOCK_MONOTONIC. */
	return syscall(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, val, &until, NULL,
		       FUTEX_BITSET_MATCH_ANY)
		       ? errno
		       : 0;
}

/*
 * While batching, the sleep first lasts only until this thread's records are due (lib/batch.h):
 * still asleep then, it hands them over and sleeps on.
 */
int closure_sleep_on(uint32_t *word, uint32_t val, uint64_t until_ns)
{
	for (;;) {
		uint64_t due = CLOSURE_BATCH_ON() ? closure_batch_due() : 0;
		bool for_batch = due && (!until_ns || due < until_ns);

		if (futex_wait_until(word, val, for_batch ? due : until_ns) != ETIMEDOUT)
			return 0; /* woken, *word changed, or a signal */
		if (!for_batch)
			return ETIMEDOUT;
		closure_batch_flush(); /* blocked past the records' due time: hand them over */
	}
}

void closure_futex_wake(uint32_t *word)
{
	futex(word, FUTEX_WAKE, INT_MAX, NULL);
}

long closure_now_ms(void)
{
	return (long)(closure_clock_ns() / 1000000u);
}
