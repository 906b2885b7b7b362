/*
 * The enforced rules: each broken rule prints exactly one line on stderr,
 *   closure BUG: OP(ADDR): DETAIL (count N, flags 0xF), called from PROGRAM+0xOFF (FUNC+0xOFF)
 * and aborts. Each case runs in a child process; the test checks that the child died of SIGABRT
 * and every field of the line: the "called from" site names the case's own function (found by
 * dladdr because the program is linked with -rdynamic), and PROGRAM+0xOFF is what addr2line takes
 * (issue 12: not an absolute address, which differs in every run of a PIE): addr2line puts it in
 * that same function.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <closure.h>

#include "check.h"

/* Globals, so that their addresses are the same in the child and here. */
struct closure victim;
struct closure_waitlist list_a = CLOSURE_WAITLIST_INIT;

void never_runs(struct closure *cl)
{
	(void)cl;
}

void nothing(struct closure *cl)
{
	(void)cl;
}

/* The cases: global and not inlined, so that each is the symbol around its call site. */
__attribute__((noinline)) void die_put_on_finished(void)
{
	closure_init(&victim, NULL);
	closure_return(&victim);
	closure_put(&victim);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_get_on_finished(void)
{
	closure_init(&victim, NULL);
	closure_return(&victim);
	closure_get(&victim);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_put_on_destructed(void)
{
	closure_init(&victim, NULL);
	closure_return_with_destructor(&victim, nothing);
	closure_put(&victim);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_put_running_ref(void)
{
	closure_init(&victim, NULL);
	closure_put(&victim);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_sub_running_ref(void)
{
	closure_init(&victim, NULL);
	closure_get(&victim);
	closure_sub(&victim, 2);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_zero_while_waiting(void)
{
	closure_init(&victim, NULL);
	closure_wait(&list_a, &victim);
	continue_at(&victim, never_runs, NULL);
	closure_put(&victim); /* the list's reference, put by hand */
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_continue_at_not_running(void)
{
	closure_init(&victim, NULL);
	closure_get(&victim);
	continue_at(&victim, never_runs, NULL);
	continue_at(&victim, never_runs, NULL); /* we gave running up already */
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_return_twice(void)
{
	closure_init(&victim, NULL);
	closure_get(&victim);
	closure_return(&victim);
	closure_return(&victim);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_clear_flag_not_set(void)
{
	closure_init(&victim, NULL);
	closure_sub(&victim, CLOSURE_WAITING);
	NO_TAIL_CALL();
}

static void block_forever(struct closure *cl)
{
	(void)cl;
	for (;;)
		pause();
}

/* The only worker is busy, so the first queueing stays pending (the kernel: BUG_ON(!queue_work)).
 */
__attribute__((noinline)) void die_queued_twice(void)
{
	static struct closure blocker;
	struct workqueue *wq = workqueue_create("death", 1);

	closure_init(&blocker, NULL);
	continue_at_nobarrier(&blocker, block_forever, wq);
	closure_init(&victim, NULL);
	closure_get(&victim);
	continue_at_nobarrier(&victim, never_runs, wq);
	closure_queue(&victim); /* still queued */
	NO_TAIL_CALL();
}

/* CLOSURE_DEBUG only, as the kernel's CONFIG_DEBUG_CLOSURES (BUG_ON(magic == ALIVE)). */
__attribute__((noinline)) void die_init_live(void)
{
	closure_init(&victim, NULL);
	closure_init(&victim, NULL);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_own_parent(void)
{
	closure_init(&victim, &victim);
	NO_TAIL_CALL();
}

/* A program workqueue, but this program has no queue_work() and set none. */
__attribute__((noinline)) void die_no_executor(void)
{
	closure_init(&victim, NULL);
	continue_at_nobarrier(&victim, never_runs, (struct workqueue_struct *)&list_a);
	NO_TAIL_CALL();
}

/*
 * closure_val_checks (fs/vendor/closure.h) on a value code computed itself, as bcachefs's journal
 * does after its open-coded atomic_add_return: the kernel WARNs, libclosure aborts, in its words.
 */
__attribute__((noinline)) void die_val_guard(void)
{
	closure_init(&victim, NULL);
	closure_val_checks(&victim, 1u | CLOSURE_RUNNING * 2, (int)CLOSURE_RUNNING);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_val_zero_running(void)
{
	closure_init(&victim, NULL);
	closure_val_checks(&victim, CLOSURE_RUNNING, -1);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_destroy_finished(void)
{
	closure_init(&victim, NULL);
	closure_return(&victim);
	closure_debug_destroy(&victim);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_sync_not_running(void)
{
	/* Two references out, so that sync does not take its fast path (count <= 1). */
	closure_init(&victim, NULL);
	closure_get(&victim);
	closure_get(&victim);
	continue_at(&victim, never_runs, NULL);
	closure_sync(&victim); /* only the owner of the running reference may sync */
	NO_TAIL_CALL();
}

/*
 * The owner gave the running reference up with a reference still out; another thread (any caller
 * that does not own the running reference) syncs: it would return at once, the reference held.
 */
__attribute__((noinline)) void die_sync_without_running(void)
{
	closure_init(&victim, NULL);
	closure_get(&victim);
	continue_at(&victim, never_runs, NULL);
	closure_sync(&victim);
	NO_TAIL_CALL();
}

/* 8,388,607 references are the count's limit: the get that takes it to its guard bit aborts. */
__attribute__((noinline)) void die_get_overflow(void)
{
	closure_init(&victim, NULL);
	for (unsigned i = 1; i < (CLOSURE_DESTRUCTOR >> 1) - 1; i++)
		closure_get(&victim);
	closure_get(&victim);
	NO_TAIL_CALL();
}

/* A sub of far more references than there are: an underflow, not a flag set twice. */
__attribute__((noinline)) void die_sub_too_many(void)
{
	closure_init(&victim, NULL);
	closure_sub(&victim, 0x7fffffff);
	NO_TAIL_CALL();
}

/*
 * A workqueue used after its workqueue_destroy() (issue 38): the continuation would never run. The
 * library keeps what it destroyed, so it can tell, where the workqueue is named or queued on.
 */
__attribute__((noinline)) void die_continue_on_destroyed(void)
{
	struct workqueue *wq = workqueue_create("gone", 1);

	workqueue_destroy(wq);
	closure_init(&victim, NULL);
	continue_at(&victim, never_runs, wq);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_set_fn_on_destroyed(void)
{
	struct workqueue *wq = workqueue_create("gone", 1);

	workqueue_destroy(wq);
	closure_init(&victim, NULL);
	set_closure_fn(&victim, never_runs, wq);
	NO_TAIL_CALL();
}

/* Named while alive, queued after the destroy. */
__attribute__((noinline)) void die_queue_on_destroyed(void)
{
	struct workqueue *wq = workqueue_create("gone", 1);

	closure_init(&victim, NULL);
	set_closure_fn(&victim, never_runs, wq);
	workqueue_destroy(wq);
	closure_queue(&victim);
	NO_TAIL_CALL();
}

/* continue_at while alive, a reference out; the last put, after the destroy, would queue it. */
__attribute__((noinline)) void die_put_after_destroy(void)
{
	struct workqueue *wq = workqueue_create("gone", 1);

	closure_init(&victim, NULL);
	closure_get(&victim);
	continue_at(&victim, never_runs, wq);
	workqueue_destroy(wq);
	closure_put(&victim);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_destroy_twice(void)
{
	struct workqueue *wq = workqueue_create("gone", 1);

	workqueue_destroy(wq);
	workqueue_destroy(wq);
	NO_TAIL_CALL();
}

/*
 * CLOSURE_DEBUG only: a closure that finished (its magic dead), whose memory was then reused by
 * something that left 3 in its count word, so that the count alone looks fine.
 */
static void finish_and_reuse(void)
{
	closure_init(&victim, NULL);
	closure_return(&victim);
	victim.remaining.counter = 3;
}

__attribute__((noinline)) void die_put_on_reused(void)
{
	finish_and_reuse();
	closure_put(&victim);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_get_on_reused(void)
{
	finish_and_reuse();
	closure_get(&victim);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_get_not_zero_on_reused(void)
{
	finish_and_reuse();
	closure_get_not_zero(&victim);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void die_sub_on_reused(void)
{
	finish_and_reuse();
	closure_sub(&victim, 1);
	NO_TAIL_CALL();
}

/* Never initialised: zeroed memory with a count of 2. */
__attribute__((noinline)) void die_put_never_initialised(void)
{
	memset(&victim, 0, sizeof(victim));
	victim.remaining.counter = 2;
	closure_put(&victim);
	NO_TAIL_CALL();
}

struct death_case {
	void (*run)(void);
	const char *func; /* its name, as "called from" gives it */
	const char *op, *detail;
	unsigned count;
	uint32_t flags;
};

#define RUNNING_DETAIL                                                                             \
	"count reached zero while running (give up the running reference with continue_at, "       \
	"closure_return or closure_sync)"
#define NOT_RUNNING_DETAIL "not running: only the owner of the running reference may give it up"
#define DEAD_WQ_DETAIL                                                                             \
	"its workqueue was destroyed (workqueue_destroy): the continuation would never run"
#define REUSED_DETAIL                                                                              \
	"not alive (magic 0xc054dead): finished or destroyed, freed, or never initialised"

static const struct death_case cases[] = {
	{die_put_on_finished, "die_put_on_finished", "closure_put", "count would go below zero", 0,
	 0},
	{die_get_on_finished, "die_get_on_finished", "closure_get",
	 "reference taken on a finished closure", 0, 0},
	{die_put_on_destructed, "die_put_on_destructed", "closure_put", "count would go below zero",
	 0, CLOSURE_DESTRUCTOR},
	{die_put_running_ref, "die_put_running_ref", "closure_put", RUNNING_DETAIL, 1,
	 CLOSURE_RUNNING},
	{die_sub_running_ref, "die_sub_running_ref", "closure_sub", RUNNING_DETAIL, 2,
	 CLOSURE_RUNNING},
	{die_zero_while_waiting, "die_zero_while_waiting", "closure_put",
	 "count reached zero while on a waitlist", 1, CLOSURE_WAITING},
	{die_continue_at_not_running, "die_continue_at_not_running", "continue_at",
	 NOT_RUNNING_DETAIL, 1, 0},
	{die_return_twice, "die_return_twice", "closure_return", NOT_RUNNING_DETAIL, 1, 0},
	{die_clear_flag_not_set, "die_clear_flag_not_set", "closure_sub",
	 "a flag was set twice or cleared while not set", 1, CLOSURE_RUNNING},
	{die_sync_not_running, "die_sync_not_running", "closure_sync", NOT_RUNNING_DETAIL, 2, 0},
	{die_sync_without_running, "die_sync_without_running", "closure_sync", NOT_RUNNING_DETAIL,
	 1, 0},
	{die_get_overflow, "die_get_overflow", "closure_get",
	 "too many references: the count reached its limit (8388607)", 8388607, CLOSURE_RUNNING},
	{die_sub_too_many, "die_sub_too_many", "closure_sub", "count would go below zero", 1,
	 CLOSURE_RUNNING},
	{die_queued_twice, "die_queued_twice", "closure_queue",
	 "its continuation is still queued (not started yet)", 2, CLOSURE_RUNNING},
	{die_own_parent, "die_own_parent", "closure_init",
	 "a closure cannot be its own parent (it would wait for itself)", 0, 0},
	{die_no_executor, "die_no_executor", "continue_at_nobarrier",
	 "continued on a struct workqueue_struct, but the program has no queue_work() and none was "
	 "given to closure_set_queue_work()",
	 1, CLOSURE_RUNNING},
	{die_destroy_finished, "die_destroy_finished", "closure_debug_destroy",
	 "not alive: finished or destroyed already, or never initialised", 0, 0},
	{die_val_guard, "die_val_guard", "closure_val_checks",
	 "has guard bits set: 80000001 (31), delta 1073741824", 1, 0x80000000u},
	{die_val_zero_running, "die_val_zero_running", "closure_val_checks",
	 "ref hit 0 with incorrect flags set: 40000000 (30)", 0, CLOSURE_RUNNING},
	{die_continue_on_destroyed, "die_continue_on_destroyed", "continue_at", DEAD_WQ_DETAIL, 1,
	 CLOSURE_RUNNING},
	{die_set_fn_on_destroyed, "die_set_fn_on_destroyed", "set_closure_fn", DEAD_WQ_DETAIL, 1,
	 CLOSURE_RUNNING},
	{die_queue_on_destroyed, "die_queue_on_destroyed", "closure_queue", DEAD_WQ_DETAIL, 1,
	 CLOSURE_RUNNING},
	/* The count after the last put, which gave the closure its running reference back. */
	{die_put_after_destroy, "die_put_after_destroy", "closure_put", DEAD_WQ_DETAIL, 1,
	 CLOSURE_RUNNING},
	/* A workqueue's line: its address, then no count and flags. */
	{die_destroy_twice, "die_destroy_twice", "workqueue_destroy", "destroyed already", 0, 0},
};

/* CLOSURE_DEBUG only (the live list, the magic); without it nothing checks: each survives. */
static const struct death_case debug_cases[] = {
	{die_init_live, "die_init_live", "closure_init",
	 "initialised again while alive (neither finished nor destroyed)", 1, CLOSURE_RUNNING},
	{die_put_on_reused, "die_put_on_reused", "closure_put", REUSED_DETAIL, 3, 0},
	{die_get_on_reused, "die_get_on_reused", "closure_get", REUSED_DETAIL, 3, 0},
	{die_get_not_zero_on_reused, "die_get_not_zero_on_reused", "closure_get_not_zero",
	 REUSED_DETAIL, 3, 0},
	{die_sub_on_reused, "die_sub_on_reused", "closure_sub", REUSED_DETAIL, 3, 0},
	{die_put_never_initialised, "die_put_never_initialised", "closure_put",
	 "not alive (magic 0x00000000): finished or destroyed, freed, or never initialised", 2, 0},
};

static const char *program; /* argv[0], which dladdr gives as the executable's name */

/* Runs c in a child; returns what it wrote on stderr (malloc'd) and how it ended. */
static char *run_child(const struct death_case *c, int *status)
{
	struct rlimit no_core = {0, 0};
	int fds[2];
	size_t len = 0, cap = 4096;
	char *out = malloc(cap);
	ssize_t n;
	pid_t pid;

	CHECK(out);
	CHECK_EQ(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		setrlimit(RLIMIT_CORE, &no_core); /* an expected abort: no core file */
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		c->run();
		fprintf(stderr, "%s: survived\n", c->func);
		_exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + len, cap - len - 1)) > 0) {
		len += n;
		if (len + 1 == cap)
			CHECK(out = realloc(out, cap *= 2));
	}
	out[len] = '\0';
	close(fds[0]);
	CHECK_EQ(waitpid(pid, status, 0), pid);
	return out;
}

/* The outermost function addr2line gives for OBJECT+OFF (inlined frames come first). */
static void addr2line_function(const char *object, unsigned long off, char *func, size_t size)
{
	char cmd[1024], line[512];
	FILE *p;
	int n = 0;

	/* off is a return address: the call is the instruction before it. */
	snprintf(cmd, sizeof(cmd), "addr2line -f -i -e '%s' 0x%lx", object, off - 1);
	CHECK(p = popen(cmd, "r"));
	func[0] = '\0';
	while (fgets(line, sizeof(line), p))
		if (n++ % 2 == 0) /* function names and file:line lines alternate */
			snprintf(func, size, "%.*s", (int)strcspn(line, "\n"), line);
	CHECK_EQ(pclose(p), 0);
}

/* Past want, which the child's stderr out must have at at, or the test fails showing it all. */
static char *expect_at(const struct death_case *c, const char *out, char *at, const char *want)
{
	if (strncmp(at, want, strlen(want)))
		check_fail("%s: stderr\n  \"%s\"\nwanted at offset %zu\n  \"%s\"", c->func, out,
			   (size_t)(at - out), want);
	return at + strlen(want);
}

static void check_case(const struct death_case *c, bool debug_only)
{
	char want[512], func[256], *out, *rest, *end;
	unsigned long off;
	int status;

	out = run_child(c, &status);
	if (debug_only && !TEST_CLOSURE_DEBUG) {
		/* Without CLOSURE_DEBUG nothing checks (live list, magic): nor does the kernel. */
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			check_fail("%s: wanted survival without CLOSURE_DEBUG, got status %#x:\n%s",
				   c->func, status, out);
		printf("ok: %s: survives without CLOSURE_DEBUG\n", c->func);
		free(out);
		return;
	}
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
		check_fail("%s: wanted death by SIGABRT, got status %#x, stderr:\n%s", c->func,
			   status, out);

	/* Up to the call site's offset, the line is known exactly (a workqueue's address aside). */
	rest = out;
	if (!strcmp(c->op, "workqueue_destroy")) {
		rest = expect_at(c, out, rest, "closure BUG: workqueue_destroy(0x");
		strtoul(rest, &end, 16);
		CHECK(end > rest);
		snprintf(want, sizeof(want), "): %s, called from %s+0x", c->detail, program);
		rest = expect_at(c, out, end, want);
	} else {
		snprintf(want, sizeof(want),
			 "closure BUG: %s(%p): %s (count %u, flags 0x%x), called from %s+0x", c->op,
			 (void *)&victim, c->detail, c->count, c->flags, program);
		rest = expect_at(c, out, rest, want);
	}
	off = strtoul(rest, &end, 16);
	CHECK(end > rest);
	addr2line_function(program, off, func, sizeof(func));
	CHECK_STR_EQ(func, c->func); /* addr2line takes PROGRAM+0xOFF */
	snprintf(want, sizeof(want), " (%s+0x", c->func);
	CHECK(!strncmp(end, want, strlen(want)));
	rest = end + strlen(want);
	CHECK(strtoul(rest, &end, 16) > 0); /* a return address inside the function */
	CHECK(end > rest);
	CHECK_STR_EQ(end, ")\n"); /* and then nothing: one line */
	printf("ok: %s: %.*s", c->func, (int)strlen(out), out);
	free(out);
}

int main(int argc, char **argv)
{
	size_t i;

	(void)argc;
	program = argv[0];
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i], false);
	for (i = 0; i < sizeof(debug_cases) / sizeof(debug_cases[0]); i++)
		check_case(&debug_cases[i], true);
	printf("test_death: ok\n");
	return 0;
}
