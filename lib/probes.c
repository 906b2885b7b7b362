/*
 * The semaphores of the probes libclosure guards (probes.h): defined once, here, for every file
 * that fires guarded probes (closure.c, stack.c). The kernel raises one while a tracer has its
 * probe armed.
 */
#include "probes.h"

#if CLOSURE_PROBES
#define PROBE_SEMAPHORE_OF(name, NAME, a4, a5, a6) PROBE_SEMAPHORE(name);
CLOSURE_PROBE_LIST(PROBE_SEMAPHORE_OF)
#undef PROBE_SEMAPHORE_OF
#endif
