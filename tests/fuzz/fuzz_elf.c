/* libFuzzer: the ELF readers (probe notes, probe sites, symbols, the program interpreter). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "elf_probes.h"

static char path[64];

static void remove_input(void)
{
	remove(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "/tmp/fuzz_elf.%d.so", (int)getpid());
	atexit(remove_input);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_probes probes = {0};
	struct elf_site *sites = NULL;
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	fwrite(data, 1, size, f);
	fclose(f);
	if (!elf_probes_read(path, &probes))
		elf_probes_free(&probes);
	if (elf_probe_sites(path, &sites) >= 0)
		free(sites);
	elf_symbol_offset(path, "closure_put");
	free(elf_interpreter(path));
	elf_is_elf(path);
	elf_has_closure_probes(path);
	return 0;
}
