/*
 * cmd_trace.c - `femu-gandalf trace info`: describe any trace the readers understand.
 *
 * Reads the whole trace once, streaming, and prints the detected format and its counts. Block
 * ids are collected and sorted to count the unique ones (8 bytes per block reference).
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trace.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

GOptionEntry *fg_trace_entries(struct trace_cli *c)
{
	static GOptionEntry e[7];
	GOptionEntry tmp[] = {
		{"format", 0, 0, G_OPTION_ARG_STRING, &c->format, "force a format: blk-csv, biosnoop, mooncake, bailian, aiperf, weka", "F"},
		{"skip-bad", 0, 0, G_OPTION_ARG_NONE, &c->skip_bad, "count and skip malformed records instead of stopping", NULL},
		{"block-tokens", 0, 0, G_OPTION_ARG_INT, &c->block_tokens, "tokens per hash block (default: the format's)", "N"},
		{"session-rate", 0, 0, G_OPTION_ARG_DOUBLE, &c->session_rate, "WEKA: Poisson session arrivals per second (default 0.05)", "R"},
		{"stagger", 0, 0, G_OPTION_ARG_DOUBLE, &c->stagger, "WEKA: fixed seconds between session starts (overrides the rate)", "S"},
		{"seed", 0, 0, G_OPTION_ARG_INT64, &c->seed, "WEKA: arrival seed (default 1)", "S"},
		{NULL},
	};
	memcpy(e, tmp, sizeof(tmp));
	return e;
}

int fg_trace_opts(const struct trace_cli *c, struct trace_opts *o)
{
	trace_opts_default(o);
	o->skip_bad = c->skip_bad;
	if (c->format) {
		o->force = trace_format_parse(c->format);
		if (o->force == TF_UNKNOWN) {
			fprintf(stderr, "femu-gandalf: --format %s: must be blk-csv, biosnoop, mooncake, bailian, aiperf or weka\n", c->format);
			return -1;
		}
	}
	if (c->block_tokens < 0 || c->session_rate < 0 || c->stagger < 0) {
		fprintf(stderr, "femu-gandalf: --block-tokens, --session-rate and --stagger must be >= 0\n");
		return -1;
	}
	o->block_tokens = (uint32_t)c->block_tokens;
	if (c->session_rate > 0)
		o->session_rate = c->session_rate;
	o->stagger = c->stagger;
	if (c->seed)
		o->seed = (uint64_t)c->seed;
	return 0;
}

static int trace_info(int argc, char **argv)
{
	struct trace_cli c = {0};
	gboolean json = FALSE;
	GOptionEntry mine[] = {
		{"json", 'j', 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
		{NULL},
	};
	GOptionContext *ctx = g_option_context_new("FILE|DIR - describe a block or KV-request trace");
	g_option_context_add_main_entries(ctx, mine, NULL);
	g_option_context_add_main_entries(ctx, fg_trace_entries(&c), NULL);
	g_option_context_set_description(ctx,
		"Formats are detected from the content; .zst files are read transparently.\n"
		"A malformed record stops with FILE:LINE: reason and exit code 2.\n\n"
		"Examples:\n"
		"  femu-gandalf trace info ../shared/traces/mooncake/conversation_trace.jsonl\n"
		"  femu-gandalf trace info ../shared/traces/weka-claude-code --json\n"
		"  femu-gandalf trace info capture.csv.zst --skip-bad\n");
	int rc = EXIT_USAGE;
	struct trace *t = NULL;
	uint64_t *ids = NULL;
	if (!fg_parse_opts_args(ctx, &argc, &argv, 1, "FILE or DIR"))
		goto out;
	struct trace_opts o;
	char err[PATH_MAX + 700];
	if (fg_trace_opts(&c, &o))
		goto out;
	double t0 = now_seconds();
	t = trace_open(argv[1], &o, err, sizeof(err));
	if (!t) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		goto out;
	}
	uint64_t n = 0, nblk = 0, cap = 0, in = 0, out_tok = 0, sessions_max = 0;
	uint64_t rb = 0, wb = 0, db = 0, nr = 0, nw = 0, nd = 0, nf = 0, end = 0;
	double first = NAN, last = NAN;
	uint32_t bt = 0;
	bool have_sessions = false;
	int r;
	if (trace_is_block(t)) {
		struct blk_io io;
		while ((r = trace_next_blk(t, &io)) == 1) {
			double ts = io.t_ns / 1e9;
			if (!n)
				first = ts;
			last = ts;
			n++;
			switch (io.op) {
			case 'R': nr++, rb += io.bytes; break;
			case 'W': nw++, wb += io.bytes; break;
			case 'D': nd++, db += io.bytes; break;
			default: nf++; break;
			}
			if (io.op != 'F' && io.lba * 512 + io.bytes > end)
				end = io.lba * 512 + io.bytes;
		}
	} else {
		struct kv_request rq;
		while ((r = trace_next_kv(t, &rq)) == 1) {
			if (!n)
				first = rq.t, bt = rq.block_tokens;
			last = rq.t;
			n++;
			in += rq.input_tokens;
			out_tok += rq.output_tokens;
			if (rq.session != KV_NO_SESSION) {
				have_sessions = true;
				if (rq.session + 1 > sessions_max)
					sessions_max = rq.session + 1;
			}
			if (nblk + rq.nblocks > cap) {
				cap = cap ? cap * 2 : 1 << 16;
				while (cap < nblk + rq.nblocks)
					cap *= 2;
				uint64_t *ni = realloc(ids, cap * sizeof(*ids));
				if (!ni) {
					fprintf(stderr, "femu-gandalf: out of memory\n");
					rc = 1;
					goto out;
				}
				ids = ni;
			}
			if (rq.nblocks)
				memcpy(ids + nblk, rq.blocks, rq.nblocks * sizeof(uint64_t));
			nblk += rq.nblocks;
		}
	}
	if (r < 0) {
		fprintf(stderr, "femu-gandalf: %s\n", trace_error(t));
		goto out;
	}
	double secs = now_seconds() - t0;
	if (!n) {
		fprintf(stderr, "femu-gandalf: %s: no usable records%s\n", argv[1],
			trace_skipped(t) ? " (all malformed and skipped)" : "");
		goto out;
	}
	if (nblk)
		qsort(ids, nblk, sizeof(*ids), cmp_u64);
	uint64_t uniq = 0;
	for (uint64_t i = 0; i < nblk; i++)
		uniq += !i || ids[i] != ids[i - 1];
	double dur = last - first;
	const char *fmt = trace_format_name(trace_format(t));
	if (json) {
		struct json_out j;
		jout_init(&j, stdout);
		jout_object(&j, NULL, JOUT_BLOCK);
		jout_str(&j, "path", argv[1]);
		jout_str(&j, "format", fmt);
		if (trace_is_block(t)) {
			jout_u64(&j, "ios", n);
			jout_u64(&j, "reads", nr);
			jout_u64(&j, "writes", nw);
			jout_u64(&j, "discards", nd);
			jout_u64(&j, "flushes", nf);
			jout_u64(&j, "read_bytes", rb);
			jout_u64(&j, "write_bytes", wb);
			jout_u64(&j, "discard_bytes", db);
			jout_u64(&j, "max_offset_bytes", end);
		} else {
			jout_u64(&j, "requests", n);
			jout_u64(&j, "sessions", have_sessions ? sessions_max : 0);
			jout_u64(&j, "block_tokens", bt);
			jout_u64(&j, "blocks", nblk);
			jout_u64(&j, "unique_blocks", uniq);
			jout_u64(&j, "input_tokens", in);
			jout_u64(&j, "output_tokens", out_tok);
			jout_u64(&j, "read_bytes", 0);
			jout_u64(&j, "write_bytes", 0);
		}
		jout_num(&j, "duration_s", "%.6f", dur);
		jout_u64(&j, "skipped", trace_skipped(t));
		jout_u64(&j, "input_bytes", trace_bytes_read(t));
		jout_num(&j, "parse_mb_per_s", "%.1f", trace_bytes_read(t) / 1e6 / (secs > 0 ? secs : 1e-9));
		jout_end(&j);
		if (fg_json_finish(&j)) {
			rc = 1;
			goto out;
		}
	} else {
		printf("%s: %s trace\n", argv[1], fmt);
		if (trace_is_block(t))
			printf("  %llu I/Os: %llu reads (%.3f GB), %llu writes (%.3f GB), %llu discards (%.3f GB), %llu flushes\n"
			       "  highest offset %.3f GB\n",
			       (unsigned long long)n, (unsigned long long)nr, rb / 1e9, (unsigned long long)nw,
			       wb / 1e9, (unsigned long long)nd, db / 1e9, (unsigned long long)nf, end / 1e9);
		else
			printf("  %llu requests in %llu sessions, %u tokens per block\n"
			       "  %llu block references, %llu unique; %llu input and %llu output tokens\n",
			       (unsigned long long)n, (unsigned long long)(have_sessions ? sessions_max : 0), bt,
			       (unsigned long long)nblk, (unsigned long long)uniq, (unsigned long long)in,
			       (unsigned long long)out_tok);
		printf("  duration %.1f s (%.2f h)%s\n", dur, dur / 3600,
		       trace_skipped(t) ? "" : "");
		if (trace_skipped(t))
			printf("  %llu malformed records skipped (last: %s)\n", (unsigned long long)trace_skipped(t),
			       trace_error(t));
	}
	rc = 0;
out:
	free(ids);
	trace_close(t);
	g_option_context_free(ctx);
	return rc;
}

int cmd_trace(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "info"))
		return trace_info(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("Usage: femu-gandalf trace info FILE|DIR [--json]\n\nDescribe a trace.\n"
		       "Example:\n  femu-gandalf trace info ../shared/traces/mooncake/conversation_trace.jsonl\n");
		return 0;
	}
	fprintf(stderr, "femu-gandalf trace: expected 'info' (try: femu-gandalf trace --help)\n");
	return EXIT_USAGE;
}
