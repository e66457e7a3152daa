/*
 * fuzz_kvsim.c - libFuzzer harness for the KV-cache tier simulator (scripts/fuzz-kvsim).
 *
 * The input is read as a small KV trace and a configuration: byte 0 picks dense or hybrid, the
 * slot, log or region allocator (bit 5: region, 4 regions of 16 KiB, re-admission 0 or 0.5 by
 * bit 6), TRIM, and whether block ids are prefix-chained (a tree, as real traces
 * are) or drawn raw from a 16-id alphabet (repeats, an id under several parents: what a
 * malformed trace can hold). Then, per request: a session byte, a length byte and one byte per
 * block. Every policy (the oracle told the same trace) replays it with 6 chunks of DRAM and an SSD
 * tier of 8 slots on a tiny emulated drive, and kvsim_check() must pass after every request,
 * ftl_check() at the end, and the host bytes the drive saw must equal what the simulator wrote.
 * Any failure aborts (a finding). Built with -DFG_FUZZ_MAIN it is a plain program that replays
 * every file of a corpus directory (`make check` replays tests/fuzz/corpus/kvsim this way).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftl.h"
#include "kvsim.h"

#define MAXREQ 48
#define MAXBLK 24

static void die(const char *pol, const char *what, const char *err)
{
	fprintf(stderr, "fuzz_kvsim: %s: %s: %s\n", pol, what, err);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t ids[MAXREQ][MAXBLK];
	static struct kv_request rq[MAXREQ];
	if (size < 2)
		return 0;
	uint8_t mode = data[0];
	bool hybrid = mode & 1, log = mode & 2, trim = mode & 4, raw = mode & 8;
	size_t p = 1, n = 0;
	while (n < MAXREQ && p + 2 <= size) {
		uint8_t sess = data[p++] % 8, len = (uint8_t)(data[p++] % MAXBLK + 1);
		uint64_t h = 0x9e3779b97f4a7c15ull * (sess + 1);
		uint32_t k = 0;
		for (; k < len && p < size; k++) {
			uint8_t b = data[p++];
			if (raw) {
				ids[n][k] = b % 16 + 1;
			} else { /* the id of a block is a hash of the prefix up to it */
				h = (h ^ (b % 4)) * 0xff51afd7ed558ccdull;
				h ^= h >> 29;
				ids[n][k] = (h & 0xfffff) + 1;
			}
		}
		if (!k)
			break;
		rq[n] = (struct kv_request){.t = (double)n, .session = sess, .parent = KV_NO_SESSION, .block_tokens = 16,
					    .input_tokens = k * 16 - (mode & 16 ? 5 : 0), .output_tokens = 1,
					    .nblocks = k, .blocks = ids[n]};
		n++;
	}
	if (!n)
		return 0;
	struct kv_trace kt = {.rq = rq, .n = n};
	char err[512];
	for (int i = 0; kv_policies[i]; i++) {
		const struct kv_policy *pol = kv_policies[i];
		struct kv_config c;
		memset(&c, 0, sizeof(c));
		strcpy(c.model.name, "fuzz");
		c.model.full_kv_bytes_per_token = 256; /* a chunk is one 4 KiB slot */
		c.model.linear_state_bytes = hybrid ? 8192 : 0;
		c.dram_bytes = 6 * 4096;
		c.ssd_bytes = 8 * 4096;
		c.alloc = mode & 32 ? KV_ALLOC_REGION : log ? KV_ALLOC_LOG : KV_ALLOC_SLOTS;
		c.readmit = mode & 64 ? 0.5 : 0;
		c.trim = trim;
		c.ssd_gbps = 10;
		c.pcie_gbps = 50;
		c.prefill_tokens_per_s = 60000;
		c.gpu_usd_per_hour = 2.5;
		c.ssd_usd = 100;
		c.tbw_bytes = 1e9;
		struct ftl_config fc;
		ftl_config_default(&fc);
		fc.channels = fc.luns_per_channel = fc.planes_per_lun = 1;
		fc.blocks_per_plane = 64;
		fc.pages_per_block = 4;
		fc.page_size = fc.unit_size = 4096;
		fc.spare_factor = 0.25;
		fc.op_percent = -1;
		struct ftl *f = ftl_create(&fc, err, sizeof(err));
		if (!f)
			die(pol->name, "ftl_create", err);
		if (c.ssd_bytes > ftl_get_geometry(f)->user_bytes)
			c.ssd_bytes = ftl_get_geometry(f)->user_bytes / 4096 * 4096;
		if (mode & 32) /* a region is one 16 KiB block (a state fits 2 times: 4 needs 32 KiB) */
			c.ssd_bytes = 4 * (c.region_bytes = 32768);
		void *prepared = NULL;
		if (pol->prepare && !(prepared = pol->prepare(&kt, &c, err, sizeof(err))))
			die(pol->name, "prepare", err);
		struct kvsim *s = kvsim_new(&c, pol, "", prepared, f, err, sizeof(err));
		if (!s)
			die(pol->name, "init", err);
		for (size_t r = 0; r < n; r++) {
			if (kvsim_request(s, &rq[r], err, sizeof(err)))
				die(pol->name, "request", err);
			if (kvsim_check(s, err, sizeof(err)))
				die(pol->name, "kvsim_check", err);
		}
		kvsim_finish(s);
		struct ftl_stats fs;
		ftl_get_stats(f, &fs);
		if (fs.host_write_bytes !=
		    kvsim_stats(s)->ssd_write_bytes[0] + kvsim_stats(s)->ssd_write_bytes[1])
			die(pol->name, "accounting", "drive and simulator disagree on bytes written");
		if (kvsim_stats(s)->ftl_errors)
			die(pol->name, "ftl", "the drive refused an I/O");
		if (ftl_check(f, err, sizeof(err)))
			die(pol->name, "ftl_check", err);
		kvsim_free(s);
		if (prepared)
			pol->unprepare(prepared);
		ftl_destroy(f);
	}
	return 0;
}

#ifdef FG_FUZZ_MAIN
int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	DIR *d = opendir(argv[1]);
	if (!d) {
		perror(argv[1]);
		return 2;
	}
	struct dirent *e;
	unsigned n = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f) {
			perror(path);
			return 1;
		}
		static uint8_t buf[1 << 16];
		size_t len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		n++;
	}
	closedir(d);
	printf("fuzz_kvsim: %u inputs replayed, every policy, no failure\n", n);
	return n ? 0 : 1;
}
#endif
