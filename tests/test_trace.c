/*
 * test_trace.c - the trace readers on small hand-made files (every tricky case the issue names),
 * and on the real traces in ../shared/traces when they are there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "check.h"
#include <glib.h>
#include <jansson.h>

#include "trace.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/fg-trace-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rm_tree(dir);
}

static const char *put(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	char *slash = strrchr(path, '/');
	*slash = 0;
	mkdir(path, 0700);
	*slash = '/';
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static struct trace *open_ok(const char *path, enum trace_format want)
{
	struct trace_opts o;
	char err[5000];
	trace_opts_default(&o);
	struct trace *t = trace_open(path, &o, err, sizeof(err));
	if (!t)
		fail_msg("trace_open(%s): %s", path, err);
	assert_int_equal(trace_format(t), want);
	return t;
}

/* Open and read to the end; return the error text (or "" when it read cleanly). */
static const char *read_err(const char *path, bool skip, uint64_t *n, uint64_t *skipped)
{
	static char err[5000];
	struct trace_opts o;
	trace_opts_default(&o);
	o.skip_bad = skip;
	struct trace *t = trace_open(path, &o, err, sizeof(err));
	*n = 0;
	if (!t)
		return err;
	int r;
	if (trace_is_block(t)) {
		struct blk_io io;
		while ((r = trace_next_blk(t, &io)) == 1)
			(*n)++;
	} else {
		struct kv_request rq;
		while ((r = trace_next_kv(t, &rq)) == 1)
			(*n)++;
	}
	snprintf(err, sizeof(err), "%s", r < 0 ? trace_error(t) : "");
	if (skipped)
		*skipped = trace_skipped(t);
	trace_close(t);
	return err;
}

static void expect_err(const char *path, const char *want)
{
	uint64_t n;
	const char *e = read_err(path, false, &n, NULL);
	if (!strstr(e, want))
		fail_msg("%s: expected '%s', got '%s'", path, want, e);
}

static void test_blk_csv(void **state)
{
	(void)state;
	const char *p = put("a.csv", "time_ns,op,lba,bytes\n# comment\n0,W,0,4096\n0,W,8,4096\n10,R,0,8192\n"
				      "20,D,16,1048576\n30,F,0,0\n");
	struct trace *t = open_ok(p, TF_BLK_CSV);
	struct blk_io io;
	char ops[8] = "";
	uint64_t bytes = 0;
	int n = 0;
	while (trace_next_blk(t, &io) == 1) {
		ops[n++] = io.op;
		bytes += io.bytes;
	}
	assert_string_equal(ops, "WWRDF"); /* a tie in timestamps keeps file order */
	assert_int_equal(bytes, 4096 * 2 + 8192 + 1048576);
	trace_close(t);
	expect_err(put("b.csv", "0,W,0,4096\n5,X,0,4096\n"), "b.csv:2: op 'X': must be R, W, D or F");
	expect_err(put("c.csv", "0,W,0,4096\n5,W,-1,4096\n"), "c.csv:2: lba '-1'");
	expect_err(put("d.csv", "0,W,0\n"), "d.csv:1: expected 4 fields");
	expect_err(put("e.csv", "9,W,0,4096\n5,W,0,4096\n"), "e.csv:2: time_ns 5 goes back");
	expect_err(put("f.csv", "0,W,0,0\n"), "f.csv:1: bytes 0");
	uint64_t cnt, sk;
	const char *e = read_err(put("g.csv", "0,W,0,4096\nxx\n1,W,8,4096\n2,Q,0,1\n3,W,0,512\n"), true, &cnt, &sk);
	assert_string_equal(e, "");
	assert_int_equal(cnt, 3);
	assert_int_equal(sk, 2);
}

static void test_biosnoop(void **state)
{
	(void)state;
	const char *p = put("bio.txt",
		"TIME(s)     COMM           PID     DISK      T  SECTOR     BYTES   LAT(ms)\n"
		"0.000000    fio            1234    nvme0n1   W  2048       4096      0.05\n"
		"0.000100    kworker/u8:2   99      nvme0n1   WS 4096       8192      0.07\n"
		"0.000200    my thread      55      nvme0n1   R  2048       4096      0.03\n"
		"0.000300    blkdiscard     77      nvme0n1   D  0          1048576   0.50\n"
		"0.000400    jbd2/nvme      80      nvme0n1   FWS 0          0         0.20\n"
		/* libbpf-tools 0.31: a flush of a hidden (multipath) disk, sector -1, no task */
		"0.000500    ?              0       Unknown   FF  -1         0         0.13\n");
	struct trace *t = open_ok(p, TF_BIOSNOOP);
	struct blk_io io;
	char ops[8] = "";
	int n = 0;
	uint64_t lba_sum = 0;
	while (trace_next_blk(t, &io) == 1) {
		ops[n++] = io.op;
		lba_sum += io.lba;
		if (n == 2)
			assert_int_equal(io.t_ns, 100000);
	}
	assert_string_equal(ops, "WWRDFF");
	assert_int_equal(lba_sum, 2048 + 4096 + 2048);
	trace_close(t);
	/* with the QUE(ms) column */
	p = put("bioq.txt", "TIME(s)     COMM           PID     DISK      T  SECTOR     BYTES  QUE(ms) LAT(ms)\n"
			    "1.5         fio            1       vda       W  8          512       0.01    0.02\n");
	t = open_ok(p, TF_BIOSNOOP);
	assert_int_equal(trace_next_blk(t, &io), 1);
	assert_int_equal(io.lba, 8);
	assert_int_equal(io.bytes, 512);
	assert_int_equal(io.t_ns, 1500000000);
	trace_close(t);
	expect_err(put("biobad.txt", "TIME(s) COMM PID DISK T SECTOR BYTES LAT(ms)\n0.1 fio 1 vda W abc 4096 0.1\n"),
		   "biobad.txt:2: SECTOR 'abc'");
	/* -1 is a flush's sector only */
	expect_err(put("biobad2.txt", "TIME(s) COMM PID DISK T SECTOR BYTES LAT(ms)\n0.1 fio 1 vda W -1 4096 0.1\n"),
		   "biobad2.txt:2: SECTOR '-1'");
}

/* Tracepoint text from tracefs (trace file with its header), trace-cmd and perf script. */
static void test_ftrace(void **state)
{
	(void)state;
	const char *p = put("ft.txt",
		"# tracer: nop\n"
		"# entries-in-buffer/entries-written: 9/9   #P:2\n"
		"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
		/* the first block_rq_* event is an issue: completions are then ignored */
		"    kworker/0:1H-38      [000] .....     6.272339: block_rq_issue: 259,0 WS 65536 () 0 + 128 [kworker/0:1H]\n"
		"          <idle>-0       [000] d.h1.     6.275048: block_rq_complete: 259,0 WS () 0 + 128 [0]\n"
		/* other events are not I/Os */
		"             fio-7       [001] .....     6.275100: block_bio_queue: 259,0 R 8 + 8 [fio]\n"
		/* a task name with a colon and spaces, a read */
		"   my task:2 x-99        [001] .....     6.283683: block_rq_issue: 259,0 RS 4096 () 8 + 8 [my task:2 x]\n"
		"    kworker/0:1H-38      [000] .....     6.289796: block_rq_issue: 259,0 DS 1048576 () 2048 + 2048 [blkdiscard]\n"
		/* a pre-flush with no data: sector -1 */
		"    kworker/0:1H-38      [000] .....     6.289796: block_rq_issue: 259,0 FF 0 () 18446744073709551615 + 0 [kworker/0:1H]\n"
		/* perf script; write + FUA; out of order by 1 us across CPUs (kept) */
		"             fio   123 [001]     6.289795: block:block_rq_issue: 259,0 WFS 4096 () 16 + 8 [fio]\n");
	struct trace *t = open_ok(p, TF_FTRACE);
	struct blk_io io;
	char ops[8] = "";
	int n = 0;
	uint64_t bytes = 0, lba_sum = 0;
	while (trace_next_blk(t, &io) == 1) {
		ops[n++] = io.op;
		bytes += io.bytes;
		lba_sum += io.lba;
		if (n == 1)
			assert_int_equal(io.t_ns, 6272339000ULL);
	}
	assert_string_equal(ops, "WRDFW");
	assert_int_equal(bytes, 65536 + 4096 + 1048576 + 4096);
	assert_int_equal(lba_sum, 8 + 2048 + 16);
	trace_close(t);
	/* completions only: bytes = NR * 512 */
	p = put("ftc.txt", "  <idle>-0 [000] d.h1. 1.000000: block_rq_complete: 8,16 W () 100 + 16 [0]\n"
			   "  <idle>-0 [000] d.h1. 1.500000: block_rq_issue: 8,16 W 8192 () 100 + 16 [fio]\n");
	t = open_ok(p, TF_FTRACE);
	assert_int_equal(trace_next_blk(t, &io), 1);
	assert_int_equal(io.bytes, 8192);
	assert_int_equal(io.lba, 100);
	assert_int_equal(trace_next_blk(t, &io), 0);
	trace_close(t);
	const char *ev = "  fio-1 [000] ..... 1.0: block_rq_issue: ";
	char text[1024];
	snprintf(text, sizeof(text), "%s259,0 W 4096 () 0 + 8 [fio]\n%s8,0 W 4096 () 0 + 8 [fio]\n", ev, ev);
	expect_err(put("ftdev.txt", text), "ftdev.txt:2: device 8,0: the trace's first I/O was on 259,0");
	snprintf(text, sizeof(text), "%s259,0 W 4096 () 0 + 8 [fio]\nCPU:1 [LOST 12 EVENTS]\n", ev);
	expect_err(put("ftlost.txt", text), "ftlost.txt:2: ftrace lost events");
	snprintf(text, sizeof(text), "# entries-in-buffer/entries-written: 1/5   #P:1\n%s259,0 W 4096 () 0 + 8 [x]\n", ev);
	expect_err(put("ftover.txt", text), "ftover.txt:1: ftrace kept 1 of 5 events");
	snprintf(text, sizeof(text), "%s259,0 N 0 () 0 + 8 [nvme]\n", ev);
	expect_err(put("ftn.txt", text), "ftn.txt:1: RWBS 'N'");
	snprintf(text, sizeof(text), "%s259,0 W 4096 0 + 8 [fio]\n", ev);
	expect_err(put("ftcmd.txt", text), "ftcmd.txt:1: expected '(CMD)'");
	snprintf(text, sizeof(text), "%s259,0 W 4096 () 0 + 8 [fio]\nthis is not an event\n", ev);
	expect_err(put("ftjunk.txt", text), "ftjunk.txt:2: not a tracepoint line");
	expect_err(put("ftcerr.txt", "  x-0 [000] .... 2.0: block_rq_complete: 8,0 W () 0 + 8 [-5]\n"),
		   "ftcerr.txt:1: block_rq_complete with error -5");
}

static void test_mooncake(void **state)
{
	(void)state;
	/* ceil: 1025 tokens at 512 per block = 3 blocks; empty hash_ids for a 0-token prompt */
	const char *p = put("m.jsonl", "{\"timestamp\": 0, \"input_length\": 1025, \"output_length\": 5, \"hash_ids\": [0, 1, 2]}\n"
				       "{\"timestamp\": 0, \"input_length\": 0, \"output_length\": 1, \"hash_ids\": []}\n"
				       "\n"
				       "{\"timestamp\": 1500, \"input_length\": 512, \"output_length\": 2, \"hash_ids\": [ 0 ]}\n");
	struct trace *t = open_ok(p, TF_MOONCAKE);
	struct kv_request rq;
	assert_int_equal(trace_next_kv(t, &rq), 1);
	assert_int_equal(rq.nblocks, 3);
	assert_int_equal(rq.blocks[2], 2);
	assert_int_equal(rq.block_tokens, 512);
	assert_int_equal(rq.input_tokens, 1025);
	assert_true(rq.session == KV_NO_SESSION);
	assert_int_equal(trace_next_kv(t, &rq), 1);
	assert_int_equal(rq.nblocks, 0);
	assert_int_equal(trace_next_kv(t, &rq), 1);
	assert_true(rq.t == 1.5);
	assert_int_equal(rq.nblocks, 1);
	assert_int_equal(rq.blocks[0], 0);
	assert_int_equal(trace_next_kv(t, &rq), 0);
	trace_close(t);
	expect_err(put("m2.jsonl", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0]}\n{\"timestamp\": 1, \"input_length\": 1, "),
		   "m2.jsonl:2: invalid JSON");
	expect_err(put("m3.jsonl", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0, -4]}\n"),
		   "m3.jsonl:1: 'hash_ids' holds a value that is not a non-negative integer");
	expect_err(put("m4.jsonl", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0.5]}\n"),
		   "m4.jsonl:1: 'hash_ids' holds a value");
	expect_err(put("m5.jsonl", "{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n"
				   "{\"timestamp\": 4, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n"),
		   "m5.jsonl:2: timestamp 0.004 s goes back");
	expect_err(put("m6.jsonl", "{\"timestamp\": 5, \"output_length\": 1, \"hash_ids\": [1]}\n"),
		   "m6.jsonl:1: missing or invalid 'input_length'");
	expect_err(put("empty.jsonl", ""), "empty file");
}

static void test_bailian(void **state)
{
	(void)state;
	const char *p = put("b.jsonl",
		"{\"chat_id\": 10, \"parent_chat_id\": -1, \"timestamp\": 0.5, \"input_length\": 40, \"output_length\": 3, \"type\": \"text\", \"turn\": 1, \"hash_ids\": [1, 2, 3]}\n"
		"{\"chat_id\": 11, \"parent_chat_id\": -1, \"timestamp\": 0.5, \"input_length\": 16, \"output_length\": 3, \"type\": \"search\", \"turn\": 1, \"hash_ids\": [9]}\n"
		"{\"chat_id\": 12, \"parent_chat_id\": 10, \"timestamp\": 2.0, \"input_length\": 60, \"output_length\": 3, \"type\": \"text\", \"turn\": 2, \"hash_ids\": [1, 2, 3, 4]}\n"
		"{\"chat_id\": 13, \"parent_chat_id\": 12, \"timestamp\": 3.0, \"input_length\": 70, \"output_length\": 3, \"type\": \"text\", \"turn\": 3, \"hash_ids\": [1, 2, 3, 4, 5]}\n");
	struct trace *t = open_ok(p, TF_BAILIAN);
	struct kv_request rq;
	uint64_t sess[4];
	for (int i = 0; i < 4; i++) {
		assert_int_equal(trace_next_kv(t, &rq), 1);
		sess[i] = rq.session;
		assert_int_equal(rq.block_tokens, 16);
	}
	assert_true(sess[0] != sess[1]);
	assert_true(sess[2] == sess[0] && sess[3] == sess[0]); /* the chain 10 -> 12 -> 13 */
	trace_close(t);
}

static void test_aiperf(void **state)
{
	(void)state;
	/* session b's second turn comes by delay and lands between a's turns: the reader sorts */
	const char *p = put("ai.jsonl",
		"{\"session_id\": \"a\", \"timestamp\": 0, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
		"{\"session_id\": \"a\", \"delay\": 5000, \"input_length\": 1100, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}\n"
		"{\"session_id\": \"b\", \"timestamp\": 1000, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [7]}\n"
		"{\"session_id\": \"b\", \"delay\": 1000, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [7]}\n");
	struct trace *t = open_ok(p, TF_AIPERF);
	struct kv_request rq;
	double ts[4];
	uint64_t s[4];
	for (int i = 0; i < 4; i++) {
		assert_int_equal(trace_next_kv(t, &rq), 1);
		ts[i] = rq.t;
		s[i] = rq.session;
	}
	assert_int_equal(trace_next_kv(t, &rq), 0);
	assert_true(ts[0] == 0 && ts[1] == 1 && ts[2] == 2 && ts[3] == 5);
	assert_true(s[0] == s[3] && s[1] == s[2] && s[0] != s[1]);
	trace_close(t);
	expect_err(put("ai2.jsonl", "{\"session_id\": \"z\", \"delay\": 5, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n"),
		   "ai2.jsonl:1: the first turn of session 'z' needs a 'timestamp'");
	/* a session_id the session table cannot hold whole is refused, not cut (two ids that
	 * share their first 253 bytes would have become one session) */
	char big[600], id[300];
	memset(id, 'x', 299);
	id[299] = 0;
	snprintf(big, sizeof(big),
	         "{\"session_id\": \"%s\", \"timestamp\": 0, \"input_length\": 1, "
	         "\"output_length\": 1, \"hash_ids\": [1]}\n",
	         id);
	expect_err(put("ai3.jsonl", big), "ai3.jsonl:1: 'session_id' longer than 253 bytes");
	/* session paths (traces/FORMATS.md): "a/sub0" is a child of "a", "b/x" has no parent */
	t = open_ok(put("ai4.jsonl",
	                "{\"session_id\": \"a\", \"timestamp\": 0, \"input_length\": 1, "
	                "\"output_length\": 1, \"hash_ids\": [1]}\n"
	                "{\"session_id\": \"a/sub0\", \"timestamp\": 1, \"input_length\": 1, "
	                "\"output_length\": 1, \"hash_ids\": [1]}\n"
	                "{\"session_id\": \"b/x\", \"timestamp\": 2, \"input_length\": 1, "
	                "\"output_length\": 1, \"hash_ids\": [1]}\n"),
	            TF_AIPERF);
	assert_int_equal(trace_next_kv(t, &rq), 1);
	uint64_t a = rq.session;
	assert_true(rq.parent == KV_NO_SESSION);
	assert_int_equal(trace_next_kv(t, &rq), 1);
	assert_true(rq.parent == a && rq.session != a);
	assert_int_equal(trace_next_kv(t, &rq), 1);
	assert_true(rq.parent == KV_NO_SESSION);
	trace_close(t);
}

static void test_weka(void **state)
{
	(void)state;
	/* floor: 130 tokens at 64 per block = 2 full blocks; a sub-agent with a nested sub-agent */
	put("w/c1.json", "{\"id\": \"c1\", \"block_size\": 64, \"hash_id_scope\": \"local\", \"requests\": ["
			 "{\"t\": 0, \"type\": \"n\", \"in\": 130, \"out\": 5, \"hash_ids\": [1, 2]},"
			 "{\"t\": 10, \"type\": \"subagent\", \"agent_id\": \"x\", \"requests\": ["
			 "  {\"t\": 0, \"type\": \"n\", \"in\": 64, \"out\": 1, \"hash_ids\": [7]},"
			 "  {\"t\": 2, \"type\": \"subagent\", \"requests\": [{\"t\": 1, \"type\": \"s\", \"in\": 10, \"out\": 1, \"hash_ids\": []}]}"
			 "]},"
			 "{\"t\": 20, \"type\": \"s\", \"in\": 200, \"out\": 5, \"hash_ids\": [1, 2, 3]}]}\n");
	put("w/c2.json", "{\"id\": \"c2\", \"block_size\": 64, \"requests\": [{\"t\": 0, \"type\": \"n\", \"in\": 64, \"out\": 1, \"hash_ids\": [1]}]}");
	put("w/LICENSE", "not json");
	char path[128];
	snprintf(path, sizeof(path), "%s/w", dir);
	struct trace_opts o;
	char err[5000];
	trace_opts_default(&o);
	o.stagger = 100;
	struct trace *t = trace_open(path, &o, err, sizeof(err));
	if (!t)
		fail_msg("%s", err);
	assert_int_equal(trace_format(t), TF_WEKA);
	struct kv_request rq;
	double ts[8];
	uint64_t sess[8], par[8], first_block[8];
	int n = 0;
	while (trace_next_kv(t, &rq) == 1) {
		ts[n] = rq.t;
		sess[n] = rq.session;
		par[n] = rq.parent;
		first_block[n] = rq.nblocks ? rq.blocks[0] : UINT64_MAX;
		assert_int_equal(rq.block_tokens, 64);
		if (rq.input_tokens == 130)
			assert_int_equal(rq.nblocks, 2);
		n++;
	}
	assert_int_equal(n, 5);
	/* times: c1 at 0 (0, 10+0, 10+2+1, 20), c2 at 100 */
	assert_true(ts[0] == 0 && ts[1] == 10 && ts[2] == 13 && ts[3] == 20 && ts[4] == 100);
	assert_true(sess[1] != sess[0] && par[1] == sess[0]); /* sub-agent: own session, parent c1 */
	assert_true(sess[2] != sess[1] && par[2] == sess[1]); /* nested one: parent is the sub-agent */
	assert_true(par[0] == KV_NO_SESSION);
	assert_true(first_block[0] == first_block[3]);        /* same file: same namespace */
	assert_true(first_block[4] != first_block[0]);        /* id 1 in c2 is another block */
	trace_close(t);
	put("w2/bad.json", "{\"block_size\": 64, \"requests\": [{\"t\": 0, \"in\": -1, \"out\": 1, \"hash_ids\": []}]}");
	snprintf(path, sizeof(path), "%s/w2", dir);
	expect_err(path, "bad.json: requests[0]: missing or invalid 'in'");
	put("w3/broken.json", "{\"block_size\": 64,\n \"requests\": [ {\"t\": 0,, } ]}");
	snprintf(path, sizeof(path), "%s/w3", dir);
	expect_err(path, "broken.json:2: invalid JSON");
}

/* The hash_ids side table replaces each array by its index in a copy of the text: 1,000 empty
 * arrays ("[]", 2 bytes) need up to 3-digit indexes, a pretty-printed array spans lines, and an
 * error after it must still be reported on its own line of the file. */
static void test_weka_compaction(void **state)
{
	(void)state;
	GString *g = g_string_new("{\"block_size\": 64, \"requests\": [\n");
	for (int i = 0; i < 1000; i++)
		g_string_append_printf(g, "{\"t\": %d, \"in\": 10, \"out\": 1, \"hash_ids\": []},\n", i);
	g_string_append(g, "{\"t\": 1000, \"in\": 192, \"out\": 1, \"hash_ids\": [\n  5,\n  6,\n  7\n]}]}\n");
	put("wc/a.json", g->str);
	char path[128];
	snprintf(path, sizeof(path), "%s/wc", dir);
	struct trace *t = open_ok(path, TF_WEKA);
	struct kv_request rq;
	int n = 0;
	uint64_t blocks = 0, last = 0;
	while (trace_next_kv(t, &rq) == 1) {
		n++;
		blocks += rq.nblocks;
		if (rq.nblocks)
			last = rq.blocks[rq.nblocks - 1] & ((1ULL << 40) - 1);
	}
	assert_int_equal(n, 1001);
	assert_int_equal(blocks, 3);
	assert_int_equal(last, 7);
	trace_close(t);
	/* the same file with an error on line 1006, after the multi-line array (lines 1002-1006) */
	g_string_truncate(g, g->len - 5);
	g_string_append(g, "] x}]}\n");
	put("wc/a.json", g->str);
	g_string_free(g, TRUE);
	expect_err(path, "a.json:1006:");
}

/*
 * The hash_ids pre-scanner (kv.c) must never disagree with jansson. The reference: a full jansson
 * parse of the record, whose top-level "hash_ids" is accepted when it is an array of non-negative
 * integers, else the record is rejected. jansson decodes escaped keys and keeps the last of
 * duplicate keys; the reader does as it does.
 */
static int jansson_ids(const char *rec, GArray *ids)
{
	json_error_t je;
	json_t *o = json_loads(rec, 0, &je), *a = o ? json_object_get(o, "hash_ids") : NULL;
	int ok = json_is_array(a);
	g_array_set_size(ids, 0);
	for (size_t i = 0; ok && i < json_array_size(a); i++) {
		json_t *x = json_array_get(a, i);
		uint64_t v = (uint64_t)json_integer_value(x);
		ok = json_is_integer(x) && json_integer_value(x) >= 0;
		g_array_append_val(ids, v);
	}
	json_decref(o);
	return ok;
}

static void ids_str(const GArray *ids, char *s, size_t len)
{
	size_t o = 0;
	s[0] = 0;
	for (guint i = 0; i < ids->len && o < len; i++)
		o += (size_t)snprintf(s + o, len - o, "%s%llu", i ? "," : "",
				      (unsigned long long)g_array_index(ids, uint64_t, i));
}

/*
 * One Mooncake record after a good one (so an error names line 2 of the file). A record not
 * starting with '{' is the tail of {"timestamp":0,"input_length":L,"output_length":1,...}, L
 * being 512 per expected id (Mooncake's invariant, checked after the ids are read).
 * The reader must agree with jansson_ids() and give want_ids ("5,6"; "" for []) or, when
 * want_err is set, fail with "FILE:2: want_err" (and, with skip_bad, skip just that record).
 */
static void hashids_case(const char *rec, const char *want_ids, const char *want_err)
{
	static int ncase;
	char full[8192], name[64], got[4096], path[300], want_pos[400];
	/* an input_length that keeps Mooncake's invariant: 512 tokens per expected id */
	unsigned nwant = want_ids && *want_ids ? 1 : 0;
	for (const char *c = want_ids; c && *c; c++)
		nwant += *c == ',';
	if (rec[0] == '{')
		snprintf(full, sizeof(full), "%s", rec);
	else
		snprintf(full, sizeof(full), "{\"timestamp\":0,\"input_length\":%u,\"output_length\":1,%s}",
			 512 * nwant, rec);
	GString *text = g_string_new("{\"timestamp\":0,\"input_length\":1,\"output_length\":1,\"hash_ids\":[42]}\n");
	g_string_append_printf(text, "%s\n", full);
	snprintf(name, sizeof(name), "hc%d.jsonl", ncase++);
	snprintf(path, sizeof(path), "%s", put(name, text->str));
	g_string_free(text, TRUE);
	GArray *ref = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	int ref_ok = jansson_ids(full, ref);
	if (ref_ok != !want_err)
		fail_msg("%s: the case's expectation disagrees with jansson", full);
	if (ref_ok) {
		ids_str(ref, got, sizeof(got));
		if (strcmp(got, want_ids))
			fail_msg("%s: jansson gives [%s], the case says [%s]", full, got, want_ids);
	}
	g_array_free(ref, TRUE);

	struct trace_opts o;
	char err[5000];
	trace_opts_default(&o);
	for (int skip = 0; skip < 2; skip++) {
		o.skip_bad = skip;
		struct trace *t = trace_open(path, &o, err, sizeof(err));
		if (!t)
			fail_msg("trace_open(%s): %s", full, err);
		struct kv_request rq;
		int r, n = 0;
		GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
		while ((r = trace_next_kv(t, &rq)) == 1)
			if (++n == 2)
				g_array_append_vals(ids, rq.blocks, rq.nblocks);
		ids_str(ids, got, sizeof(got));
		g_array_free(ids, TRUE);
		snprintf(want_pos, sizeof(want_pos), "%s:2: %s", path, want_err ? want_err : "");
		if (!want_err && (r != 0 || n != 2 || strcmp(got, want_ids)))
			fail_msg("%s: expected [%s], got %d records, [%s], error '%s'", full, want_ids, n, got,
				 r ? trace_error(t) : "");
		if (want_err && !skip && (r != -1 || n != 1 || strncmp(trace_error(t), want_pos, strlen(want_pos))))
			fail_msg("%s: expected '%s', got %d records, [%s], error '%s'", full, want_pos, n, got,
				 r ? trace_error(t) : "");
		if (want_err && skip && (r != 0 || n != 1 || trace_skipped(t) != 1))
			fail_msg("%s: with skip_bad, expected 1 record and 1 skipped, got %d and %llu", full, n,
				 (unsigned long long)trace_skipped(t));
		trace_close(t);
	}
}

#define NOT_ARRAY "'hash_ids' is not an array"
#define NOT_UINT "'hash_ids' holds a value that is not a non-negative integer"

/* Only the top-level member counts, whatever the nesting around it (the record first). */
static void test_hashids_nested(void **state)
{
	(void)state;
	hashids_case("\"hash_ids\":0,\"x\":{\"hash_ids\":[5,6]}", NULL, NOT_ARRAY);
	hashids_case("\"hash_ids\":0", NULL, NOT_ARRAY);
	hashids_case("\"x\":{\"hash_ids\":[5,6]},\"hash_ids\":0", NULL, NOT_ARRAY);
	hashids_case("\"x\":[{\"y\":[[{\"hash_ids\":[5,6]}]]}],\"hash_ids\":0", NULL, NOT_ARRAY);
	hashids_case("\"hash_ids\":0,\"x\":[[5,6],{\"hash_ids\":[]}]", NULL, NOT_ARRAY);
	hashids_case("\"hash_ids\":null,\"x\":{\"hash_ids\":[5,6]}", NULL, NOT_ARRAY);
	hashids_case("\"hash_ids\":\"[5,6]\"", NULL, NOT_ARRAY);
	hashids_case("\"hash_ids\":{\"hash_ids\":[5,6]}", NULL, NOT_ARRAY);
	hashids_case("\"hash_ids\":[{\"hash_ids\":[5,6]}]", NULL, NOT_UINT);
	hashids_case("\"hash_ids\":[1,[5,6]]", NULL, NOT_UINT);
	hashids_case("\"x\":{\"hash_ids\":[5,6]}", NULL, "missing 'hash_ids'");
	/* a valid top-level array beside nested ones, before or after them */
	hashids_case("\"hash_ids\":[1,2],\"x\":[{\"hash_ids\":[5,6,7]}]", "1,2", NULL);
	hashids_case("\"x\":{\"hash_ids\":[5,6,7]},\"y\":{\"hash_ids\":[8]},\"hash_ids\":[1,2]", "1,2", NULL);
	hashids_case("\"x\":{\"hash_ids\":0},\"hash_ids\":[1,2]", "1,2", NULL);
	/* deeper than the scanner follows (512): jansson parses the record alone, same answer */
	GString *deep = g_string_new("\"x\":");
	for (int i = 0; i < 600; i++)
		g_string_append(deep, i % 2 ? "{\"a\":" : "[");
	g_string_append(deep, "{\"hash_ids\":[5,6]}");
	for (int i = 599; i >= 0; i--)
		g_string_append(deep, i % 2 ? "}" : "]");
	GString *g = g_string_new(deep->str);
	g_string_append(g, ",\"hash_ids\":[3,4]");
	hashids_case(g->str, "3,4", NULL);
	g_string_assign(g, deep->str);
	g_string_append(g, ",\"hash_ids\":0");
	hashids_case(g->str, NULL, NOT_ARRAY);
	g_string_free(g, TRUE);
	g_string_free(deep, TRUE);
	/* not JSON: an unbalanced bracket or an unclosed string after a good array, a number right
	 * after one (array 1 + "0" must not become index 10, y's last array) */
	hashids_case("\"hash_ids\":[1,2]]", NULL, "invalid JSON");
	hashids_case("\"x\":{\"hash_ids\":[9]},\"hash_ids\":[1,2]0,\"y\":[{\"hash_ids\":[]},{\"hash_ids\":[]},"
		     "{\"hash_ids\":[]},{\"hash_ids\":[]},{\"hash_ids\":[]},{\"hash_ids\":[]},{\"hash_ids\":[]},"
		     "{\"hash_ids\":[]},{\"hash_ids\":[5,6]}]", NULL, "invalid JSON");
	hashids_case("\"hash_ids\":[1,2]true", NULL, "invalid JSON");
	hashids_case("\"hash_ids\":[1,2],\"s\":\"abc", NULL, "invalid JSON");
}

/* "hash_ids" inside strings, after escaped quotes and backslashes: a string is never a key. */
static void test_hashids_strings(void **state)
{
	(void)state;
	hashids_case("\"note\":\"\\\"hash_ids\\\": [5, 6]\",\"hash_ids\":0", NULL, NOT_ARRAY);
	hashids_case("\"x\\\"hash_ids\":[5,6],\"hash_ids\":0", NULL, NOT_ARRAY); /* key x"hash_ids */
	hashids_case("\"s\":\"a\\\\\",\"hash_ids\":[1,2]", "1,2", NULL);          /* "a\\" ends there */
	hashids_case("\"s\":\"a\\\\\\\",\\\"hash_ids\\\":[9]\",\"hash_ids\":[1]", "1", NULL);
	hashids_case("\"s\":\"\\\\\\\\\",\"hash_ids\":[7]", "7", NULL);
	hashids_case("\"s\":\"{\\\"hash_ids\\\":[5,6]}\",\"hash_ids\":0", NULL, NOT_ARRAY);
	hashids_case("\"x\":[\"hash_ids\",[5,6]],\"hash_ids\":0", NULL, NOT_ARRAY);  /* a value, not a key */
	hashids_case("\"x\":{\"a\":\"hash_ids\",\"b\":[5,6]},\"hash_ids\":[1]", "1", NULL);
	hashids_case("\"hash_ids \":[5,6],\"hash_ids\":[1]", "1", NULL);
	hashids_case("\"hash_ids\":[1],\"x\":\"[\",\"y\":\"{\"", "1", NULL); /* brackets in strings */
}

/* A key spelled with escapes is the key it decodes to, as jansson reads it. */
static void test_hashids_escaped_key(void **state)
{
	(void)state;
	hashids_case("\"\\u0068ash_ids\":[5,6]", "5,6", NULL);
	hashids_case("\"hash\\u005fids\":[7]", "7", NULL);
	hashids_case("\"hash_ids\":0,\"x\":{\"\\u0068ash_ids\":[5,6]}", NULL, NOT_ARRAY);
	hashids_case("\"\\u0068ash_ids\":0,\"x\":{\"hash_ids\":[5,6]}", NULL, NOT_ARRAY);
	hashids_case("\"hash_ids\":[1],\"\\u0068ash_ids\":[2,3]", "2,3", NULL);
	hashids_case("\"hash_ids\":[1],\"\\u0068ash_ids\":0", NULL, NOT_ARRAY);
	hashids_case("\"\\u0068ash_ids\":[1],\"hash_ids\":[2,3]", "2,3", NULL);
	hashids_case("\"hash_ids\\u0020\":[5,6],\"hash_ids\":[1]", "1", NULL);
}

/* Duplicate top-level keys: the last one wins, as in jansson. */
static void test_hashids_duplicate_keys(void **state)
{
	(void)state;
	hashids_case("\"hash_ids\":[1],\"hash_ids\":[2,3]", "2,3", NULL);
	hashids_case("\"hash_ids\":[1],\"hash_ids\":7", NULL, NOT_ARRAY);
	hashids_case("\"hash_ids\":7,\"hash_ids\":[1]", "1", NULL);
	hashids_case("\"hash_ids\":[1,2],\"hash_ids\":[-1]", NULL, NOT_UINT);
	hashids_case("\"hash_ids\":[-1],\"hash_ids\":[1,2]", "1,2", NULL);
	hashids_case("\"hash_ids\":[],\"x\":{\"hash_ids\":[5]},\"hash_ids\":[]", "", NULL);
}

/* Whitespace anywhere JSON allows it, and numbers as jansson reads them. */
static void test_hashids_whitespace_numbers(void **state)
{
	(void)state;
	hashids_case("{ \"timestamp\" : 0 , \"input_length\" : 1024 , \"output_length\" : 1 , \"hash_ids\" :\t[ 1 ,\t2\r]\t}",
		     "1,2", NULL);
	hashids_case("{\"timestamp\":0,\"input_length\":0,\"output_length\":1,\"hash_ids\"\r:\r[\r]\r}", "", NULL);
	hashids_case("{\t\"hash_ids\" : 0 , \"x\" : { \"hash_ids\" : [ 5 , 6 ] } , \"timestamp\":0,\"input_length\":1024,\"output_length\":1}",
		     NULL, NOT_ARRAY);
	hashids_case("\"hash_ids\":[0]", "0", NULL);
	hashids_case("\"hash_ids\":[-0]", "0", NULL);
	hashids_case("\"hash_ids\":[9223372036854775807]", "9223372036854775807", NULL);
	hashids_case("\"hash_ids\":[9223372036854775808]", NULL, "invalid JSON");
	hashids_case("\"hash_ids\":[18446744073709551616]", NULL, "invalid JSON");
	hashids_case("\"hash_ids\":[01]", NULL, "invalid JSON");
	hashids_case("\"hash_ids\":[0,00]", NULL, "invalid JSON");
	hashids_case("\"hash_ids\":[1.0]", NULL, NOT_UINT);
	hashids_case("\"hash_ids\":[1e2]", NULL, NOT_UINT);
	hashids_case("\"hash_ids\":[1,]", NULL, "invalid JSON");
	hashids_case("\"hash_ids\":[1 2]", NULL, "invalid JSON");
	hashids_case("\"hash_ids\":[true]", NULL, NOT_UINT);
	/* a NUL right after the array: jansson stops there, and would read "0\0}" as 0 and '}' */
	char path[300];
	snprintf(path, sizeof(path), "%s/nul.jsonl", dir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	static const char rec[] = "{\"timestamp\":0,\"input_length\":1,\"output_length\":1,\"hash_ids\":[1]}\n"
	                          "{\"timestamp\":0,\"input_length\":1,\"output_length\":1,\"hash_ids\":[1,2]\0}\n";
	fwrite(rec, 1, sizeof(rec) - 1, f);
	fclose(f);
	expect_err(path, "nul.jsonl:2: a NUL byte at column 67: binary or corrupt data");
}

/* WEKA requests: the hash_ids of the request object itself, not of anything inside it. */
static void test_hashids_weka(void **state)
{
	(void)state;
	put("wn/c.json", "{\"block_size\": 64, \"requests\": [{\"t\": 0, \"in\": 64, \"out\": 1, \"hash_ids\": [3],"
			 " \"meta\": {\"hash_ids\": [8, 9]}}, {\"t\": 1, \"in\": 128, \"out\": 1,"
			 " \"meta\": {\"hash_ids\": [5, 6]}, \"hash_ids\": 0}]}");
	char path[128];
	snprintf(path, sizeof(path), "%s/wn", dir);
	expect_err(path, "c.json: requests[1]: " NOT_ARRAY);
	uint64_t n, sk;
	assert_string_equal(read_err(path, true, &n, &sk), "");
	assert_int_equal(n, 1);
	assert_int_equal(sk, 1);
	put("wn/c.json", "{\"block_size\": 64, \"requests\": [{\"t\": 0, \"in\": 64, \"out\": 1, \"x\\\"hash_ids\": [5, 6],"
			 " \"hash_ids\": 0}]}");
	expect_err(path, "c.json: requests[0]: " NOT_ARRAY);
	put("wn/c.json", "{\"block_size\": 64, \"requests\": [{\"t\": 0, \"in\": 64, \"out\": 1, \"\\u0068ash_ids\": [5, 6]}]}");
	struct trace *t = open_ok(path, TF_WEKA);
	struct kv_request rq;
	assert_int_equal(trace_next_kv(t, &rq), 1);
	assert_int_equal(rq.nblocks, 2);
	assert_int_equal(rq.blocks[1] & ((1ULL << 40) - 1), 6);
	assert_int_equal(trace_next_kv(t, &rq), 0);
	trace_close(t);
}

/* Everything a KV trace gives, record by record, in one array (to compare two reads). */
static void fingerprint_add(GArray *fp, const struct kv_request *rq)
{
	uint64_t t;
	memcpy(&t, &rq->t, sizeof(t));
	uint64_t h[] = {t, rq->session, rq->parent, rq->block_tokens, rq->input_tokens, rq->output_tokens, rq->nblocks};
	g_array_append_vals(fp, h, G_N_ELEMENTS(h));
	g_array_append_vals(fp, rq->blocks, rq->nblocks);
}

/* A whole trace read alone; NULL when it cannot be opened or fails. */
static GArray *fingerprint(const char *path, uint64_t *records)
{
	struct trace_opts o;
	char err[5000];
	trace_opts_default(&o);
	struct trace *t = trace_open(path, &o, err, sizeof(err));
	if (!t)
		return NULL;
	GArray *fp = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	struct kv_request rq;
	int r;
	*records = 0;
	while ((r = trace_next_kv(t, &rq)) == 1) {
		fingerprint_add(fp, &rq);
		(*records)++;
	}
	trace_close(t);
	if (r) {
		g_array_free(fp, TRUE);
		return NULL;
	}
	return fp;
}

static void assert_same(GArray *a, GArray *b, const char *what)
{
	if (a->len != b->len || memcmp(a->data, b->data, a->len * sizeof(uint64_t)))
		fail_msg("%s: read side by side, it differs from the same trace read alone", what);
}

/* Small traces of every KV format, and a Mooncake one big enough to grow the side table. */
static void kv_traces(const char *paths[5])
{
	GString *g = g_string_new("");
	for (int i = 0; i < 3000; i++) {
		int nids = 1 + (i * 7919) % 700;
		g_string_append_printf(g, "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": 1, \"x\": {\"hash_ids\": [%d]}, \"hash_ids\": [", i, 512 * nids, i);
		for (int k = 0; k < nids; k++)
			g_string_append_printf(g, "%s%d", k ? ", " : "", i * 3 + k);
		g_string_append(g, "]}\n");
	}
	static char p[5][256];
	snprintf(p[0], sizeof(p[0]), "%s", put("big.jsonl", g->str));
	g_string_free(g, TRUE);
	snprintf(p[1], sizeof(p[1]), "%s", put("m.jsonl",
		"{\"timestamp\": 0, \"input_length\": 1025, \"output_length\": 5, \"hash_ids\": [0, 1, 2]}\n"
		"{\"timestamp\": 10, \"input_length\": 0, \"output_length\": 1, \"hash_ids\": []}\n"
		"{\"timestamp\": 20, \"input_length\": 1024, \"output_length\": 2, \"hash_ids\": [9, 8]}\n"));
	snprintf(p[2], sizeof(p[2]), "%s", put("b.jsonl",
		"{\"chat_id\": 10, \"parent_chat_id\": -1, \"timestamp\": 0.5, \"input_length\": 40, \"output_length\": 3, \"hash_ids\": [1, 2, 3]}\n"
		"{\"chat_id\": 11, \"parent_chat_id\": -1, \"timestamp\": 0.5, \"input_length\": 16, \"output_length\": 3, \"hash_ids\": [9]}\n"
		"{\"chat_id\": 12, \"parent_chat_id\": 10, \"timestamp\": 2.0, \"input_length\": 60, \"output_length\": 3, \"hash_ids\": [1, 2, 3, 4]}\n"));
	snprintf(p[3], sizeof(p[3]), "%s", put("ai.jsonl",
		"{\"session_id\": \"a\", \"timestamp\": 0, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
		"{\"session_id\": \"a\", \"delay\": 5000, \"input_length\": 1100, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}\n"
		"{\"session_id\": \"b\", \"timestamp\": 1000, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [7]}\n"));
	put("w/c1.json", "{\"block_size\": 64, \"requests\": [{\"t\": 0, \"in\": 130, \"out\": 5, \"hash_ids\": [1, 2]},"
			 "{\"t\": 10, \"type\": \"subagent\", \"requests\": [{\"t\": 0, \"in\": 64, \"out\": 1, \"hash_ids\": [7]}]},"
			 "{\"t\": 20, \"in\": 200, \"out\": 5, \"hash_ids\": [1, 2, 3]}]}\n");
	put("w/c2.json", "{\"block_size\": 64, \"requests\": [{\"t\": 0, \"in\": 64, \"out\": 1, \"hash_ids\": [1]}]}");
	snprintf(p[4], sizeof(p[4]), "%s/w", dir);
	for (int i = 0; i < 5; i++)
		paths[i] = p[i];
}

/*
 * Every reader keeps its state to itself: five traces (each KV format, and the real ones when
 * they are here) open at once and read a record of each in turn give what each gives alone,
 * and a record's blocks stay valid while the other traces are read.
 */
static void test_two_traces_interleaved(void **state)
{
	(void)state;
	const char *paths[7];
	char real[2][512];
	int np = 5;
	kv_traces(paths);
	const char *root = getenv("FG_SHARED_TRACES");
	snprintf(real[0], sizeof(real[0]), "%s/mooncake/conversation_trace.jsonl", root ? root : "../shared/traces");
	snprintf(real[1], sizeof(real[1]), "%s/weka-claude-code", root ? root : "../shared/traces");
	for (int i = 0; i < 2; i++)
		if (!access(real[i], R_OK))
			paths[np++] = real[i];
	struct trace *t[7];
	GArray *alone[7], *side[7];
	uint64_t n_alone[7], n_side[7];
	struct kv_request rq[7];
	bool live[7];
	for (int i = 0; i < np; i++) {
		alone[i] = fingerprint(paths[i], &n_alone[i]);
		if (!alone[i])
			fail_msg("%s: does not read cleanly alone", paths[i]);
		struct trace_opts o;
		char err[5000];
		trace_opts_default(&o);
		t[i] = trace_open(paths[i], &o, err, sizeof(err));
		if (!t[i])
			fail_msg("trace_open(%s): %s", paths[i], err);
		side[i] = g_array_new(FALSE, FALSE, sizeof(uint64_t));
		n_side[i] = 0;
		live[i] = true;
	}
	for (int left = np; left;) {
		for (int i = 0; i < np; i++) {
			if (!live[i])
				continue;
			int r = trace_next_kv(t[i], &rq[i]);
			if (r < 0)
				fail_msg("%s: %s", paths[i], trace_error(t[i]));
			if (!r) {
				live[i] = false;
				left--;
				continue;
			}
			n_side[i]++;
			fingerprint_add(side[i], &rq[i]);
		}
		/* the last record of each, after all the others moved on: still what it was */
		for (int i = 0; i < np; i++)
			if (live[i] && rq[i].nblocks)
				assert_memory_equal(rq[i].blocks,
						    &g_array_index(side[i], uint64_t, side[i]->len - rq[i].nblocks),
						    rq[i].nblocks * sizeof(uint64_t));
	}
	for (int i = 0; i < np; i++) {
		assert_int_equal(n_side[i], n_alone[i]);
		assert_true(n_alone[i] > 0);
		assert_same(side[i], alone[i], paths[i]);
		trace_close(t[i]);
		g_array_free(alone[i], TRUE);
		g_array_free(side[i], TRUE);
	}
}

struct reader_job {
	const char *path;
	GArray *want;
	int passes, bad;
};

static gpointer reader_thread(gpointer p)
{
	struct reader_job *j = p;
	for (int k = 0; k < j->passes; k++) {
		uint64_t n;
		GArray *fp = fingerprint(j->path, &n);
		if (!fp || fp->len != j->want->len || memcmp(fp->data, j->want->data, fp->len * sizeof(uint64_t)))
			j->bad++;
		if (fp)
			g_array_free(fp, TRUE);
	}
	return NULL;
}

/* The same in threads: readers of different traces running at once share nothing. */
static void test_two_traces_threads(void **state)
{
	(void)state;
	const char *paths[5];
	kv_traces(paths);
	struct reader_job job[5];
	GThread *th[5];
	for (int i = 0; i < 5; i++) {
		uint64_t n;
		job[i] = (struct reader_job){.path = paths[i], .want = fingerprint(paths[i], &n), .passes = i ? 200 : 10};
		assert_non_null(job[i].want);
	}
	for (int i = 0; i < 5; i++)
		th[i] = g_thread_new("reader", reader_thread, &job[i]);
	for (int i = 0; i < 5; i++) {
		g_thread_join(th[i]);
		if (job[i].bad)
			fail_msg("%s: %d of %d passes in a thread differ from the trace read alone", paths[i],
				 job[i].bad, job[i].passes);
		g_array_free(job[i].want, TRUE);
	}
}

static void test_zstd_and_detection(void **state)
{
	(void)state;
	const char *p = put("z.csv", "0,W,0,4096\n1,W,8,4096\n2,W,16,4096\n");
	char cmd[1024], zp[300];
	snprintf(zp, sizeof(zp), "%s.zst", p);
	snprintf(cmd, sizeof(cmd), "zstd -q -f '%s' -o '%s' 2>/dev/null", p, zp);
	if (system(cmd)) {
		skip();
		return;
	}
	uint64_t n;
	assert_string_equal(read_err(zp, false, &n, NULL), "");
	assert_int_equal(n, 3);
	/* a truncated and a corrupted stream are errors, not short traces */
	snprintf(cmd, sizeof(cmd), "head -c 20 '%s' > '%s.cut'", zp, zp);
	assert_int_equal(system(cmd), 0);
	char cut[600];
	snprintf(cut, sizeof(cut), "%s.cut", zp);
	expect_err(cut, "zstd");
	expect_err(put("junk.bin", "\x28\xb5\x2f\xfd garbage garbage garbage"), "zstd");
	expect_err(put("what.txt", "hello\n"), "unknown trace format");
	char err[5000];
	struct trace_opts o;
	trace_opts_default(&o);
	assert_null(trace_open("/nonexistent/trace.csv", &o, err, sizeof(err)));
	assert_non_null(strstr(err, "No such file"));
}

/* A regress file of Mooncake records whose only question is their hash_ids: line by line, the
 * reader must give jansson's answer (jansson_ids()), the ids or an error at FILE:LINE. */
static void regress_hashids(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	GArray *want = g_array_new(FALSE, FALSE, sizeof(uint64_t)), *ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	char line[8192], first_bad[300] = "";
	uint64_t lineno = 0, nbad = 0, ngood = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (jansson_ids(line, ids)) {
			g_array_append_vals(want, ids->data, ids->len);
			ngood++;
		} else if (!nbad++) {
			snprintf(first_bad, sizeof(first_bad), "%s:%llu: ", path, (unsigned long long)lineno);
		}
	}
	fclose(f);
	struct trace_opts o;
	char err[5000];
	trace_opts_default(&o);
	o.force = TF_MOONCAKE;
	for (int skip = 0; skip < 2; skip++) {
		o.skip_bad = skip;
		struct trace *t = trace_open(path, &o, err, sizeof(err));
		if (!t)
			fail_msg("trace_open(%s): %s", path, err);
		struct kv_request rq;
		int r;
		uint64_t n = 0;
		g_array_set_size(ids, 0);
		while ((r = trace_next_kv(t, &rq)) == 1) {
			g_array_append_vals(ids, rq.blocks, rq.nblocks);
			n++;
		}
		if (!skip && nbad && (r != -1 || strncmp(trace_error(t), first_bad, strlen(first_bad))))
			fail_msg("%s: expected an error at '%s', got '%s'", path, first_bad, r ? trace_error(t) : "");
		if ((skip || !nbad) && (r || n != ngood || trace_skipped(t) != nbad || ids->len != want->len ||
					memcmp(ids->data, want->data, ids->len * sizeof(uint64_t))))
			fail_msg("%s: the reader disagrees with jansson (%llu records, %llu skipped; jansson: %llu, %llu)",
				 path, (unsigned long long)n, (unsigned long long)trace_skipped(t),
				 (unsigned long long)ngood, (unsigned long long)nbad);
		trace_close(t);
	}
	g_array_free(want, TRUE);
	g_array_free(ids, TRUE);
}

/* Inputs that once crashed a reader under the fuzzer (tests/fuzz/regress/FORMAT-what.ext), read
 * to the end without a crash; mooncake-hashids-* files must also agree with jansson, record by
 * record (regress_hashids()). */
static void test_fuzz_regressions(void **state)
{
	(void)state;
	const char *rdir = getenv("FG_FUZZ_REGRESS");
	char cmd[600];
	if (!rdir)
		rdir = "tests/fuzz/regress";
	snprintf(cmd, sizeof(cmd), "ls '%s' 2>/dev/null", rdir);
	FILE *p = popen(cmd, "r");
	char name[256];
	int n = 0;
	while (p && fgets(name, sizeof(name), p)) {
		name[strcspn(name, "\n")] = 0;
		char path[1024], fmt[32];
		snprintf(path, sizeof(path), "%s/%s", rdir, name);
		snprintf(fmt, sizeof(fmt), "%.*s", (int)strcspn(name, "-"), name);
		struct trace_opts o;
		char err[5000];
		trace_opts_default(&o);
		o.force = !strcmp(fmt, "aiperf") ? TF_AIPERF : !strcmp(fmt, "mooncake") ? TF_MOONCAKE
			: !strcmp(fmt, "bailian") ? TF_BAILIAN : !strcmp(fmt, "biosnoop") ? TF_BIOSNOOP
			: !strcmp(fmt, "blk") ? TF_BLK_CSV : !strcmp(fmt, "weka") ? TF_WEKA : TF_UNKNOWN;
		if (o.force == TF_WEKA) { /* a WEKA trace is a directory of conversations */
			char d[128], c[1200];
			snprintf(d, sizeof(d), "%s/weka-%d", dir, n);
			mkdir(d, 0700);
			snprintf(c, sizeof(c), "cp '%s' '%s/c.json'", path, d);
			assert_int_equal(system(c), 0);
			snprintf(path, sizeof(path), "%s", d);
		}
		for (int skip = 0; skip < 2; skip++) {
			o.skip_bad = skip;
			struct trace *t = trace_open(path, &o, err, sizeof(err));
			if (!t)
				continue;
			if (trace_is_block(t)) {
				struct blk_io io;
				while (trace_next_blk(t, &io) == 1)
					;
			} else {
				struct kv_request rq;
				while (trace_next_kv(t, &rq) == 1)
					;
			}
			trace_close(t);
		}
		if (!strncmp(name, "mooncake-hashids-", 17))
			regress_hashids(path);
		n++;
	}
	if (p)
		pclose(p);
	assert_true(n >= 1);
}

/* kv_trace_load() gives what a streaming read gives, request by request (ids may be shared). */
static void same_in_memory(const char *path)
{
	struct trace_opts o;
	struct kv_trace kt;
	char err[5000];
	trace_opts_default(&o);
	if (kv_trace_load(path, &o, &kt, err, sizeof(err)))
		fail_msg("kv_trace_load(%s): %s", path, err);
	struct trace *t = trace_open(path, &o, err, sizeof(err));
	assert_non_null(t);
	struct kv_request rq;
	uint64_t n = 0, ids = 0;
	while (trace_next_kv(t, &rq) == 1) {
		assert_true(n < kt.n);
		const struct kv_request *m = &kt.rq[n++];
		assert_true(m->t == rq.t);
		assert_int_equal(m->session, rq.session);
		assert_int_equal(m->parent, rq.parent);
		assert_int_equal(m->block_tokens, rq.block_tokens);
		assert_int_equal(m->input_tokens, rq.input_tokens);
		assert_int_equal(m->output_tokens, rq.output_tokens);
		assert_int_equal(m->nblocks, rq.nblocks);
		assert_memory_equal(m->blocks, rq.blocks, rq.nblocks * sizeof(uint64_t));
		ids += rq.nblocks;
	}
	assert_int_equal(n, kt.n);
	assert_int_equal(ids, kt.nids);
	assert_true(kt.stored <= kt.nids);
	trace_close(t);
	kv_trace_free(&kt);
}

/* A session that grows, repeats a shorter prefix, diverges and grows again, with another session
 * in between. Stored: [1 2 3] once for s1's first three requests, [1 9 10] for its last two, [7]
 * for s2: 7 of 13 ids. Requests without a session share nothing. */
static void test_kv_in_memory(void **state)
{
	(void)state;
	const char *p = put("mem.jsonl",
			    "{\"session_id\": \"s1\", \"timestamp\": 0, \"input_length\": 32, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
			    "{\"session_id\": \"s1\", \"timestamp\": 1, \"input_length\": 48, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}\n"
			    "{\"session_id\": \"s2\", \"timestamp\": 2, \"input_length\": 16, \"output_length\": 1, \"hash_ids\": [7]}\n"
			    "{\"session_id\": \"s1\", \"timestamp\": 3, \"input_length\": 32, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
			    "{\"session_id\": \"s1\", \"timestamp\": 4, \"input_length\": 32, \"output_length\": 1, \"hash_ids\": [1, 9]}\n"
			    "{\"session_id\": \"s1\", \"timestamp\": 5, \"input_length\": 48, \"output_length\": 1, \"hash_ids\": [1, 9, 10]}\n");
	same_in_memory(p);
	struct trace_opts o;
	struct kv_trace kt;
	char err[5000];
	trace_opts_default(&o);
	o.block_tokens = 16;
	assert_int_equal(kv_trace_load(p, &o, &kt, err, sizeof(err)), 0);
	assert_int_equal(kt.n, 6);
	assert_int_equal(kt.nids, 13);
	assert_int_equal(kt.stored, 7);
	assert_ptr_equal(kt.rq[0].blocks, kt.rq[1].blocks); /* one buffer for s1's first three */
	assert_ptr_equal(kt.rq[0].blocks, kt.rq[3].blocks);
	assert_ptr_not_equal(kt.rq[4].blocks, kt.rq[0].blocks);
	kv_trace_free(&kt);
	p = put("mem2.jsonl", "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [5, 6]}\n"
			      "{\"timestamp\": 1, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [5, 6]}\n");
	same_in_memory(p);
	o.block_tokens = 0; /* Mooncake's own 512 */
	assert_int_equal(kv_trace_load(p, &o, &kt, err, sizeof(err)), 0);
	assert_int_equal(kt.stored, 4); /* no session: no sharing */
	kv_trace_free(&kt);
}

/* The real traces, when ../shared is beside the project. */
static void count_real(const char *rel, enum trace_format f, uint64_t want_req, uint64_t want_sess)
{
	char path[512];
	const char *root = getenv("FG_SHARED_TRACES");
	snprintf(path, sizeof(path), "%s/%s", root ? root : "../shared/traces", rel);
	if (access(path, R_OK)) {
		printf("SKIP: %s is not here (../shared/traces absent; scripts/fetch-traces downloads "
		       "the public traces, docs/traces.md)\n",
		       path);
		skip();
		return;
	}
	struct trace *t = open_ok(path, f);
	struct kv_request rq;
	uint64_t n = 0, smax = 0;
	int r;
	while ((r = trace_next_kv(t, &rq)) == 1) {
		n++;
		if (rq.session != KV_NO_SESSION && rq.session + 1 > smax)
			smax = rq.session + 1;
	}
	assert_int_equal(r, 0);
	assert_int_equal(n, want_req);
	assert_int_equal(smax, want_sess);
	trace_close(t);
	same_in_memory(path);
}

static void test_real_mooncake_conversation(void **state)
{
	(void)state;
	count_real("mooncake/conversation_trace.jsonl", TF_MOONCAKE, 12031, 0);
}

static void test_real_mooncake_synthetic(void **state)
{
	(void)state;
	count_real("mooncake/synthetic_trace.jsonl", TF_MOONCAKE, 3993, 0);
}

static void test_real_weka(void **state)
{
	(void)state;
	count_real("weka-claude-code", TF_WEKA, 8853, 143);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_blk_csv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_biosnoop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ftrace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mooncake, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bailian, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aiperf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_weka, setup, teardown),
		cmocka_unit_test_setup_teardown(test_weka_compaction, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hashids_nested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hashids_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hashids_escaped_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hashids_duplicate_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hashids_whitespace_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hashids_weka, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_traces_interleaved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_traces_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zstd_and_detection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuzz_regressions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kv_in_memory, setup, teardown),
		cmocka_unit_test(test_real_mooncake_conversation),
		cmocka_unit_test(test_real_mooncake_synthetic),
		cmocka_unit_test(test_real_weka),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
