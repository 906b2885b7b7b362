/* The session's clock and its BPF statistics: what every part of the recorder reads. See
 * session.h. */
#include <stdlib.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "closuretrace.skel.h"
#include "session.h"

uint64_t recorder_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

uint64_t session_read_stat(struct session *s, uint32_t slot)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t total = 0;
	__u64 *v;

	if (ncpu <= 0 || !(v = calloc(ncpu, sizeof(*v))))
		return 0;
	if (!bpf_map__lookup_elem(s->skel->maps.stats, &slot, sizeof(slot), v, ncpu * sizeof(*v),
				  0))
		for (int i = 0; i < ncpu; i++)
			total += v[i];
	free(v);
	return total;
}
