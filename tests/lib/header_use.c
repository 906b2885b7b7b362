/*
 * One translation unit that uses closure.h as a program would, valid as C and as C++:
 * header_std.sh compiles it under every language standard a user may pick and runs it.
 */
#include <closure.h>
#include <closure_debug.h>

#ifdef __cplusplus
#define NO_FN nullptr
#else
#define NO_FN NULL
#endif

struct request {
	struct closure cl;
	int steps;
};

static void old_form_done(struct closure *cl)
{
	closure_return(cl);
}

static CLOSURE_CALLBACK(new_form_step)
{
	closure_type(r, struct request, cl);
	r->steps++;
	continue_at(cl, old_form_done, NO_FN);
}

int main(void)
{
	struct closure_waitlist list = CLOSURE_WAITLIST_INIT;
	struct request r;
	struct closure parent;
	long left;

	closure_init_stack(&parent);
	r.steps = 0;
	closure_init(&r.cl, &parent);
	closure_get(&r.cl);
	closure_put(&r.cl);
	continue_at(&r.cl, new_form_step, NO_FN);
	closure_sync(&parent);
	closure_wait_event(&list, r.steps == 1);
	left = closure_wait_event_timeout(&list, r.steps == 1, 1000);
	if (r.steps != 1 || left < 1 || closure_nr_remaining(&parent) != 1)
		return 1;
	/* The newest API: a stack closure by value, an open-coded wait's check, the bch2_ names. */
	struct closure moved = class_closure_stack_constructor();
	closure_set_waiting(&moved, 0);
	closure_set_ret_ip(&moved);
	closure_set_ip(&moved);
	closure_val_checks(&moved, (unsigned)moved.remaining.counter, 0);
	if (!bch2_closure_wait(&list, &moved) || list.list.first != &moved.list)
		return 1;
	__bch2_closure_wake_up(&list);
	class_closure_stack_destructor(&moved);
	return closure_nr_remaining(&moved) == 1 ? 0 : 1;
}
