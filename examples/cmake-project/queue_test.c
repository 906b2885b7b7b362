/*
 * A tiny work queue test: each job is a closure that holds its batch (the parent) until it is
 * done. "balanced" puts back every reference it takes; "forgets-put" loses one, on the line
 * marked LEAK, and still passes its own assertions: only the leak check catches it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <closure.h>

#define JOBS 8

struct job {
	struct closure cl;
	int done;
};

static struct job jobs[JOBS];

static void job_run(struct job *j, int forget_put)
{
	closure_get(&j->cl); /* the "I/O" in flight */
	j->done = 1;
	if (!forget_put)
		closure_put(&j->cl); /* LEAK: skipped by forgets-put */
	closure_return(&j->cl);
}

int main(int argc, char **argv)
{
	int forget = argc > 1 && !strcmp(argv[1], "forgets-put");
	struct closure batch;
	int done = 0;

	closure_init(&batch, NULL);
	for (int i = 0; i < JOBS; i++) {
		closure_init(&jobs[i].cl, &batch);
		job_run(&jobs[i], forget && i == JOBS / 2);
		done += jobs[i].done;
	}
	closure_return(&batch);
	printf("queue_test: %d of %d jobs done\n", done, JOBS);
	return done == JOBS ? 0 : 1;
}
