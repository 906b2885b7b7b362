/*
 * libFuzzer: the trace reader, the model, the verdicts and every presentation (report, report
 * --json, explain, graph -T dot) on one input. Anything but a clean refusal or a picture is a bug.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_file.h"
#include "viz.h"

static FILE *null;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_file_init("fuzz_trace", ".json");
	null = fopen("/dev/null", "w");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct model_id first = {.addr = 0x10};
	struct render_graph_opts opts = {.format = "dot"};
	struct viz_input in;
	struct trace_error err;
	const char *path = fuzz_file_write(data, size);

	/* The seeds name their closures 0x10, 0x20, ...: explain the first. */
	if (viz_load(path, VIZ_KEEP_ALL, &first, &in, &err))
		return 0;
	render_report(&in, null, false);
	render_report(&in, null, true);
	render_explain(&in, &first, null, &err);
	render_graph(&in, &opts, null, &err);
	opts.leaks_only = true;
	render_graph(&in, &opts, null, &err);
	opts.leaks_only = false;
	opts.root = first;
	render_graph(&in, &opts, null, &err);
	viz_unload(&in);
	/* The picture's own model folds finished closures past a sample: with a sample of one,
	 * every second finished closure of a kind is folded away. */
	if (viz_load(path, 1, NULL, &in, &err))
		return 0;
	opts.root = (struct model_id){0};
	render_graph(&in, &opts, null, &err);
	viz_unload(&in);
	return 0;
}
