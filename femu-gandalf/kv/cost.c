/*
 * cost.c - the KV tier's prices and lifetimes, defined once.
 *
 * Policies price recompute and wear (gandalf, oracle, meritkv) and the kv command reports cost and
 * lifetimes; each used to write the formulas out itself. They live here so that a policy's
 * notion of a dollar and the report's are the same expression, evaluated in the same order (the
 * golden outputs depend on the last bit).
 *   GPU: --gpu-hour dollars per hour; a recomputed token costs that over the prefill rate.
 *   Wear: the drive's price over its rated TBW is the fee per host byte written; a run's wear
 *     cost is the share of the drive's endurance it used (NAND bytes over P/E x physical bytes
 *     with a device, host bytes over the rated TBW without) times the price.
 *   TBW lifetime: rated TBW over host bytes per day of trace time (the papers' estimate).
 */
#include <math.h>

#include "kvsim.h"

void kv_config_default(struct kv_config *c)
{
	c->ssd_gbps = 10;
	c->pcie_gbps = 50;
	c->prefill_tokens_per_s = 60000;
	c->gpu_usd_per_hour = 2.5;
	c->ssd_usd_per_tb = 100;
	c->readmit = KV_REGION_READMIT_DEF;
}

void kv_cost_no_device(struct kv_config *c)
{
	c->tbw_bytes = 1.0 * (double)c->ssd_bytes * 365.0 * 5.0; /* 1 DWPD, 5 years */
	c->ssd_usd = c->ssd_usd_per_tb * (double)c->ssd_bytes / 1e12;
}

double kv_gpu_usd_per_second(const struct kv_config *c)
{
	return c->gpu_usd_per_hour / 3600.0;
}

double kv_gpu_usd_per_token(const struct kv_config *c)
{
	return kv_gpu_usd_per_second(c) / c->prefill_tokens_per_s;
}

double kv_wear_usd_per_byte(const struct kv_config *c)
{
	return c->tbw_bytes > 0 ? c->ssd_usd / c->tbw_bytes : 0;
}

double kv_bytes_per_day(uint64_t bytes, double duration_s)
{
	return duration_s > 0 ? bytes / duration_s * 86400.0 : 0;
}

double kv_tbw_days(const struct kv_config *c, double bytes_per_day)
{
	return bytes_per_day > 0 ? c->tbw_bytes / bytes_per_day : INFINITY;
}

double kv_wear_usd(const struct kv_config *c, bool device, uint64_t host_bytes, uint64_t nand_bytes)
{
	if (device)
		return c->ssd_usd * (double)nand_bytes / (c->ssd_pe * c->ssd_phys_bytes);
	return c->ssd_usd * (double)host_bytes / c->tbw_bytes;
}
