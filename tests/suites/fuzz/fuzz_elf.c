/* libFuzzer: the ELF readers (probe notes and sites, symbols, the program interpreter). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_file.h"
#include "elf_probes.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_file_init("fuzz_elf", ".so");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_probes probes = {0};
	struct elf_site *sites = NULL;
	const char *path = fuzz_file_write(data, size);

	if (!elf_probes_read(path, &probes))
		elf_probes_free(&probes);
	if (elf_probe_sites(path, &sites) >= 0)
		free(sites);
	elf_symbol_offset(path, "closure_put");
	elf_data_symbol(path, "closure_batch_registry_public");
	free(elf_interpreter(path));
	elf_is_elf(path);
	elf_has_closure_probes(path);
	return 0;
}
