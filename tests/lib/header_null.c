/*
 * closure.h with a null pointer constant for every pointer argument: NUL is NULL, 0 or (C++ only)
 * nullptr. Kernel-style code passes NULL for "no parent", "no workqueue" (the continuation runs in
 * the thread that puts the last reference) and "no function"; in C++ NULL and 0 are integers, and
 * once made continue_at(cl, fn, NULL) ambiguous (issue 39). header_std.sh compiles this under
 * every standard with each NUL, links it and runs main(), which checks what those NULLs mean;
 * compile_only() passes NUL to every other pointer argument, compiled and never called. Left out:
 * the macros that dereference what they are given (closure_set_ip, closure_set_ret_ip,
 * closure_type) or do arithmetic on it (container_of), for which a null constant is no operand.
 */
#include <closure.h>

#ifndef NUL
#error "compile with -DNUL=NULL, -DNUL=0 or (C++) -DNUL=nullptr"
#endif

static int ran; /* continuations run: 1 each, a destructor 10 */

static void old_form_step(struct closure *cl)
{
	ran++;
	closure_return(cl);
}

static CLOSURE_CALLBACK(new_form_step)
{
	closure_type(c, struct closure, work);
	ran++;
	closure_return(c);
}

static void destructor(struct closure *cl)
{
	(void)cl;
	ran += 10;
}

static bool never_queue(struct workqueue_struct *wq, struct closure_work *work)
{
	(void)wq, (void)work;
	return false;
}

void compile_only(void);
void compile_only(void)
{
	closure_get(NUL);
	(void)closure_get_not_zero(NUL);
	closure_put(NUL);
	closure_sub(NUL, 1);
	(void)closure_nr_remaining(NUL);
	closure_init(NUL, NUL);
	closure_init_stack(NUL);
	closure_init_stack_release(NUL);
	closure_set_stopped(NUL);
	set_closure_fn(NUL, NUL, NUL);
	closure_queue(NUL);
	continue_at(NUL, NUL, NUL);
	continue_at_nobarrier(NUL, NUL, NUL);
	closure_return(NUL);
	closure_return_with_destructor(NUL, NUL);
	closure_return_sync(NUL);
	closure_call(NUL, NUL, NUL, NUL);
	(void)closure_wait(NUL, NUL);
	closure_wake_up(NUL);
	__closure_wake_up(NUL);
	closure_sync(NUL);
	(void)closure_sync_timeout(NUL, 1);
	closure_sync_unbounded(NUL);
	closure_debug_destroy(NUL);
	__closure_wait_event(NUL, ran);
	closure_wait_event(NUL, ran);
	(void)closure_wait_event_timeout(NUL, ran, 1);
	closure_set_waiting(NUL, 0);
	closure_val_checks(NUL, 0, 0);
	class_closure_stack_destructor(NUL);
	bch2_closure_sub(NUL, 1);
	__bch2_closure_wake_up(NUL);
	(void)bch2_closure_wait(NUL, NUL);
	__bch2_closure_sync(NUL);
	(void)__bch2_closure_sync_timeout(NUL, 1);
	bch2_closure_return_sync(NUL);
	bch2_closure_sync_unbounded(NUL);
	bch2_closure_debug_create(NUL);
	workqueue_destroy(workqueue_create_hooked(NUL, 1, NUL));
	closure_set_queue_work(NUL);
	(void)closure_debug_dump(NUL);
}

int main(void)
{
	struct closure parent, a;
	struct workqueue *wq;

	closure_init_stack(&parent);
	/* No parent, no workqueue: the continuation runs here, at once (no other reference). */
	closure_init(&a, NUL);
	continue_at(&a, old_form_step, NUL);
	/* No function: a return, which puts the parent. */
	closure_init(&a, &parent);
	continue_at(&a, NUL, NUL);
	closure_call(&a, new_form_step, NUL, NUL);
	closure_init(&a, NUL);
	set_closure_fn(&a, old_form_step, NUL);
	closure_queue(&a);
	closure_init(&a, &parent);
	continue_at_nobarrier(&a, new_form_step, NUL);
	closure_init(&a, NUL);
	closure_return_with_destructor(&a, destructor);
	closure_init(&a, &parent);
	closure_return_with_destructor(&a, NUL); /* no destructor: finished all the same */
	closure_sync(&parent);
	/* No name, no hooks; destroying no workqueue does nothing. */
	wq = workqueue_create_hooked(NUL, 1, NUL);
	workqueue_destroy(wq);
	workqueue_destroy(workqueue_create(NUL, 1));
	workqueue_destroy(NUL);
	/* Back to the program's own queue_work (this one has none). */
	closure_set_queue_work(never_queue);
	closure_set_queue_work(NUL);
	return wq && ran == 14 && closure_nr_remaining(&parent) == 1 ? 0 : 1;
}
