/*
 * test_synth.c - the synthetic KV-trace generator (trace/synth.c), every kind.
 *
 * Each trace is generated into memory, every line is parsed with jansson and checked: key order
 * and types, len(hash_ids) == ceil(input_length / block_tokens), non-decreasing timestamps,
 * per-session prefix reuse (a request starts with the previous request's full-block ids), and
 * the prefix tree as a whole (an id always sits at the same position after the same id). Then
 * the kind-specific promises: aiperf sessions have 100 turns and share no id; multiturn
 * sessions share exactly the system prompt's full blocks; agentic sub-agents start with their
 * parent's system blocks. Also: seeds, --duration as a pure cut, bad options.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "synth.h"

struct line {
	char sid[64];
	uint64_t ts, input, output, bt;
	uint64_t *ids;
	size_t n;
};

struct trace {
	char *text;
	struct line *l;
	size_t n;
};

static char *gen_text(const struct synth_opts *o)
{
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	int rc = synth_generate(o, f, err, sizeof(err));
	if (rc)
		fail_msg("synth_generate: %d: %s", rc, err);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static uint64_t get_uint(json_t *v, const char *what, size_t lineno)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		fail_msg("line %zu: %s is not a non-negative integer", lineno, what);
	return (uint64_t)json_integer_value(v);
}

/* Parse and check the format of every line. */
static void parse(struct trace *t)
{
	static const char *const keys[] = {"timestamp",     "session_id", "input_length",
					   "output_length", "hash_ids",   "block_tokens"};
	size_t cap = 0;
	char *save = NULL;
	char *copy = strdup(t->text);
	t->l = NULL;
	t->n = 0;
	assert_true(strlen(t->text) > 0 && t->text[strlen(t->text) - 1] == '\n');
	for (char *s = strtok_r(copy, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
		json_error_t e;
		json_t *o = json_loads(s, 0, &e);
		if (!o)
			fail_msg("line %zu: %s: %s", t->n + 1, e.text, s);
		assert_true(json_is_object(o));
		assert_int_equal(json_object_size(o), 6);
		size_t k = 0;
		const char *key;
		json_t *v;
		json_object_foreach(o, key, v)
		{
			if (strcmp(key, keys[k]))
				fail_msg("line %zu: key %zu is '%s', want '%s'", t->n + 1, k, key,
					 keys[k]);
			k++;
		}
		if (t->n == cap) {
			cap = cap ? 2 * cap : 256;
			t->l = realloc(t->l, cap * sizeof(*t->l));
			assert_non_null(t->l);
		}
		struct line *l = &t->l[t->n++];
		json_t *sid = json_object_get(o, "session_id");
		json_t *ids = json_object_get(o, "hash_ids");
		assert_true(json_is_string(sid));
		assert_true(strlen(json_string_value(sid)) < sizeof(l->sid));
		strcpy(l->sid, json_string_value(sid));
		l->ts = get_uint(json_object_get(o, "timestamp"), "timestamp", t->n);
		l->input = get_uint(json_object_get(o, "input_length"), "input_length", t->n);
		l->output = get_uint(json_object_get(o, "output_length"), "output_length", t->n);
		l->bt = get_uint(json_object_get(o, "block_tokens"), "block_tokens", t->n);
		assert_true(json_is_array(ids));
		l->n = json_array_size(ids);
		l->ids = malloc((l->n + 1) * sizeof(uint64_t));
		assert_non_null(l->ids);
		for (size_t i = 0; i < l->n; i++) {
			l->ids[i] = get_uint(json_array_get(ids, i), "hash id", t->n);
			assert_true(l->ids[i] < (1ull << 53));
		}
		assert_true(l->input >= 1 && l->output >= 1 && l->bt >= 1);
		if (l->n != (l->input + l->bt - 1) / l->bt)
			fail_msg("line %zu: %zu hash ids for %llu tokens in blocks of %llu", t->n,
				 l->n, (unsigned long long)l->input, (unsigned long long)l->bt);
		json_decref(o);
	}
	free(copy);
	assert_true(t->n > 0);
}

static void gen(struct trace *t, const struct synth_opts *o)
{
	t->text = gen_text(o);
	parse(t);
}

static void trace_free(struct trace *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->l[i].ids);
	free(t->l);
	free(t->text);
}

/* index of the previous line of the same session, or -1 */
static long prev_of(const struct trace *t, size_t i)
{
	for (long j = (long)i - 1; j >= 0; j--)
		if (!strcmp(t->l[j].sid, t->l[i].sid))
			return j;
	return -1;
}

/* ---- a tiny open-addressing map: id -> (position, predecessor id) ---- */
struct slot {
	uint64_t id, pos, pred;
	bool used;
};

static void check_tree(const struct trace *t)
{
	size_t total = 0, cap = 64;
	for (size_t i = 0; i < t->n; i++)
		total += t->l[i].n;
	while (cap < 2 * total)
		cap *= 2;
	struct slot *m = calloc(cap, sizeof(*m));
	assert_non_null(m);
	for (size_t i = 0; i < t->n; i++)
		for (size_t b = 0; b < t->l[i].n; b++) {
			uint64_t id = t->l[i].ids[b], pred = b ? t->l[i].ids[b - 1] : UINT64_MAX;
			size_t h = (size_t)((id * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
			while (m[h].used && m[h].id != id)
				h = (h + 1) & (cap - 1);
			if (!m[h].used) {
				m[h] = (struct slot){id, b, pred, true};
			} else if (m[h].pos != b || m[h].pred != pred) {
				fail_msg("line %zu: id %llu at block %zu after %llu, earlier at "
					 "block %llu after %llu",
					 i + 1, (unsigned long long)id, b, (unsigned long long)pred,
					 (unsigned long long)m[h].pos,
					 (unsigned long long)m[h].pred);
			}
		}
	free(m);
}

/* The checks every kind must pass. */
static void check_common(const struct trace *t, const struct synth_opts *o)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct line *l = &t->l[i];
		assert_int_equal(l->bt, o->block_tokens);
		if (i && l->ts < t->l[i - 1].ts)
			fail_msg("line %zu: timestamp %llu before %llu", i + 1,
				 (unsigned long long)l->ts, (unsigned long long)t->l[i - 1].ts);
		long j = prev_of(t, i);
		if (j < 0)
			continue;
		const struct line *p = &t->l[j];
		/* the context grows by the previous output plus something new */
		if (l->input <= p->input + p->output - 1)
			fail_msg("line %zu: input %llu does not extend %llu + output %llu", i + 1,
				 (unsigned long long)l->input, (unsigned long long)p->input,
				 (unsigned long long)p->output);
		size_t full = p->input / p->bt;
		assert_true(l->n >= p->n);
		for (size_t b = 0; b < full; b++)
			if (l->ids[b] != p->ids[b])
				fail_msg("line %zu (%s): block %zu is %llu, previous turn had %llu",
					 i + 1, l->sid, b, (unsigned long long)l->ids[b],
					 (unsigned long long)p->ids[b]);
		if (full < p->n && l->ids[full] == p->ids[full])
			fail_msg("line %zu: a partial block kept its id after growing", i + 1);
	}
	check_tree(t);
}

static size_t count_sessions(const struct trace *t, bool subs)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		if (prev_of(t, i) < 0 && (subs || !strchr(t->l[i].sid, '/')))
			n++;
	return n;
}

static void opts_small(struct synth_opts *o, enum synth_kind k)
{
	synth_opts_default(o, k);
	o->seed = 12345;
	o->sessions = k == SYNTH_AIPERF ? 5 : k == SYNTH_AGENTIC ? 4 : 40;
	if (k == SYNTH_AGENTIC) {
		o->turns_min = 5;
		o->turns_max = 20;
		o->subagent_p = 0.3;
	}
}

/* ---- tests ---- */

static void test_determinism(void **state)
{
	for (int k = SYNTH_MULTITURN; k <= SYNTH_AIPERF; k++) {
		struct synth_opts o;
		opts_small(&o, (enum synth_kind)k);
		char *a = gen_text(&o), *b = gen_text(&o);
		assert_string_equal(a, b);
		o.seed++;
		char *c = gen_text(&o);
		assert_true(strcmp(a, c) != 0);
		free(a);
		free(b);
		free(c);
	}
}

static void test_kinds_common(void **state)
{
	for (int k = SYNTH_MULTITURN; k <= SYNTH_AIPERF; k++) {
		struct synth_opts o;
		struct trace t;
		opts_small(&o, (enum synth_kind)k);
		gen(&t, &o);
		check_common(&t, &o);
		assert_int_equal(count_sessions(&t, false), o.sessions);
		trace_free(&t);
		/* all defaults: still well-formed (block size 64 for agentic) */
		synth_opts_default(&o, (enum synth_kind)k);
		o.sessions = 10;
		gen(&t, &o);
		check_common(&t, &o);
		assert_int_equal(t.l[0].bt, k == SYNTH_AGENTIC ? 64 : 512);
		trace_free(&t);
	}
}

struct idsess {
	uint64_t id;
	const char *sid;
};

static int idsess_cmp(const void *a, const void *b)
{
	const struct idsess *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void test_aiperf(void **state)
{
	struct synth_opts o;
	struct trace t;
	opts_small(&o, SYNTH_AIPERF);
	assert_int_equal(o.system, 0);
	gen(&t, &o);
	check_common(&t, &o);
	assert_int_equal(t.n, 5 * 100);
	size_t npairs = 0;
	for (size_t i = 0; i < t.n; i++) {
		size_t turns = 0;
		for (size_t j = 0; j < t.n; j++)
			turns += !strcmp(t.l[i].sid, t.l[j].sid);
		assert_int_equal(turns, 100);
		npairs += t.l[i].n;
	}
	/* no id appears in two sessions: sort (id, session) pairs, compare neighbours */
	struct idsess *p = malloc(npairs * sizeof(*p)), *q = p;
	assert_non_null(p);
	for (size_t i = 0; i < t.n; i++)
		for (size_t b = 0; b < t.l[i].n; b++)
			*q++ = (struct idsess){t.l[i].ids[b], t.l[i].sid};
	qsort(p, npairs, sizeof(*p), idsess_cmp);
	for (size_t i = 1; i < npairs; i++)
		if (p[i].id == p[i - 1].id && strcmp(p[i].sid, p[i - 1].sid))
			fail_msg("id %llu shared by %s and %s", (unsigned long long)p[i].id,
				 p[i].sid, p[i - 1].sid);
	free(p);
	trace_free(&t);
}

/* Sessions share exactly floor(system / block_tokens) leading blocks. */
static void check_system_blocks(const struct trace *t, uint64_t nsys)
{
	for (size_t i = 0; i < t->n; i++) {
		assert_true(t->l[i].n > nsys);
		for (size_t b = 0; b < nsys; b++)
			assert_int_equal(t->l[i].ids[b], t->l[0].ids[b]);
		if (strcmp(t->l[i].sid, t->l[0].sid))
			assert_true(t->l[i].ids[nsys] != t->l[0].ids[nsys]);
	}
}

static void test_multiturn_system(void **state)
{
	struct synth_opts o;
	struct trace t;
	opts_small(&o, SYNTH_MULTITURN);
	assert_int_equal(o.system, 1000);
	gen(&t, &o);
	check_common(&t, &o);
	check_system_blocks(&t, 1000 / 512);
	trace_free(&t);

	o.system = 4096; /* a whole number of blocks */
	o.block_tokens = 256;
	gen(&t, &o);
	check_common(&t, &o);
	check_system_blocks(&t, 16);
	trace_free(&t);

	o.system = 0; /* then nothing is shared */
	gen(&t, &o);
	check_common(&t, &o);
	for (size_t i = 1; i < t.n; i++)
		if (strcmp(t.l[i].sid, t.l[0].sid))
			assert_true(t.l[i].ids[0] != t.l[0].ids[0]);
	trace_free(&t);
}

static void test_agentic_subagents(void **state)
{
	struct synth_opts o;
	struct trace t;
	opts_small(&o, SYNTH_AGENTIC);
	gen(&t, &o);
	check_common(&t, &o);
	uint64_t nsys = o.system / o.block_tokens;
	assert_true(nsys > 0);
	check_system_blocks(&t, nsys);
	size_t subs = count_sessions(&t, true) - count_sessions(&t, false);
	assert_true(subs > 0);
	for (size_t i = 0; i < t.n; i++) {
		const char *slash = strchr(t.l[i].sid, '/');
		if (!slash || prev_of(&t, i) >= 0)
			continue;
		/* "<parent>/sub<k>": the parent exists and made a request before the sub-agent */
		assert_true(!strncmp(slash, "/sub", 4) && slash[4] >= '0' && slash[4] <= '9');
		size_t plen = (size_t)(slash - t.l[i].sid), j;
		for (j = 0; j < i; j++)
			if (strlen(t.l[j].sid) == plen && !strncmp(t.l[j].sid, t.l[i].sid, plen))
				break;
		assert_true(j < i);
	}
	trace_free(&t);

	o.subagent_p = 0;
	gen(&t, &o);
	assert_int_equal(count_sessions(&t, true), o.sessions);
	trace_free(&t);
}

/* --duration cuts the uncapped trace and changes nothing else */
static void test_duration(void **state)
{
	for (int k = SYNTH_MULTITURN; k <= SYNTH_AIPERF; k++) {
		struct synth_opts o;
		opts_small(&o, (enum synth_kind)k);
		char *full = gen_text(&o);
		o.duration = k == SYNTH_AIPERF ? 600.5 : 60.25;
		char *cut = gen_text(&o), *want = malloc(strlen(full) + 1), *w = want;
		assert_non_null(want);
		for (char *s = full; *s;) {
			char *nl = strchr(s, '\n');
			uint64_t ts = strtoull(s + strlen("{\"timestamp\": "), NULL, 10);
			if (ts <= o.duration * 1000) {
				memcpy(w, s, (size_t)(nl + 1 - s));
				w += nl + 1 - s;
			}
			s = nl + 1;
		}
		*w = 0;
		assert_true(strlen(cut) > 0 && strlen(cut) < strlen(full));
		assert_string_equal(cut, want);
		free(full);
		free(cut);
		free(want);
	}
}

/* think 0: a session's requests share a timestamp and must stay in turn order */
static void test_ties(void **state)
{
	struct synth_opts o;
	struct trace t;
	opts_small(&o, SYNTH_MULTITURN);
	o.think = 0;
	o.rate = 1000;
	gen(&t, &o);
	check_common(&t, &o);
	trace_free(&t);
}

static void test_bad_opts(void **state)
{
	struct synth_opts o;
	char err[256];
	FILE *f = fopen("/dev/null", "w");
	assert_non_null(f);
#define BAD(want, stmt)                                                                            \
	do {                                                                                       \
		synth_opts_default(&o, SYNTH_MULTITURN);                                           \
		stmt;                                                                              \
		err[0] = 0;                                                                        \
		assert_int_equal(synth_generate(&o, f, err, sizeof(err)), SYNTH_E_OPTS);           \
		if (!strstr(err, want))                                                            \
			fail_msg("error '%s' lacks '%s'", err, want);                              \
	} while (0)
	BAD("--turns 0:3: ", (o.turns_min = 0, o.turns_max = 3));
	BAD("--turns 5:3: ", (o.turns_min = 5, o.turns_max = 3));
	BAD("--sessions 0: ", o.sessions = 0);
	BAD("--rate 0: ", o.rate = 0);
	BAD("--think -1: ", o.think = -1);
	BAD("--prompt 0: ", o.prompt = 0);
	BAD("--output 0: ", o.output = 0);
	BAD("--block-tokens 0: ", o.block_tokens = 0);
	BAD("--subagent-p 1.5: ", (o.kind = SYNTH_AGENTIC, o.subagent_p = 1.5));
	BAD("--system 1000: ", o.kind = SYNTH_AIPERF);
	BAD("--duration -5: ", o.duration = -5);
	fclose(f);
	synth_opts_default(&o, SYNTH_AIPERF);
	assert_int_equal(synth_validate(&o, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_kinds_common),
		cmocka_unit_test(test_aiperf),
		cmocka_unit_test(test_multiturn_system),
		cmocka_unit_test(test_agentic_subagents),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_bad_opts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
