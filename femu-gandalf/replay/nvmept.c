/*
 * nvmept.c - NVMe I/O passthrough through io_uring on an NVMe generic device (nvmept.h).
 *
 * One ring of 128-byte SQEs and 32-byte CQEs (what NVMe passthrough needs: the command is 72
 * bytes, inline in the SQE). Each read or write is one NVMe command: opcode 02h or 01h, the
 * namespace, SLBA in CDW10-11, NLB - 1 in CDW12 bits 15:0; a placed write also carries the
 * directive type 2 (data placement) in CDW12 bits 23:20 and its placement ID in CDW13 bits
 * 31:16 (NVMe 2.0 TP4146). The kernel returns 0, the NVMe status, or -errno in the CQE.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <linux/nvme_ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "err.h"
#include "nvmept.h"

#define NVME_CMD_FLUSH 0x00
#define NVME_CMD_WRITE 0x01
#define NVME_CMD_READ 0x02
#define NVME_CMD_DSM 0x09
#define NVME_DTYPE_PLACEMENT 2u
#define SYNC_TAG UINT64_MAX

struct nvmept {
	struct io_uring ring;
	int fd;
	uint32_t nsid;
	unsigned lbs_shift;
	void *dsm; /* a 4 KiB buffer for a deallocate's range */
};

bool nvmept_is(const char *path, const struct stat *st, char *blk, size_t blen)
{
	const char *base = strrchr(path, '/');
	unsigned c, n;
	char tail;
	base = base ? base + 1 : path;
	if (!S_ISCHR(st->st_mode) || sscanf(base, "ng%un%u%c", &c, &n, &tail) != 2)
		return false;
	snprintf(blk, blen, "/dev/nvme%un%u", c, n);
	return true;
}

/* One decimal number from a sysfs file; 0 when it cannot be read. */
static uint64_t sysfs_u64(const char *blk, const char *rel)
{
	char p[256];
	unsigned long long v = 0;
	const char *base = strrchr(blk, '/');
	snprintf(p, sizeof(p), "/sys/block/%s/%s", base ? base + 1 : blk, rel);
	FILE *f = fopen(p, "r");
	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

struct nvmept *nvmept_open(int fd, const char *path, const char *blk, unsigned depth,
                           unsigned *lbs, uint64_t *size, char *err, size_t errlen)
{
	struct nvmept *q = calloc(1, sizeof(*q));
	if (!q || posix_memalign(&q->dsm, 4096, 4096)) {
		free(q);
		fg_err(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	int id = ioctl(fd, NVME_IOCTL_ID);
	uint64_t ss = sysfs_u64(blk, "queue/logical_block_size"), sectors = sysfs_u64(blk, "size");
	if (id <= 0) {
		fg_err(err, errlen, "%s: not an NVMe namespace (NVME_IOCTL_ID: %s)", path,
		       strerror(id < 0 ? errno : EINVAL));
		goto fail;
	}
	if (ss < 512 || (ss & (ss - 1)) || ss > 65536 || !sectors) {
		fg_err(err, errlen,
		       "%s: cannot read the logical block size and capacity of %s from /sys/block",
		       path, blk);
		goto fail;
	}
	int r = io_uring_queue_init(depth, &q->ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	if (r < 0) {
		fg_err(err, errlen,
		       "%s: io_uring with 128-byte entries (NVMe passthrough, Linux >= 5.19): %s", path,
		       strerror(-r));
		goto fail;
	}
	q->fd = fd;
	q->nsid = (uint32_t)id;
	while ((1ull << q->lbs_shift) < ss)
		q->lbs_shift++;
	*lbs = (unsigned)ss;
	*size = sectors * 512;
	return q;
fail:
	free(q->dsm);
	free(q);
	return NULL;
}

/* An SQE for an NVMe command on the namespace: its command, zeroed, opcode and nsid set. */
static struct nvme_uring_cmd *prep(struct nvmept *q, uint8_t opcode, uint64_t tag)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	if (!sqe)
		return NULL;
	memset(sqe, 0, 2 * sizeof(*sqe)); /* a 128-byte entry */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = q->fd;
	sqe->cmd_op = NVME_URING_CMD_IO;
	sqe->user_data = tag;
	struct nvme_uring_cmd *c = (struct nvme_uring_cmd *)(void *)sqe->cmd;
	c->opcode = opcode;
	c->nsid = q->nsid;
	return c;
}

int nvmept_submit(struct nvmept *q, char op, void *buf, uint64_t off, uint64_t bytes, bool placed,
                  uint16_t pid, uint64_t tag)
{
	uint64_t slba = off >> q->lbs_shift, nlb = bytes >> q->lbs_shift;
	if (!nlb || nlb > 65536 || (slba << q->lbs_shift) != off || (nlb << q->lbs_shift) != bytes)
		return -EINVAL;
	struct nvme_uring_cmd *c = prep(q, op == 'W' ? NVME_CMD_WRITE : NVME_CMD_READ, tag);
	if (!c)
		return -EBUSY;
	c->addr = (uint64_t)(uintptr_t)buf;
	c->data_len = (uint32_t)bytes;
	c->cdw10 = (uint32_t)slba;
	c->cdw11 = (uint32_t)(slba >> 32);
	c->cdw12 = (uint32_t)(nlb - 1);
	if (op == 'W' && placed) {
		c->cdw12 |= NVME_DTYPE_PLACEMENT << 20;
		c->cdw13 = (uint32_t)pid << 16;
	}
	int r;
	do
		r = io_uring_submit(&q->ring);
	while (r == -EINTR);
	return r < 0 ? r : 0;
}

int nvmept_reap(struct nvmept *q, unsigned min, uint64_t rel_ns, struct nvmept_done *out,
                unsigned max)
{
	struct io_uring_cqe *cqe;
	unsigned n = 0;
	if (min) {
		struct __kernel_timespec ts = {.tv_sec = (long long)(rel_ns / 1000000000ull),
		                               .tv_nsec = (long long)(rel_ns % 1000000000ull)};
		int r;
		do
			r = io_uring_wait_cqes(&q->ring, &cqe, min, rel_ns == UINT64_MAX ? NULL : &ts,
			                       NULL);
		while (r == -EINTR);
		if (r < 0 && r != -ETIME)
			return r;
	}
	while (n < max && io_uring_peek_cqe(&q->ring, &cqe) == 0) {
		out[n].tag = cqe->user_data;
		out[n].res = cqe->res;
		io_uring_cqe_seen(&q->ring, cqe);
		n++;
	}
	return (int)n;
}

int nvmept_sync(struct nvmept *q, char op, uint64_t off, uint64_t bytes)
{
	struct nvme_uring_cmd *c = prep(q, op == 'F' ? NVME_CMD_FLUSH : NVME_CMD_DSM, SYNC_TAG);
	if (!c)
		return -EBUSY;
	if (op == 'D') { /* one range, deallocate (attribute AD, CDW11 bit 2) */
		uint64_t slba = off >> q->lbs_shift, nlb = bytes >> q->lbs_shift;
		if (!nlb || nlb > UINT32_MAX || (slba << q->lbs_shift) != off ||
		    (nlb << q->lbs_shift) != bytes)
			return -EINVAL;
		uint32_t *r = q->dsm;
		memset(r, 0, 16);
		r[1] = (uint32_t)nlb;
		r[2] = (uint32_t)slba;
		r[3] = (uint32_t)(slba >> 32);
		c->addr = (uint64_t)(uintptr_t)q->dsm;
		c->data_len = 16;
		c->cdw10 = 0; /* one range */
		c->cdw11 = 1u << 2;
	}
	int r;
	do
		r = io_uring_submit(&q->ring);
	while (r == -EINTR);
	if (r < 0)
		return r;
	struct nvmept_done d;
	do
		r = nvmept_reap(q, 1, UINT64_MAX, &d, 1);
	while (r == 0);
	if (r < 0)
		return r;
	return d.tag == SYNC_TAG ? d.res : -EPROTO;
}

int nvmept_placement_ids(struct nvmept *q, uint16_t *pid, unsigned max)
{
	/* a 16-byte header (the count in bytes 14-15), then 32-byte descriptors, the PID first;
	 * one page (127 descriptors): QEMU 10 fails a longer transfer with status 0x400f */
	enum { LEN = 4096 };
	uint8_t *b = NULL;
	if (posix_memalign((void **)&b, 4096, LEN))
		return -ENOMEM;
	memset(b, 0, LEN);
	struct nvme_passthru_cmd c = {.opcode = 0x12, /* I/O Management Receive */
	                              .nsid = q->nsid,
	                              .addr = (uint64_t)(uintptr_t)b,
	                              .data_len = LEN,
	                              .cdw10 = 1, /* Reclaim Unit Handle Status */
	                              .cdw11 = LEN / 4 - 1};
	int r = ioctl(q->fd, NVME_IOCTL_IO_CMD, &c);
	if (r) { /* an NVMe status: FDP disabled, or the command unknown */
		free(b);
		return r < 0 ? -errno : 0;
	}
	unsigned n = (unsigned)b[14] | (unsigned)b[15] << 8;
	if (n > (LEN - 16) / 32)
		n = (LEN - 16) / 32;
	if (n > max)
		n = max;
	for (unsigned i = 0; i < n; i++)
		pid[i] = (uint16_t)(b[16 + 32 * i] | b[17 + 32 * i] << 8);
	free(b);
	return (int)n;
}

const char *nvmept_strerror(int res, char *buf, size_t len)
{
	if (res < 0)
		snprintf(buf, len, "%s", strerror(-res));
	else
		snprintf(buf, len, "NVMe status %#x (type %#x, code %#x)%s", res, (res >> 8) & 7,
		         res & 0xff,
		         (res & 0x7ff) == 0x20 ? ": namespace is write protected (end of life?)" : "");
	return buf;
}

void nvmept_close(struct nvmept *q)
{
	if (!q)
		return;
	io_uring_queue_exit(&q->ring);
	free(q->dsm);
	free(q);
}
