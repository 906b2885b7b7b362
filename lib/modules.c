/*
 * The module probe: tells a tracer where every ELF object of the process is mapped, so that call
 * sites resolve to file:line even after a short-lived process has exited and /proc/PID/maps is
 * gone. It fires from a constructor and again at exit (when dlopen'ed objects are mapped too),
 * only while a tracer is attached: the semaphore below is raised by the kernel for each armed
 * probe site. Semaphores apply to a whole translation unit, hence this file of its own.
 */
#define _GNU_SOURCE
#include <link.h>
#include <limits.h>
#include <unistd.h>

/* Not closure.h: its sys/sdt.h would come first, without semaphores. */
#include "closure_config.h"

#if CLOSURE_PROBES
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

unsigned short closure_module_semaphore __attribute__((unused, section(".probes")));

static int announce(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *path = info->dlpi_name;
	char *exe = arg;

	(void)size;
	if (!path[0])
		path = exe; /* the executable itself has no name here */
	if (path[0])
		STAP_PROBE2(closure, module, path, info->dlpi_addr);
	return 0;
}

static void announce_modules(void)
{
	char exe[PATH_MAX] = "";
	ssize_t n;

	if (!__builtin_expect(*(volatile unsigned short *)&closure_module_semaphore, 0))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	dl_iterate_phdr(announce, exe);
}

__attribute__((constructor)) static void announce_at_load(void)
{
	announce_modules();
}

__attribute__((destructor)) static void announce_at_exit(void)
{
	announce_modules();
}
#endif

/* Referenced from closure.c so that static links keep this file. */
const char closure_modules_anchor = 0;
