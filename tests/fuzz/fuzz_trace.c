/*
 * fuzz_trace.c - libFuzzer harness for the trace readers.
 *
 * Built once per format by scripts/fuzz (-DFUZZ_FORMAT=TF_...): the input becomes a file (for
 * weka, the one conversation file of a directory) on tmpfs, which the reader then opens and
 * reads to the end. Any crash, leak, hang or sanitizer report is a bug; a clean error is fine.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

#ifndef FUZZ_FORMAT
#define FUZZ_FORMAT TF_UNKNOWN
#endif

static char dir[64], file[128];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/dev/shm/fg-fuzz-%d", (int)getpid());
		mkdir(dir, 0700);
		snprintf(file, sizeof(file), "%s/%s", dir, FUZZ_FORMAT == TF_WEKA ? "c.json" : "t");
	}
	FILE *f = fopen(file, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	struct trace_opts o;
	char err[8192];
	trace_opts_default(&o);
	o.force = FUZZ_FORMAT;
	o.skip_bad = size && (data[0] & 1); /* both error paths */
	struct trace *t = trace_open(FUZZ_FORMAT == TF_WEKA ? dir : file, &o, err, sizeof(err));
	if (!t)
		return 0;
	if (trace_is_block(t)) {
		struct blk_io io;
		while (trace_next_blk(t, &io) == 1)
			;
	} else {
		struct kv_request rq;
		uint64_t sum = 0;
		while (trace_next_kv(t, &rq) == 1)
			for (uint32_t i = 0; i < rq.nblocks; i++)
				sum += rq.blocks[i]; /* touch every id: ASan checks the bounds */
		(void)sum;
	}
	trace_close(t);
	return 0;
}
