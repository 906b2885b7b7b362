/*
 * Workqueues (private side; the API is closure.h's): where work items run. A work item is the
 * kernel's work_struct, struct closure_work: a worker calls work->func(work), whoever queued it
 * said what func is. Knows no closure.
 */
#ifndef CLOSURE_LIB_WORKQUEUE_H
#define CLOSURE_LIB_WORKQUEUE_H

#include <stdbool.h>

#include "closure.h"

#pragma GCC visibility push(hidden)

/* Created and not destroyed yet (workqueue.c keeps what it destroyed, to tell). */
bool workqueue_live(struct workqueue *wq);

/* Hand work to a worker of wq (live), which calls work->func(work); work->entry is its link. */
void workqueue_queue(struct workqueue *wq, struct closure_work *work);

/*
 * The queue_work() of a program's own workqueues (struct workqueue_struct): the one given to
 * closure_set_queue_work(), else the program's own, else NULL (it has none).
 */
closure_queue_work_fn *workqueue_program_queue_work(void);

#pragma GCC visibility pop

#endif
