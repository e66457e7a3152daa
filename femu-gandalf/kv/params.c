/*
 * params.c - the one reader of the policies' parameter tables (struct kv_param): parameter
 * strings ("name=value,...") parsed and range-checked, the sweep grid, and the help text all come
 * from each policy's list, so a parameter is declared once, in its policy's file.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim.h"
#include "parse.h"

void kv_policy_help(FILE *out)
{
	for (int i = 0; kv_policies[i]; i++) {
		const struct kv_policy *p = kv_policies[i];
		fprintf(out, "  %s%s\n", p->name,
		        p->one_pass ? " (offline: one pass, no --loop)" : "");
		for (const struct kv_param *k = p->params; k && k->name; k++) {
			fprintf(out, "      %s=%g  %s%g..%g", k->name, k->def,
			        k->min_open ? "(" : "[", k->min, k->max);
			fprintf(out, "%s", isinf(k->max) ? ")" : "]");
			for (int j = 0; j < k->nsweep; j++)
				fprintf(out, "%s%g", j ? "," : "  sweep ", k->sweep[j]);
			fprintf(out, "%s%s\n", k->help ? "  " : "", k->help ? k->help : "");
		}
	}
}

const struct kv_param *kv_policy_param(const struct kv_policy *p, const char *name)
{
	for (const struct kv_param *k = p->params; k && k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

static int nparams(const struct kv_policy *p)
{
	int n = 0;
	while (p->params && p->params[n].name)
		n++;
	return n;
}

/* "k1, k2" for an error message */
static void names(const struct kv_policy *p, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (const struct kv_param *k = p->params; k && k->name && n < len; k++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", k->name);
	if (!n)
		snprintf(buf, len, "none");
}

int kv_params_parse(const struct kv_policy *p, const char *params, double *pv, char *err,
                    size_t errlen)
{
	int np = nparams(p);
	if (np > KV_MAX_PARAMS) {
		snprintf(err, errlen, "policy %s declares %d parameters, more than %d", p->name, np,
		         KV_MAX_PARAMS);
		return -1;
	}
	for (int i = 0; i < np; i++)
		pv[i] = p->params[i].def;
	for (const char *s = params ? params : ""; *s;) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		char item[160], key[64], val[64], *end;
		const char *vp;
		snprintf(item, sizeof(item), "%.*s", (int)len, s);
		if (len >= sizeof(item) || fg_keyval_split_copy(item, key, sizeof(key), &vp)) {
			snprintf(err, errlen, "--param '%.*s': expected name=value", (int)len, s);
			return -1;
		}
		if (strlen(vp) >= sizeof(val)) {
			snprintf(err, errlen, "--param %s: value longer than %zu characters", key,
			         sizeof(val) - 1);
			return -1;
		}
		snprintf(val, sizeof(val), "%s", vp);
		double v = strtod(val, &end);
		if (!*val || *end) {
			snprintf(err, errlen, "--param %s=%s: not a number", key, val);
			return -1;
		}
		const struct kv_param *k = kv_policy_param(p, key);
		if (!k) {
			char all[256];
			names(p, all, sizeof(all));
			snprintf(err, errlen,
			         "--param %s: unknown parameter for policy %s (it takes: %s)", key,
			         p->name, all);
			return -1;
		}
		if (!(k->min_open ? v > k->min : v >= k->min) || !(v <= k->max)) {
			snprintf(err, errlen, "--param %s=%s: must be in %s%g..%g%s", key, val,
			         k->min_open ? "(" : "[", k->min, k->max,
			         isinf(k->max) ? ")" : "]");
			return -1;
		}
		if (k->integer && v != floor(v)) {
			snprintf(err, errlen, "--param %s=%s: integer parameters take whole numbers", key,
			         val);
			return -1;
		}
		pv[k - p->params] = v;
		s += len + (e ? 1 : 0);
	}
	return 0;
}

uint64_t kv_sweep_points(const struct kv_policy *p)
{
	uint64_t n = 1;
	for (const struct kv_param *k = p->params; k && k->name; k++)
		if (k->nsweep)
			n *= (uint64_t)k->nsweep;
	return n;
}

void kv_sweep_point(const struct kv_policy *p, uint64_t j, char *buf, size_t len)
{
	int np = nparams(p);
	size_t n = 0;
	uint64_t div = kv_sweep_points(p);
	buf[0] = 0;
	for (int i = 0; i < np && n < len; i++) {
		const struct kv_param *k = &p->params[i];
		if (!k->nsweep)
			continue;
		div /= (uint64_t)k->nsweep;
		n += (size_t)snprintf(buf + n, len - n, "%s%s=%g", n ? "," : "", k->name,
		                      k->sweep[j / div % (uint64_t)k->nsweep]);
	}
}
