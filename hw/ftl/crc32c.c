/*
 * crc32c.c - CRC-32C (Castagnoli) for snapshot checksums.
 *
 * Snapshots of a 4 TiB-user device are about 9 GB, so the checksum must run at memory speed:
 * the SSE4.2 crc32 instruction does 8 bytes per instruction; other CPUs use a byte table.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ftl_int.h"

static uint32_t table[256];

static void table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		table[i] = c;
	}
}

static uint32_t crc_sw(uint32_t crc, const uint8_t *p, size_t n)
{
	if (!table[1])
		table_init();
	while (n--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
	uint64_t c = crc;
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		n -= 8;
	}
	crc = (uint32_t)c;
	while (n--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}
#endif

uint32_t ftl_crc32c(uint32_t crc, const void *buf, size_t n)
{
	crc = ~crc;
#if defined(__x86_64__)
	if (__builtin_cpu_supports("sse4.2"))
		return ~crc_hw(crc, buf, n);
#endif
	return ~crc_sw(crc, buf, n);
}
