/*
 * closure_debug_dump lists exactly the live closures (not stack closures, not finished ones),
 * one line each: "ADDR: SITE -> FN p PARENT r COUNT FLAGS[ waiting on LIST from SITE]".
 * Linked with -rdynamic, so that the sites resolve to this file's (global) functions.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include <closure.h>

#include "check.h"

static const char *program; /* argv[0]: dladdr names the executable so */

/* The dump as text, and its number of lines. */
struct dump {
	char *text;
	size_t size;
	int returned;
	int lines;
};

static struct dump take_dump(void)
{
	struct dump d = {0};
	FILE *f = open_memstream(&d.text, &d.size);
	size_t i;

	CHECK(f);
	d.returned = closure_debug_dump(f);
	CHECK_EQ(fclose(f), 0);
	for (i = 0; i < d.size; i++)
		d.lines += d.text[i] == '\n';
	CHECK_EQ(d.lines, d.returned);
	return d;
}

/* The line of the dump that describes cl, copied into line (empty when absent). */
static void line_of(const struct dump *d, struct closure *cl, char *line, size_t size)
{
	char prefix[64];
	const char *at = d->text, *end;

	snprintf(prefix, sizeof(prefix), "%p: ", (void *)cl);
	line[0] = '\0';
	for (; at && *at; at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL) {
		if (strncmp(at, prefix, strlen(prefix)))
			continue;
		end = strchr(at, '\n');
		snprintf(line, size, "%.*s", (int)(end - at), at);
		return;
	}
}

/* "FUNC+0x" at the start of a site, followed by " in " and the program's path. */
static void check_site(const char *line, const char *field_start, const char *func)
{
	char want[128];

	snprintf(want, sizeof(want), "%s%s+0x", field_start, func);
	CHECK_CONTAINS(line, want);
	CHECK_CONTAINS(line, " in ");
	CHECK_CONTAINS(line, "test_debug_dump");
}

/* Every field of a line without flags, parsed back. */
static void check_fields(const char *line, struct closure *cl, const char *site, const char *fn,
			 struct closure *parent, unsigned count)
{
	char site_name[64], site_file[256], fn_name[64], fn_file[256];
	unsigned long site_off, fn_off;
	void *addr, *parent_addr;
	unsigned r;
	int n;

	CHECK_EQ(sscanf(line, "%p: %63[^+]+0x%lx in %255s -> %63[^+]+0x%lx in %255s p %p r %u %n",
			&addr, site_name, &site_off, site_file, fn_name, &fn_off, fn_file,
			&parent_addr, &r, &n),
		 9);
	CHECK_PTR_EQ(addr, cl);
	CHECK_STR_EQ(site_name, site);
	CHECK(site_off > 0); /* a return address inside the function */
	CHECK_STR_EQ(fn_name, fn);
	CHECK_EQ(fn_off, 0); /* the function itself */
	CHECK_STR_EQ(site_file, fn_file);
	CHECK_STR_EQ(site_file, program);
	CHECK_PTR_EQ(parent_addr, parent);
	CHECK_EQ(r, count);
	CHECK_EQ(line[n], '\0');
}

void dump_next_step(struct closure *cl)
{
	closure_return(cl);
}

__attribute__((noinline)) void dump_init_site(struct closure *cl, struct closure *parent)
{
	closure_init(cl, parent);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void dump_continue_site(struct closure *cl)
{
	continue_at(cl, dump_next_step, NULL);
	NO_TAIL_CALL();
}

__attribute__((noinline)) void dump_wait_site(struct closure_waitlist *list, struct closure *cl)
{
	closure_wait(list, cl);
	NO_TAIL_CALL();
}

static void test_dump(void)
{
	struct closure a, b, c, s;
	struct closure_waitlist list = CLOSURE_WAITLIST_INIT;
	struct dump d;
	char line[1024], want[256];

	d = take_dump();
	CHECK_EQ(d.returned, 0);
	CHECK_EQ(d.size, 0);
	free(d.text);

	dump_init_site(&a, NULL);
	dump_init_site(&b, &a);
	dump_init_site(&c, &a);
	closure_init_stack(&s); /* never listed */
	closure_get(&s);
	d = take_dump();
	CHECK_EQ(d.returned, 3);

	/* a: no parent, no continuation, count 3 (its own, b's and c's) */
	line_of(&d, &a, line, sizeof(line));
	CHECK(line[0]);
	check_site(line, ": ", "dump_init_site");
	snprintf(want, sizeof(want), " -> 0x0 p (nil) r 3 R");
	CHECK_CONTAINS(line, want);
	CHECK(!strstr(line, "waiting on"));
	line_of(&d, &b, line, sizeof(line));
	snprintf(want, sizeof(want), " -> 0x0 p %p r 1 R", (void *)&a);
	CHECK_CONTAINS(line, want);
	CHECK_EQ(line[strlen(line) - 1], 'R'); /* nothing after the flags */
	line_of(&d, &s, line, sizeof(line));
	CHECK_EQ(line[0], '\0');
	free(d.text);

	/* b waits for a reference with a continuation; c waits on a list. */
	closure_get(&b);
	dump_continue_site(&b);
	dump_wait_site(&list, &c);
	d = take_dump();
	CHECK_EQ(d.returned, 3);
	line_of(&d, &b, line, sizeof(line));
	check_site(line, ": ", "dump_continue_site"); /* the site moves to the continuation */
	check_site(line, " -> ", "dump_next_step");
	snprintf(want, sizeof(want), " p %p r 1 ", (void *)&a);
	CHECK_CONTAINS(line, want);
	CHECK_EQ(line[strlen(line) - 1], ' '); /* no flags: not running */
	check_fields(line, &b, "dump_continue_site", "dump_next_step", &a, 1);
	line_of(&d, &c, line, sizeof(line));
	check_site(line, ": ", "dump_init_site");
	snprintf(want, sizeof(want), " p %p r 2 RW waiting on %p from ", (void *)&a, (void *)&list);
	CHECK_CONTAINS(line, want);
	check_site(line, "from ", "dump_wait_site");
	free(d.text);

	/* Finished closures leave the list, one by one. */
	closure_put(&b); /* dump_next_step runs, b finishes */
	d = take_dump();
	CHECK_EQ(d.returned, 2);
	line_of(&d, &b, line, sizeof(line));
	CHECK_EQ(line[0], '\0');
	free(d.text);

	closure_wake_up(&list);
	closure_return(&c);
	d = take_dump();
	CHECK_EQ(d.returned, 1);
	line_of(&d, &a, line, sizeof(line));
	CHECK_CONTAINS(line, " r 1 R");
	free(d.text);

	closure_return(&a);
	d = take_dump();
	CHECK_EQ(d.returned, 0);
	free(d.text);

	/*
	 * closure_debug_destroy takes a live closure off the list (initialising it again while
	 * listed aborts: test_death); the same address initialised again is listed again, once.
	 */
	dump_init_site(&a, NULL);
	closure_debug_destroy(&a);
	d = take_dump();
	CHECK_EQ(d.returned, 0);
	free(d.text);
	dump_init_site(&a, NULL);
	d = take_dump();
	CHECK_EQ(d.returned, 1);
	free(d.text);
	closure_return(&a);
	d = take_dump();
	CHECK_EQ(d.returned, 0);
	free(d.text);

	closure_put(&s);
	closure_sync(&s);
}

static int dumping; /* atomic */

static void *dump_all_along(void *arg)
{
	FILE *null = fopen("/dev/null", "w");
	int *dumps = arg;

	CHECK(null);
	while (__atomic_load_n(&dumping, __ATOMIC_RELAXED)) {
		CHECK(closure_debug_dump(null) >= 0);
		__atomic_add_fetch(dumps, 1, __ATOMIC_RELAXED);
	}
	fclose(null);
	return NULL;
}

/* The owner changes a listed closure while another thread dumps (ThreadSanitizer watches). */
static void test_dump_while_changing(void)
{
	struct closure parent, cl;
	struct closure_waitlist list = CLOSURE_WAITLIST_INIT;
	pthread_t t;
	int i, dumps = 0;

	closure_init(&parent, NULL);
	__atomic_store_n(&dumping, 1, __ATOMIC_RELAXED);
	CHECK_EQ(pthread_create(&t, NULL, dump_all_along, &dumps), 0);
	for (i = 0; i < 20000; i++) {
		closure_init(&cl, i % 2 ? &parent : NULL); /* listed, then off the list */
		set_closure_fn(&cl, dump_next_step, NULL);
		closure_wait(&list, &cl);
		closure_wake_up(&list);
		if (i % 3)
			closure_return(&cl);
		else
			closure_debug_destroy(
				&cl); /* its life ended by hand: the parent keeps a ref */
		if (i % 3 == 0 && i % 2)
			closure_put(&parent);
	}
	while (!__atomic_load_n(&dumps, __ATOMIC_RELAXED))
		sched_yield(); /* at least one dump, however fast the loop was */
	__atomic_store_n(&dumping, 0, __ATOMIC_RELAXED);
	CHECK_EQ(pthread_join(t, NULL), 0);
	closure_return(&parent);
	struct dump d = take_dump();
	CHECK_EQ(d.returned, 0);
	free(d.text);
}

int main(int argc, char **argv)
{
	(void)argc;
	program = argv[0];
	test_dump();
	test_dump_while_changing();
	printf("test_debug_dump: ok\n");
	return 0;
}
