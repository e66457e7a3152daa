#!/usr/bin/python3
# client.py - NBD client for tests/test_nbdkit.sh (python3-libnbd; run with /usr/bin/python3).
#
#   client.py fill SOCK SHADOW      random writes (2.2x capacity, QD16), trims, zeroes, odd
#                                   requests; verifies the whole device; saves the expected
#                                   content to SHADOW; prints a JSON summary
#   client.py verify SOCK SHADOW [MORE]
#                                   the device must equal SHADOW; with MORE=N, then N x capacity
#                                   of further random writes, verified again and saved
#   client.py zeros SOCK            writes a pattern, reads must return zeroes (data=none)
#   client.py latency SOCK          QD1 4 KiB reads of mapped units, sequential QD16 writes
# Every failure raises, so the exit status is non-zero.
import json
import random
import sys
import time

import nbd

U = 4096


def connect(sock):
    h = nbd.NBD()
    h.connect_unix(sock)
    return h


def verify(h, shadow, what):
    size = len(shadow)
    for off in range(0, size, 1 << 20):
        n = min(1 << 20, size - off)
        got = h.pread(n, off)
        if got != shadow[off:off + n]:
            bad = next(i for i in range(n) if got[i] != shadow[off + i])
            raise SystemExit(f"{what}: mismatch at byte {off + bad}")


def random_writes(h, shadow, rnd, total):
    """Random writes, 90% 4 KiB and 10% 64 KiB, up to 16 in flight, never two in flight on
    the same unit (so the expected content does not depend on completion order)."""
    size = len(shadow)
    units = size // U
    inflight = {}  # cookie -> set of units
    busy = set()
    written = 0
    while written < total or inflight:
        while written < total and len(inflight) < 16:
            n = 16 if rnd.random() < 0.1 else 1
            first = rnd.randrange(units - n + 1)
            us = set(range(first, first + n))
            if us & busy:
                break
            data = rnd.randbytes(n * U)
            shadow[first * U:(first + n) * U] = data
            c = h.aio_pwrite(nbd.Buffer.from_bytearray(bytearray(data)), first * U)
            inflight[c] = us
            busy |= us
            written += n * U
        h.poll(-1)
        for c in list(inflight):
            if h.aio_command_completed(c):
                busy -= inflight.pop(c)
    return written


def cmd_fill(sock, shadow_path):
    h = connect(sock)
    size = h.get_size()
    shadow = bytearray(size)
    rnd = random.Random(42)
    t = time.time()
    written = random_writes(h, shadow, rnd, int(2.2 * size))
    wsec = time.time() - t
    verify(h, shadow, "after random writes")

    # TRIM: aligned 1 MiB, and an unaligned range (only its whole units are trimmed)
    trimmed = 0
    h.trim(1 << 20, 100 * U)
    shadow[100 * U:100 * U + (1 << 20)] = bytes(1 << 20)
    trimmed += 1 << 20
    h.trim(3 * U, 1000 * U + 512)  # whole units 1001, 1002; partial unit 1000 and 1003 keep data
    shadow[1001 * U:1003 * U] = bytes(2 * U)
    trimmed += 3 * U
    assert h.pread(1 << 20, 100 * U) == bytes(1 << 20), "trimmed range does not read as zeroes"

    # write zeroes: may-trim (default) over partial units, and NO_HOLE (written through the FTL)
    h.zero(10240, 2000 * U + 512)
    shadow[2000 * U + 512:2000 * U + 512 + 10240] = bytes(10240)
    h.zero(8 * U, 3000 * U, nbd.CMD_FLAG_NO_HOLE | nbd.CMD_FLAG_FUA)
    shadow[3000 * U:3008 * U] = bytes(8 * U)
    # the first trims its one whole unit (2001) and writes its partial head and tail units
    # (3584 + 2560 bytes); the second (no hole allowed) is written through the FTL
    zero_written = 3584 + 2560 + 8 * U
    trimmed += U

    # FUA write and flush
    d = rnd.randbytes(U)
    h.pwrite(d, 4000 * U, nbd.CMD_FLAG_FUA)
    shadow[4000 * U:4001 * U] = d
    written += U
    h.flush()

    # unaligned requests (nbdkit 1.32 does not enforce the 512-byte minimum; we must cope)
    h.set_strict_mode(0)
    d = rnd.randbytes(100)
    h.pwrite(d, 5000 * U + 7)
    shadow[5000 * U + 7:5000 * U + 107] = d
    written += 512  # widened to one sector for the FTL
    assert h.pread(300, 5000 * U) == bytes(shadow[5000 * U:5000 * U + 300]), "unaligned read"

    # past the end: an error, and the server keeps serving
    for f in (lambda: h.pread(U, size), lambda: h.pwrite(bytes(U), size - 512)):
        try:
            f()
            raise SystemExit("I/O past the end succeeded")
        except nbd.Error:
            pass
    verify(h, shadow, "after trim/zero/fua/unaligned")
    h.shutdown()
    with open(shadow_path, "wb") as f:
        f.write(shadow)
    print(json.dumps({"size": size, "written": written, "zero_written": zero_written,
                      "trimmed": trimmed, "write_seconds": round(wsec, 2)}))


def cmd_verify(sock, shadow_path, more=0.0):
    h = connect(sock)
    shadow = bytearray(open(shadow_path, "rb").read())
    assert h.get_size() == len(shadow), "size changed"
    verify(h, shadow, "after restart")
    written = 0
    if more:
        written = random_writes(h, shadow, random.Random(7), int(more * len(shadow)))
        verify(h, shadow, "after more writes")
        with open(shadow_path, "wb") as f:
            f.write(shadow)
    h.shutdown()
    print(json.dumps({"written": written}))


def cmd_zeros(sock):
    h = connect(sock)
    rnd = random.Random(3)
    for i in range(64):
        off = rnd.randrange(h.get_size() // U) * U
        h.pwrite(rnd.randbytes(U), off)
        assert h.pread(U, off) == bytes(U), "data=none returned data"
    h.shutdown()


def cmd_latency(sock):
    h = connect(sock)
    size = h.get_size()
    rnd = random.Random(5)
    offs = rnd.sample(range(size // U), 300)
    for o in offs:
        h.pwrite(bytes([o & 255]) * U, o * U)
    time.sleep(0.2)  # let the write buffer drain: the reads then find the NAND idle
    ts = []
    for o in offs[:250]:
        t = time.perf_counter_ns()
        h.pread(U, o * U)
        ts.append(time.perf_counter_ns() - t)
    ts.sort()
    # sequential 4 KiB writes at QD16: with latency on, bound by the modelled program rate
    n, t = 2048, time.perf_counter()
    inflight, nxt = [], 0
    buf = nbd.Buffer.from_bytearray(bytearray(U))
    while nxt < n or inflight:
        while nxt < n and len(inflight) < 16:
            inflight.append(h.aio_pwrite(buf, nxt * U))
            nxt += 1
        h.poll(-1)
        inflight = [c for c in inflight if not h.aio_command_completed(c)]
    wsec = time.perf_counter() - t
    h.shutdown()
    print(json.dumps({"read_mean_us": sum(ts) / len(ts) / 1e3, "read_median_us": ts[len(ts) // 2] / 1e3,
                      "read_min_us": ts[0] / 1e3, "seq_write_seconds": wsec, "seq_writes": n}))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "fill":
        cmd_fill(*args)
    elif cmd == "verify":
        cmd_verify(args[0], args[1], float(args[2]) if len(args) > 2 else 0.0)
    elif cmd == "zeros":
        cmd_zeros(*args)
    elif cmd == "latency":
        cmd_latency(*args)
    else:
        raise SystemExit(f"client.py: unknown command {cmd}")
