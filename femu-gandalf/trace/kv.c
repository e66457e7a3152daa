/*
 * kv.c - KV-request trace readers: Mooncake, Bailian and AIPerf JSONL, and WEKA directories.
 *
 * All of them produce struct kv_request in time order.
 *   mooncake  one object per line; timestamp in ms; 512-token blocks; no sessions. Streamed.
 *   bailian   chat_id / parent_chat_id (-1 = root) / turn; timestamp in s; 16-token blocks; a
 *             session is the root chat of a chain of turns. Streamed; the chat -> session map
 *             holds one entry per chat seen.
 *   aiperf    Mooncake fields plus session_id; a turn may give "delay" (ms after the previous
 *             turn of its session) instead of a timestamp; 512-token blocks unless the record
 *             says "block_tokens" (our extension) or --block-tokens is given; a session_id
 *             "A/B" is a child of session "A" (session paths, traces/FORMATS.md). Loaded and
 *             sorted, since delays make the order depend on every session.
 *   weka      a directory of per-conversation JSON files; hash ids are local to a file, so each
 *             file gets its own namespace (file index << 40); sub-agents (nested at any depth)
 *             become sessions of their own with the file's session as parent; session start
 *             offsets are Poisson arrivals at --session-rate (seeded) or a fixed --stagger.
 *             Loaded and sorted (ties keep file order).
 * Ties in timestamps keep file order. A record that goes back in time in a streamed format is
 * an error (or skipped with --skip-bad). A reader keeps all its state in its struct trace (none
 * is static), so several traces can be open and read at once.
 */
#include <dirent.h>
#include <errno.h>
#include <glib.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace_int.h"
#include "vec.h"

#define NS_SHIFT 40

struct kv_item {
	double t;
	uint64_t seq, session, parent, boff;
	uint32_t nblocks, in, out, block_tokens;
};

struct kv_buffered {
	struct kv_item *it;
	size_t n, next;
	uint64_t cap;
	uint64_t *blk;
	size_t nblk;
	uint64_t blkcap;
	/* WEKA: a request whose ids extend the previous request of its session, when those sit at
	 * the end of blk, stores only the new ids after them (share: how many it reuses). A
	 * conversation's requests mostly extend each other: 18.5 M ids, 1.5 M stored. */
	uint64_t session;
	size_t share;
};

struct sess {
	uint64_t id, parent;
	double last_t;
};

/*
 * hash_ids arrays are most of the bytes of every KV trace, and a DOM parser spends most of its
 * time allocating one node per integer. So before jansson sees a record, each
 * "hash_ids": [ints] is parsed here into a side table and, in a compacted copy of the text,
 * replaced by the table index (plus the newlines the array spanned, so jansson's line numbers
 * stay right); the record then parses in a fraction of the time. The original text is not
 * modified: on a parse error the caller parses it again for jansson's exact position.
 *
 * An index is an integer like any other, so the scanner must see the document exactly as jansson
 * will, or a value of the record's own would be read as a table index (a scalar "hash_ids": 0
 * beside a nested {"hash_ids": [5, 6]} once read as the nested array). It therefore tokenizes:
 * a string is skipped whole (its quote is escaped when an odd run of backslashes precedes it),
 * and only a string in key position of an object (after '{' or ',') is a key, at any depth.
 * Where it cannot be sure of agreeing with jansson it compacts nothing and jansson parses the
 * original text: a key written with escapes (jansson decodes "\u0068ash_ids" to hash_ids),
 * a "hash_ids" member whose value is not an array, nesting deeper than SCAN_DEPTH, text that is
 * not JSON. So in a compacted document every "hash_ids" member is an index written here or an
 * array left for jansson (an element that is not a non-negative int64 as jansson would read it:
 * negative, fractional, too big, a leading zero), and get_blocks() takes an integer for an index
 * only then. Duplicate keys resolve as jansson resolves them, the last one winning, on both paths.
 *
 * The table belongs to its reader (struct trace), so traces can be read side by side; it holds
 * the ids of the record at hand only.
 */
#define SCAN_DEPTH 512 /* jansson's own limit is 2048; real traces nest about 10 deep */

struct idtab {
	uint64_t *pool; /* every value <= INT64_MAX, as jansson would have read it */
	size_t npool;
	uint64_t cap;
	struct {
		size_t off, n;
	} *ent;
	size_t nent;
	uint64_t entcap;
	char *txt; /* the compacted copy */
	uint64_t txtcap;
};

/* The scans stop at the NUL that ends the text (see hashids_extract()), not at a bound. */
static inline const char *skip_ws(const char *q)
{
	while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
		q++;
	return q;
}

static inline bool is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

/* The closing quote of the string opening at s, or NULL. No escape sequence ends in a backslash,
 * so the backslashes right before a quote pair up from the first: an odd run escapes it. */
static const char *string_end(const char *s, const char *end)
{
	const char *q = s + 1;
	while ((q = memchr(q, '"', (size_t)(end - q)))) {
		const char *b = q;
		while (b[-1] == '\\') /* stops at s at the latest */
			b--;
		if (!((q - b) & 1))
			return q;
		q++;
	}
	return NULL;
}

/* Whether the container at depth d (0 = the outermost) is an object (hashids_extract()'s bits). */
static inline bool in_object(const uint64_t *bits, int d)
{
	return bits[d / 64] >> d % 64 & 1;
}

static inline void set_in_object(uint64_t *bits, int d, bool obj)
{
	if (obj)
		bits[d / 64] |= 1ull << d % 64;
	else
		bits[d / 64] &= ~(1ull << d % 64);
}

static int idtab_push(struct idtab *ids, uint64_t v)
{
	if (vec_reserve(ids->pool, ids->cap, ids->npool + 1))
		return -1;
	ids->pool[ids->npool++] = v;
	return 0;
}

/* The array opening at a, when all its elements are integers jansson reads as non-negative int64
 * (in the pool from npool on): returns its ']'. Else NULL, the pool unchanged. Most of a trace's
 * bytes pass through this loop. */
static const char *parse_ids(struct idtab *ids, const char *a)
{
	const char *q = skip_ws(a + 1);
	size_t start = ids->npool;
	if (*q == ']')
		return q;
	for (;;) {
		const char *d = q;
		uint64_t v = 0;
		while (is_digit(*q))
			v = v * 10 + (uint64_t)(*q++ - '0'); /* past 19 digits it wraps, and is refused */
		size_t nd = (size_t)(q - d);
		/* jansson rejects a leading zero and a value past INT64_MAX, and reads 1.0 or 1e3 as a
		 * real: none of them is ours to accept (nor a sign, or anything but a number) */
		if (!nd || nd > 19 || v > (uint64_t)INT64_MAX || (*d == '0' && nd > 1) ||
		    *q == '.' || *q == 'e' || *q == 'E')
			break;
		if (idtab_push(ids, v))
			break; /* out of memory: jansson can still parse it */
		q = skip_ws(q);
		if (*q == ',') {
			q = skip_ws(q + 1);
			continue;
		}
		if (*q == ']')
			return q;
		break;
	}
	ids->npool = start;
	return NULL;
}

/*
 * Copy the text from r up to the array at a into the compacted copy at *w (NULL: none yet),
 * then the array's table index and the newlines a..z spanned; the ids parsed from npool start
 * on become entry nent. end is the end of the whole text (the copy gets room for the rest).
 * false when out of memory.
 */
static bool splice_index(struct idtab *ids, char **w, const char *r, const char *a, const char *z,
                         const char *end, size_t start)
{
	/* room for the text so far, the index (an empty "[]" can be shorter than it) and the rest
	 */
	size_t used = *w ? (size_t)(*w - ids->txt) : 0, need = used + (size_t)(end - r) + 24;
	char *p;

	if (vec_reserve(ids->txt, ids->txtcap, need) ||
	    vec_reserve(ids->ent, ids->entcap, ids->nent + 1))
		return false;
	p = ids->txt + used;
	memcpy(p, r, (size_t)(a - r));
	p += a - r;
	p += sprintf(p, "%zu", ids->nent);
	for (const char *c = a; c <= z; c++)
		if (*c == '\n')
			*p++ = '\n';
	ids->ent[ids->nent].off = start;
	ids->ent[ids->nent].n = ids->npool - start;
	ids->nent++;
	*w = p;
	return true;
}

/* Returns the text to parse (the compacted copy, or s itself when nothing was extracted or the
 * scanner gave up) and its length in *outlen. s[len] must be a NUL, as it is in the callers' texts
 * (a lineio line, a g_file_get_contents() buffer): the scans stop at it. */
static const char *hashids_extract(struct idtab *ids, const char *s, size_t len, size_t *outlen)
{
	const char *q = s, *end = s + len, *r = s; /* r: first byte not yet copied */
	char *w = NULL;
	uint64_t inobj[SCAN_DEPTH / 64]; /* bit d: the container at depth d is an object */
	int depth = 0;
	bool want_key = false; /* the next string is a key: just after '{' or an object's ',' */
	ids->npool = ids->nent = 0;
	*outlen = len;
	while (q < end) {
		switch (*q) {
		case '{':
		case '[':
			if (depth == SCAN_DEPTH)
				goto whole;
			set_in_object(inobj, depth++, *q == '{');
			want_key = *q++ == '{';
			continue;
		case '}':
		case ']':
			if (!depth || in_object(inobj, depth - 1) != (*q == '}'))
				goto whole; /* unbalanced: not JSON, jansson will say where */
			depth--;
			want_key = false;
			q++;
			continue;
		case ',':
			want_key = depth && in_object(inobj, depth - 1);
			q++;
			continue;
		case '"':
			break;
		default:
			q++; /* numbers, literals, ':' and whitespace: nothing to track */
			continue;
		}
		const char *e = string_end(q, end);
		if (!e)
			goto whole;
		if (!want_key) {
			q = e + 1;
			continue;
		}
		want_key = false;
		size_t klen = (size_t)(e - q - 1);
		if (memchr(q + 1, '\\', klen))
			goto whole; /* the key jansson sees is the decoded one: let it decode */
		bool ours = klen == 8 && !memcmp(q + 1, "hash_ids", 8);
		q = skip_ws(e + 1);
		if (*q != ':')
			goto whole;
		q = skip_ws(q + 1);
		if (!ours)
			continue;
		if (*q != '[')
			goto whole; /* get_blocks() must see this value as jansson does, not as an index */
		size_t start = ids->npool;
		const char *a = q, *z = parse_ids(ids, a);
		if (!z)
			continue; /* left for jansson; the scan goes on inside it */
		if (z + 1 < end && !memchr(" \t\r\n,}]", z[1], 7))
			goto whole; /* not JSON, but "[1]0" as index 1 would read as the number 10 (and
				     * jansson reads a NUL after a number as nothing at all) */
		if (!splice_index(ids, &w, r, a, z, end, start))
			goto whole;
		r = q = z + 1;
	}
	if (!w)
		return s;
	memcpy(w, r, (size_t)(end - r));
	w += end - r;
	*outlen = (size_t)(w - ids->txt);
	return ids->txt;
whole:
	ids->npool = ids->nent = 0; /* no side table: jansson parses the original */
	return s;
}

void kv_free(struct trace *t)
{
	if (t->ids) {
		free(t->ids->pool);
		free(t->ids->ent);
		free(t->ids->txt);
		free(t->ids);
	}
	if (t->buf) {
		free(t->buf->it);
		free(t->buf->blk);
		free(t->buf);
	}
	if (t->sessions)
		g_hash_table_destroy(t->sessions);
	free(t->blocks);
}

static uint64_t *reserve_blocks(struct trace *t, size_t n);

static int grow_blocks(struct trace *t, size_t n)
{
	return vec_reserve(t->blocks, t->blocks_cap, n);
}

/* Read a non-negative integer member; 1 ok, 0 missing, -1 wrong type. */
static int get_uint(json_t *o, const char *k, uint64_t *v)
{
	json_t *x = json_object_get(o, k);
	if (!x)
		return 0;
	if (!json_is_integer(x) || json_integer_value(x) < 0)
		return -1;
	*v = (uint64_t)json_integer_value(x);
	return 1;
}

static int get_num(json_t *o, const char *k, double *v)
{
	json_t *x = json_object_get(o, k);
	if (!x)
		return 0;
	/* times up to ~30,000 years in ms: anything larger is a corrupt record, not a trace */
	if (!json_is_number(x) || !isfinite(json_number_value(x)) || json_number_value(x) < 0 ||
	    json_number_value(x) > 1e15)
		return -1;
	*v = json_number_value(x);
	return 1;
}

/* The hash_ids array into t->blocks (with namespace ns). Returns a reason or NULL. */
static const char *get_blocks(struct trace *t, json_t *o, uint64_t ns, uint32_t *n)
{
	json_t *a = json_object_get(o, "hash_ids");
	const struct idtab *ids = t->ids;
	if (t->buf)
		t->buf->share = 0;
	if (!a)
		return "missing 'hash_ids'";
	if (json_is_integer(a) && (uint64_t)json_integer_value(a) < ids->nent) {
		/* pre-parsed by hashids_extract(): in a compacted document, every integer here is ours */
		size_t e = (size_t)json_integer_value(a), len = ids->ent[e].n;
		const uint64_t *v = len ? ids->pool + ids->ent[e].off : NULL;
		struct kv_buffered *b = t->buf;
		size_t sh = 0;
		if (b && t->fmt == TF_WEKA && b->n && len <= UINT32_MAX) {
			const struct kv_item *p = &b->it[b->n - 1];
			if (p->session == b->session && p->boff + p->nblocks == b->nblk && p->nblocks <= len) {
				const uint64_t *old = b->blk + p->boff;
				while (sh < p->nblocks && old[sh] == (ns | v[sh]) && !(ns && v[sh] >> NS_SHIFT))
					sh++;
				if (sh < p->nblocks)
					sh = 0;
			}
		}
		if (b)
			b->share = sh;
		uint64_t *dst = len > UINT32_MAX ? NULL : reserve_blocks(t, len - sh);
		if (!dst)
			return "'hash_ids' too long";
		dst -= sh; /* dst[sh..len) are the new ids; dst[0..sh) are the shared ones, already there */
		for (size_t i = sh; i < len; i++) {
			if (ns && v[i] >> NS_SHIFT)
				return "hash id >= 2^40 cannot be namespaced per file";
			dst[i] = ns | v[i];
		}
		*n = (uint32_t)len;
		return NULL;
	}
	if (!json_is_array(a))
		return "'hash_ids' is not an array";
	size_t len = json_array_size(a);
	uint64_t *dst = len > UINT32_MAX ? NULL : reserve_blocks(t, len);
	if (!dst)
		return "'hash_ids' too long";
	for (size_t i = 0; i < len; i++) {
		json_t *x = json_array_get(a, i);
		if (!json_is_integer(x) || json_integer_value(x) < 0)
			return "'hash_ids' holds a value that is not a non-negative integer";
		uint64_t v = (uint64_t)json_integer_value(x);
		if (ns && v >> NS_SHIFT)
			return "hash id >= 2^40 cannot be namespaced per file";
		dst[i] = ns | v;
	}
	*n = (uint32_t)len;
	return NULL;
}

/* ---- buffered (sorted) requests ---- */

/*
 * Where get_blocks() puts ids: straight at the end of the buffered pool when the format is
 * loaded and sorted (no second copy of what can be hundreds of MB), else in t->blocks. Room for
 * one id at least, so that even an empty array gets a pointer, never NULL (+ 0).
 */
static uint64_t *reserve_blocks(struct trace *t, size_t n)
{
	struct kv_buffered *b = t->buf;
	if (!n)
		n = 1;
	if (!b || t->fmt != TF_WEKA)
		return grow_blocks(t, n) ? NULL : t->blocks;
	if (vec_reserve(b->blk, b->blkcap, b->nblk + n))
		return NULL;
	return b->blk + b->nblk;
}

static int buf_add(struct trace *t, const struct kv_item *it, const uint64_t *blocks)
{
	struct kv_buffered *b = t->buf;
	if (vec_reserve(b->it, b->cap, b->n + 1))
		return -1;
	size_t sh = b->share;
	b->share = 0;
	if (vec_reserve(b->blk, b->blkcap, b->nblk + it->nblocks - sh))
		return -1;
	b->it[b->n] = *it;
	b->it[b->n].seq = b->n;
	b->it[b->n].boff = b->nblk - sh;
	if (it->nblocks && (!b->blk || blocks != b->blk + b->nblk - sh))
		memcpy(b->blk + b->nblk, blocks, it->nblocks * sizeof(uint64_t));
	b->nblk += it->nblocks - sh;
	b->n++;
	return 0;
}

static int cmp_item(const void *a, const void *b)
{
	const struct kv_item *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- WEKA ---- */

struct weka_ctx {
	struct trace *t;
	const char *file;
	uint64_t ns;
	uint32_t block_tokens;
};

static int weka_requests(struct weka_ctx *c, json_t *reqs, double base, uint64_t session, uint64_t parent,
			 const char *where)
{
	struct trace *t = c->t;
	if (!json_is_array(reqs))
		return trace_bad(t, "%s: %s'requests' is not an array", c->file, where);
	for (size_t i = 0; i < json_array_size(reqs); i++) {
		json_t *r = json_array_get(reqs, i);
		double rt;
		uint64_t in = 0, out = 0;
		json_t *type = json_is_object(r) ? json_object_get(r, "type") : NULL;
		if (!json_is_object(r) || get_num(r, "t", &rt) != 1) {
			if (trace_bad(t, "%s: %srequests[%zu]: missing or invalid 't'", c->file, where, i))
				return -1;
			continue;
		}
		if (json_is_string(type) && !strcmp(json_string_value(type), "subagent")) {
			char w[256];
			uint64_t sub = t->nsessions++;
			snprintf(w, sizeof(w), "%srequests[%zu] (subagent) ", where, i);
			if (weka_requests(c, json_object_get(r, "requests"), base + rt, sub, session, w))
				return -1;
			continue;
		}
		const char *why = NULL;
		uint32_t nb = 0;
		if (get_uint(r, "in", &in) != 1 || in > UINT32_MAX)
			why = "missing or invalid 'in'";
		else if (get_uint(r, "out", &out) != 1 || out > UINT32_MAX)
			why = "missing or invalid 'out'";
		else {
			t->buf->session = session; /* get_blocks() may share ids with its previous request */
			why = get_blocks(t, r, c->ns, &nb);
		}
		if (why) {
			if (trace_bad(t, "%s: %srequests[%zu]: %s", c->file, where, i, why))
				return -1;
			continue;
		}
		struct kv_item it = {.t = base + rt, .session = session, .parent = parent, .nblocks = nb,
				     .in = (uint32_t)in, .out = (uint32_t)out, .block_tokens = c->block_tokens};
		if (buf_add(t, &it, t->buf->blk ? t->buf->blk + t->buf->nblk - t->buf->share : NULL))
			return trace_bad(t, "out of memory"), -1;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json names in directory path, sorted (the order sessions are numbered in). -1 when
 * the directory does not open or memory runs out. */
static int json_names(const char *path, char ***names, size_t *n)
{
	DIR *d = opendir(path);
	struct dirent *e;
	uint64_t cap = 0;

	*names = NULL;
	*n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l <= 5 || strcmp(e->d_name + l - 5, ".json"))
			continue;
		if (vec_reserve(*names, cap, *n + 1))
			break;
		if (!((*names)[*n] = strdup(e->d_name)))
			break;
		(*n)++;
	}
	closedir(d);
	if (e)
		return -1; /* stopped early: out of memory */
	qsort(*names, *n, sizeof(**names), cmp_str);
	return 0;
}

/* One conversation file, parsed (hash_ids through the side table); NULL with je filled. */
static json_t *weka_parse(struct trace *t, const char *path, json_error_t *je)
{
	gchar *text = NULL;
	gsize tlen = 0;
	size_t clen;
	const char *ctext;
	json_t *root;

	if (!g_file_get_contents(path, &text, &tlen, NULL)) {
		snprintf(je->text, sizeof(je->text), "cannot read the file");
		je->line = 0;
		return NULL;
	}
	ctext = hashids_extract(t->ids, text, tlen, &clen);
	root = json_loadb(ctext, clen, 0, je);
	if (!root && ctext != text)
		json_decref(json_loadb(text, tlen, 0, je)); /* the error's position in the file */
	g_free(text);
	return root;
}

/* The start of the next session: Poisson arrivals (exponential gaps, seeded) or a fixed
 * --stagger. */
static double next_start(struct trace *t, double start, uint64_t *rng)
{
	if (t->o.stagger > 0)
		return start + t->o.stagger;
	*rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
	double u = ((*rng >> 11) + 1) * 0x1.0p-53;
	return start - log(u) / t->o.session_rate;
}

/* File number i of the directory: 0, or -1 to stop. A file that is read moves *start (and the
 * arrival generator *rng) on to its session's start; a skipped one leaves them. */
static int weka_file(struct trace *t, const char *path, size_t i, double *start, uint64_t *rng)
{
	json_error_t je;
	json_t *root = weka_parse(t, path, &je);
	struct weka_ctx c = {t, path, (uint64_t)i << NS_SHIFT, 64};
	uint64_t bs = 0;
	struct stat sb;
	int r;

	if (!root)
		return trace_bad(t, "%s:%d: invalid JSON: %s", path, je.line, je.text);
	if (!json_is_object(root) || get_uint(root, "block_size", &bs) < 0 || bs > UINT32_MAX ||
	    !json_object_get(root, "requests")) {
		json_decref(root);
		return trace_bad(t,
		                 "%s: not a WEKA conversation (needs 'requests' and an integer "
		                 "'block_size')",
		                 path);
	}
	if (bs)
		c.block_tokens = (uint32_t)bs;
	if (t->nsessions) /* (the first file read starts at 0, whichever fold it is in) */
		*start = next_start(t, *start, rng);
	uint64_t s = t->nsessions++;
	r = weka_requests(&c, json_object_get(root, "requests"), *start, s, KV_NO_SESSION, "");
	json_decref(root);
	if (!r && !stat(path, &sb))
		t->bytes_loaded += (uint64_t)sb.st_size;
	return r;
}

/* FNV-1a of a file name: which fold a conversation falls in depends on its name only, not on
 * which other conversations the directory holds. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

struct ranked {
	uint64_t h;
	size_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	return x->h != y->h ? (x->h < y->h ? -1 : 1) : (x->i < y->i ? -1 : x->i > y->i);
}

/* Which of the n (sorted) names are in fold (1..folds): dealt out in the order of their hashes,
 * so every fold holds n / folds of them, give or take one. NULL when out of memory. */
static bool *weka_fold(char **names, size_t n, uint32_t fold, uint32_t folds)
{
	struct ranked *r = malloc((n ? n : 1) * sizeof(*r));
	bool *keep = calloc(n ? n : 1, sizeof(*keep));
	if (!r || !keep) {
		free(r);
		free(keep);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){name_hash(names[i]), i};
	qsort(r, n, sizeof(*r), cmp_ranked);
	for (size_t k = 0; k < n; k++)
		keep[r[k].i] = k % folds + 1 == fold;
	free(r);
	return keep;
}

static int weka_load(struct trace *t)
{
	bool *keep = NULL;
	char **names;
	size_t n;
	int rc = -1;
	uint64_t rng = t->o.seed * 0x9e3779b97f4a7c15ull + 1;
	double start = 0;

	if (json_names(t->path, &names, &n)) {
		snprintf(t->err, sizeof(t->err), "%s: %s", t->path,
		         names || errno == ENOMEM ? "out of memory" : "cannot open directory");
		goto out;
	}
	if (t->o.folds && !(keep = weka_fold(names, n, t->o.fold, t->o.folds))) {
		snprintf(t->err, sizeof(t->err), "%s: out of memory", t->path);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX + 256];

		if (keep && !keep[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", t->path, names[i]);
		if (i >> (64 - NS_SHIFT)) {
			snprintf(t->err, sizeof(t->err), "%s: more than 2^24 files", t->path);
			goto out;
		}
		if (weka_file(t, path, i, &start, &rng))
			goto out;
	}
	if (!n) {
		snprintf(t->err, sizeof(t->err), "%s: no *.json files", t->path);
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(keep);
	return rc;
}

/* ---- JSONL ---- */

/*
 * JSONL records. One function per format reads the members that format defines; what the
 * three share (lengths, hash_ids, an optional timestamp) is read once, by jsonl_common().
 * Each returns what jsonl_record() does: 1 = request in rq, 0 = skipped, -1 = error.
 */
struct jsonl_rec {
	json_t *o;
	bool has_ts; /* a valid "timestamp" member, in ts (the format's unit) */
	double ts;
};

/* input_length, output_length, hash_ids and timestamp, which every JSONL format has. */
static int jsonl_common(struct trace *t, struct jsonl_rec *r, struct kv_request *rq)
{
	uint64_t in, out;
	const char *why;
	int has_ts;

	if (!json_is_object(r->o))
		return trace_bad(t, "not a JSON object");
	if (get_uint(r->o, "input_length", &in) != 1 || in > UINT32_MAX)
		return trace_bad(t, "missing or invalid 'input_length'");
	if (get_uint(r->o, "output_length", &out) != 1 || out > UINT32_MAX)
		return trace_bad(t, "missing or invalid 'output_length'");
	why = get_blocks(t, r->o, 0, &rq->nblocks);
	if (why)
		return trace_bad(t, "%s", why);
	rq->input_tokens = (uint32_t)in;
	rq->output_tokens = (uint32_t)out;
	rq->blocks = t->blocks;
	rq->session = rq->parent = KV_NO_SESSION;
	has_ts = get_num(r->o, "timestamp", &r->ts);
	if (has_ts < 0)
		return trace_bad(t, "'timestamp' is not a non-negative number");
	r->has_ts = has_ts;
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Whether ids[0..n) holds an id twice (sorted in a copy; -1 out of memory). */
static int has_repeat(const uint64_t *ids, uint32_t n)
{
	uint64_t *c;
	int rep = 0;

	if (n < 2)
		return 0;
	if (!(c = malloc((size_t)n * sizeof(*c))))
		return -1;
	memcpy(c, ids, (size_t)n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_u64);
	for (uint32_t i = 1; i < n && !rep; i++)
		rep = c[i] == c[i - 1];
	free(c);
	return rep;
}

/*
 * Mooncake: timestamp in ms, 512-token blocks, no sessions. Its documented invariant holds in
 * every record: one hash id per block of the prompt, ceil(input_length / block), none twice (the
 * ids of a request are a path in a prefix tree). A record that breaks it is malformed (an error,
 * or counted and skipped with --skip-bad): an input_length of 1e9 with one id would otherwise be
 * a billion tokens the cache never sees.
 */
static int mooncake_record(struct trace *t, const struct jsonl_rec *r, struct kv_request *rq)
{
	uint64_t want;
	int rep;

	if (!r->has_ts)
		return trace_bad(t, "missing 'timestamp'");
	rq->t = r->ts / 1000.0;
	rq->block_tokens = t->o.block_tokens ? t->o.block_tokens : 512;
	want = ((uint64_t)rq->input_tokens + rq->block_tokens - 1) / rq->block_tokens;
	if (rq->nblocks != want)
		return trace_bad(t, "%u hash_ids for input_length %u: Mooncake has one per %u-token "
		                    "block, ceil(input_length / %u) = %llu",
		                 (unsigned)rq->nblocks, (unsigned)rq->input_tokens, rq->block_tokens,
		                 rq->block_tokens, (unsigned long long)want);
	if ((rep = has_repeat(rq->blocks, rq->nblocks)) < 0)
		return trace_bad(t, "out of memory");
	if (rep)
		return trace_bad(t, "a hash id appears twice in one request's hash_ids (a request's ids "
		                    "are a path in a prefix tree)");
	return 1;
}

/* Bailian: timestamp in s, 16-token blocks; a turn continues its parent chat's session, a root
 * (parent_chat_id -1 or absent) or a turn of an unknown parent starts one. */
static int bailian_record(struct trace *t, const struct jsonl_rec *r, struct kv_request *rq)
{
	json_t *cid = json_object_get(r->o, "chat_id"),
	       *pid = json_object_get(r->o, "parent_chat_id");
	gint64 chat, parent, *key;
	struct sess *p, *s;

	if (!r->has_ts || !json_is_integer(cid) || (pid && !json_is_integer(pid)))
		return trace_bad(t, "needs 'timestamp' and integer 'chat_id' / 'parent_chat_id'");
	rq->t = r->ts;
	rq->block_tokens = t->o.block_tokens ? t->o.block_tokens : 16;
	chat = json_integer_value(cid);
	parent = pid ? json_integer_value(pid) : -1;
	p = parent >= 0 ? g_hash_table_lookup(t->sessions, &parent) : NULL;
	s = g_new(struct sess, 1);
	key = g_new(gint64, 1);
	*key = chat;
	s->id = p ? p->id : t->nsessions++;
	s->parent = KV_NO_SESSION;
	s->last_t = r->ts;
	g_hash_table_replace(t->sessions, key, s);
	rq->session = s->id;
	return 1;
}

#define AIPERF_KEY_MAX 256 /* a session table key: "s:" + the session_id + NUL */

/* The session table's key for an AIPerf session_id (strings and integers never collide; a
 * record without one is a session of its own). -1 when session_id has another type, -2 when
 * it is too long (cut, two ids would become one session). */
static int aiperf_key(struct trace *t, json_t *sid, char *key, size_t len)
{
	int n;

	if (json_is_string(sid))
		n = snprintf(key, len, "s:%s", json_string_value(sid));
	else if (json_is_integer(sid))
		n = snprintf(key, len, "i:%lld", (long long)json_integer_value(sid));
	else if (!sid)
		n = snprintf(key, len, "line:%llu", (unsigned long long)t->lio.line);
	else
		return -1;
	return n >= 0 && (size_t)n < len ? 0 : -2;
}

/* The parent of a new AIPerf session (traces/FORMATS.md, "session paths"): a session_id
 * "A/B" is a child of session "A" when A has been seen; otherwise it has none. */
static uint64_t aiperf_parent(struct trace *t, char *key)
{
	char *slash = strrchr(key, '/');
	struct sess *p;

	if (!slash)
		return KV_NO_SESSION;
	*slash = 0;
	p = g_hash_table_lookup(t->sessions, key);
	*slash = '/';
	return p ? p->id : KV_NO_SESSION;
}

/* AIPerf: Mooncake's members plus session_id; a turn may give "delay" (ms after its session's
 * previous turn) instead of a timestamp, and "block_tokens". */
static int aiperf_record(struct trace *t, const struct jsonl_rec *r, struct kv_request *rq)
{
	json_t *bt = json_object_get(r->o, "block_tokens");
	char key[AIPERF_KEY_MAX];
	double delay = 0;
	struct sess *s;
	int has_delay;

	switch (aiperf_key(t, json_object_get(r->o, "session_id"), key, sizeof(key))) {
	case -1:
		return trace_bad(t, "'session_id' must be a string or an integer");
	case -2:
		return trace_bad(t, "'session_id' longer than %d bytes", AIPERF_KEY_MAX - 3);
	}
	has_delay = get_num(r->o, "delay", &delay);
	if (has_delay < 0 || (bt && (!json_is_integer(bt) || json_integer_value(bt) <= 0 ||
	                             json_integer_value(bt) > 1 << 20)))
		return trace_bad(t, "invalid 'delay' or 'block_tokens'");
	s = g_hash_table_lookup(t->sessions, key);
	if (!s) {
		if (!r->has_ts)
			return trace_bad(t, "the first turn of session '%s' needs a 'timestamp'",
			                 key + 2);
		s = g_new(struct sess, 1);
		s->id = t->nsessions++;
		s->parent = aiperf_parent(t, key);
		g_hash_table_insert(t->sessions, g_strdup(key), s);
	}
	rq->parent = s->parent;
	rq->t = r->has_ts ? r->ts / 1000.0 : s->last_t + delay / 1000.0;
	s->last_t = rq->t;
	rq->session = s->id;
	rq->block_tokens = t->o.block_tokens ? t->o.block_tokens
	                   : bt              ? (uint32_t)json_integer_value(bt)
	                                     : 512;
	return 1;
}

/* Parse one JSONL record with t->fmt's reader. 1 = request in rq (blocks in t->blocks),
 * 0 = skipped, -1 = error. */
static int jsonl_record(struct trace *t, char *line, size_t len, struct kv_request *rq)
{
	json_error_t je;
	size_t clen;
	const char *ctext = hashids_extract(t->ids, line, len, &clen);
	struct jsonl_rec r = {json_loadb(ctext, clen, 0, &je), false, 0};
	int rc;

	if (!r.o) {
		if (ctext != line)
			json_decref(
			        json_loadb(line, len, 0, &je)); /* the error's column in the line */
		return trace_bad(t, "invalid JSON: %s (column %d)", je.text, je.column);
	}
	rc = jsonl_common(t, &r, rq);
	if (rc == 1) {
		switch (t->fmt) {
		case TF_MOONCAKE:
			rc = mooncake_record(t, &r, rq);
			break;
		case TF_BAILIAN:
			rc = bailian_record(t, &r, rq);
			break;
		case TF_AIPERF:
			rc = aiperf_record(t, &r, rq);
			break;
		default:
			break;
		}
	}
	json_decref(r.o);
	return rc;
}

/* Is rq in the fold asked for (trace_opts.fold)? Keyed by its root session (a sub-agent's
 * parent, else its own). */
static bool jsonl_in_fold(const struct trace *t, const struct kv_request *rq)
{
	if (!t->o.folds)
		return true;
	if (rq->session == KV_NO_SESSION)
		return true; /* (kept: a trace without sessions is folded by time, kvmem.c) */
	uint64_t key = rq->parent != KV_NO_SESSION ? rq->parent : rq->session;
	return trace_fold_of(key, t->o.folds) == t->o.fold;
}

/* The next well-formed JSONL record (blank and '#' lines skipped): 1, 0 at the end, -1 on error. */
static int next_jsonl(struct trace *t, struct kv_request *rq)
{
	char *line;
	size_t len;
	int rc;
	while ((rc = trace_next_line(t, &line, &len)) == 1) {
		while (*line == ' ' || *line == '\t')
			line++, len--;
		if (!*line || *line == '#')
			continue;
		int r = jsonl_record(t, line, len, rq);
		if (r == 1 && !jsonl_in_fold(t, rq))
			continue;
		if (r)
			return r;
	}
	return rc;
}

int kv_open(struct trace *t)
{
	t->ids = calloc(1, sizeof(*t->ids));
	if (!t->ids) {
		snprintf(t->err, sizeof(t->err), "out of memory");
		return -1;
	}
	if (t->fmt == TF_BAILIAN)
		t->sessions = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	else
		t->sessions = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	if (t->fmt == TF_WEKA || t->fmt == TF_AIPERF) {
		t->buf = calloc(1, sizeof(*t->buf));
		if (!t->buf) {
			snprintf(t->err, sizeof(t->err), "out of memory");
			return -1;
		}
	}
	if (t->fmt == TF_WEKA) {
		if (weka_load(t))
			return -1;
	} else {
		if (trace_lineio_open(t))
			return -1;
		if (t->fmt == TF_AIPERF) {
			struct kv_request rq;
			int rc;
			while ((rc = next_jsonl(t, &rq)) == 1) {
				struct kv_item it = {.t = rq.t, .session = rq.session, .parent = rq.parent,
						     .nblocks = rq.nblocks, .in = rq.input_tokens,
						     .out = rq.output_tokens, .block_tokens = rq.block_tokens};
				if (buf_add(t, &it, rq.blocks))
					return -1;
			}
			if (rc < 0)
				return -1;
			t->bytes_loaded = t->lio.bytes;
		}
	}
	if (t->buf && t->buf->n)
		qsort(t->buf->it, t->buf->n, sizeof(struct kv_item), cmp_item);
	return 0;
}

int kv_next(struct trace *t, struct kv_request *rq)
{
	if (t->buf) {
		struct kv_buffered *b = t->buf;
		if (b->next == b->n)
			return 0;
		const struct kv_item *it = &b->it[b->next++];
		*rq = (struct kv_request){.t = it->t, .session = it->session, .parent = it->parent,
					  .block_tokens = it->block_tokens, .input_tokens = it->in,
					  .output_tokens = it->out, .nblocks = it->nblocks,
					  .blocks = b->blk ? b->blk + it->boff : NULL};
		return 1;
	}
	int rc;
	while ((rc = next_jsonl(t, rq)) == 1) {
		if (rq->t < t->last_t) {
			if (trace_bad(t, "timestamp %.3f s goes back (previous %.3f s)", rq->t, t->last_t))
				return -1;
			continue;
		}
		t->last_t = rq->t;
		return 1;
	}
	return rc;
}
