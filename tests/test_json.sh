#!/bin/bash
# test_json.sh - every JSON document femu-gandalf writes is JSON a script can trust, whatever the
# paths and names in it hold.
# Usage: test_json.sh path/to/femu-gandalf [path/to/nbdkit-femu-gandalf-plugin.so]
#
# Files and directories are made whose names hold '"', '\', a newline, a tab, \x01, é and 漢 (valid
# UTF-8) or a \xff byte (invalid UTF-8); bundled traces, a preset and a model catalog are copied
# there, and every command that writes JSON runs on them: ssd (--preset FILE, snapshots, the
# steady, accelerated and no-write variants whose numbers were once inf/nan), blkreplay (in process
# and --target FILE), kv (--trace, --device FILE, --device none, a model whose name needs escaping),
# trace info (each trace format), models, bench (--parse, --kv, --quick), synth --out, and the
# nbdkit plugin's stats file (stats=, snapshot=, data=file: at such paths). Each output must be
# valid UTF-8 and parse with python3's json (NaN/Infinity and duplicate keys rejected), and every
# path or name must come back as given: exactly for valid UTF-8, with U+FFFD for each ill-formed
# sequence otherwise (the emitter's rule, docs/output.md, which is Python's errors="replace").
# Writing to /dev/full must exit 1. It also fails when a command gains --json without being
# covered here, and when hand-written JSON (a printf whose format holds "\"key\": %...")
# reappears in hw/ or femu-gandalf/.
set -u
FG=$(realpath "${1:?usage: test_json.sh FEMU_GANDALF [PLUGIN]}")
PLUGIN=${2:-}
SRC=$(cd "$(dirname "$0")/.." && pwd)
export FG PLUGIN SRC
exec python3 - <<'PY'
import json, os, re, shutil, signal, subprocess, sys, tempfile, time

FG, PLUGIN, SRC = os.environ["FG"], os.environ["PLUGIN"], os.environ["SRC"]
fails = 0


def ok(name):
    print("ok   " + name)


def bad(name, why):
    global fails
    fails += 1
    print("FAIL " + name + ": " + why)


def text(b):
    """What the emitter must print for the bytes b of a path or name."""
    return b.decode("utf-8", "replace")


def reject_constant(c):
    raise ValueError("not JSON: " + c)


def no_dups(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key in %r" % keys)
    return dict(pairs)


def parse(raw, name):
    """Strict JSON from bytes: valid UTF-8, no NaN/Infinity, no duplicate keys."""
    return json.loads(raw.decode("utf-8"), parse_constant=reject_constant, object_pairs_hook=no_dups)


def run(name, args, env=None, want=None, jsonl=False):
    """Run femu-gandalf with args (bytes or str); parse stdout; check the want dict of
    dotted-key -> expected value. Returns the document (or list of them), or None."""
    args = [a if isinstance(a, bytes) else a.encode() for a in args]
    e = dict(os.environ, **(env or {}))
    p = subprocess.run([FG.encode()] + args, capture_output=True, env=e, timeout=600)
    if p.returncode:
        bad(name, "exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[-400:]))
        return None
    return check(name, p.stdout, want, jsonl)


def check(name, raw, want, jsonl=False):
    try:
        if jsonl:
            lines = raw.split(b"\n")
            if lines[-1] != b"":
                raise ValueError("no final newline")
            d = [parse(l, name) for l in lines[:-1]]
        else:
            d = parse(raw, name)
    except (ValueError, UnicodeDecodeError) as ex:
        bad(name, "%s in %r" % (ex, raw[:300]))
        return None
    for k, v in (want or {}).items():
        got = d
        for part in k.split("."):
            got = got[int(part)] if isinstance(got, list) else got.get(part, KeyError(k))
        if got != v:
            bad(name, "%s is %r, want %r" % (k, got, v))
            return None
    ok(name)
    return d


T = tempfile.mkdtemp(prefix="test_json.").encode()
try:
    # --- every command that documents --json must be covered below
    covered = {"ssd", "blkreplay", "kv", "trace", "models", "lift", "presets"}
    top = subprocess.run([FG, "--help"], capture_output=True, text=True).stdout
    cmds = re.findall(r"^  ([a-z][a-z-]+) ", top, re.M)
    if not cmds:
        bad("command list", "none in femu-gandalf --help")
    for c in cmds:
        h = subprocess.run([FG, c, "--help"], capture_output=True, text=True)
        if "--json" in h.stdout + h.stderr and c not in covered:
            bad("coverage", "'%s' takes --json but test_json.sh does not run it" % c)
    ok("every command with --json is covered (%s)" % ", ".join(sorted(covered)))

    # --- a document that cannot be written is an error, not exit 0
    blk0 = os.path.join(SRC, "traces/blk-kvcache-small.csv")
    kv0 = os.path.join(SRC, "traces/multiturn-small.jsonl")
    for args in (["trace", "info", kv0, "--json"], ["models", "--json"], ["bench", "--parse", blk0],
                 ["presets", "--json"],
                 ["ssd", "--preset", "tiny", "--writes", "0", "--json"],
                 ["blkreplay", blk0, "--preset", "tiny", "--json"],
                 ["kv", "--trace", kv0, "--dram", "1G", "--device", "none", "--ssd", "8G", "--json"],
                 ["synth", "--sessions", "2"],
                 ["lift", blk0, "--block-tokens", "64", "--layout", "kvbm", "--out",
                  os.path.join(T, b"lifted.jsonl").decode(), "--json"]):
        with open("/dev/full", "wb") as full:
            p = subprocess.run([FG] + args, stdout=full, stderr=subprocess.PIPE)
        if p.returncode == 1 and b"write error" in p.stderr:
            ok("%s > /dev/full: exit 1, write error" % args[0])
        else:
            bad("%s > /dev/full" % args[0], "exit %d: %r" % (p.returncode, p.stderr[-200:]))

    # --- the hostile names: valid UTF-8 with every kind of escape, and invalid UTF-8
    valid = 'q"x\\y\nz\tw\x01 é漢'.encode()
    invalid = b"bad\xff\xe6\xbc-\xc0\xaf"
    presets = os.path.join(SRC, "hw/ftl/presets").encode()
    traces = os.path.join(SRC, "traces").encode()
    for tag, w in (("valid UTF-8", valid), ("invalid UTF-8", invalid)):
        d = os.path.join(T, w)
        os.mkdir(d)
        P = lambda *parts: os.path.join(d, *parts)
        blk = P(b"blk " + w + b".csv")
        shutil.copy(os.path.join(traces, b"blk-kvcache-small.csv"), blk)
        kvt = {}
        for f in (b"multiturn-small.jsonl", b"agentic-small.jsonl", b"aiperf-small.jsonl"):
            kvt[f] = P(w + b"-" + f)
            shutil.copy(os.path.join(traces, f), kvt[f])
        kv = kvt[b"multiturn-small.jsonl"]
        moon = P(b"mooncake" + w + b".jsonl")
        with open(moon, "wb") as f:
            f.write(b'{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [1, 2]}\n'
                    b'{"timestamp": 1000, "input_length": 600, "output_length": 1, "hash_ids": [1, 3]}\n')
        # (hw/ftl stores a snapshot's config as key=value lines, so a preset named after a file
        # with a newline in its name is named with '_' there; the directory keeps the newline)
        pname = b"p" + w.replace(b"\n", b"_")
        preset = P(pname + b".ini")
        shutil.copy(os.path.join(presets, b"tiny.ini"), preset)
        run("presets --json FILE (%s)" % tag, ["presets", "--json", preset],
            want={"name": text(pname), "user_bytes": 53686272})

        # trace info, every format
        for t in [blk, moon] + list(kvt.values()):
            run("trace info %s (%s)" % (os.path.basename(t)[-20:], tag), ["trace", "info", t, "--json"],
                want={"path": text(t)})

        # ssd: --preset FILE, snapshots, and the variants that hold null numbers
        snap = P(b"snap " + w)
        run("ssd --preset FILE --save-snapshot (%s)" % tag,
            ["ssd", "--preset", preset, "--writes", "1", "--json", "--save-snapshot", snap],
            want={"preset": text(pname), "workload": "uniform"})
        run("ssd --load-snapshot (%s)" % tag, ["ssd", "--load-snapshot", snap, "--writes", "0", "--json"],
            want={"preset": text(pname)})
        run("ssd --dwpd 0: null lifetimes (%s)" % tag,
            ["ssd", "--preset", preset, "--writes", "0", "--dwpd", "0", "--json"],
            want={"lifetime_days.tbw": None, "lifetime_days.erase": None})
        run("ssd --steady (%s)" % tag, ["ssd", "--preset", preset, "--precondition", "--steady", "--json"],
            want={"steady.reached": True})
        run("ssd --accelerate to EOL during --steady: null extrapolation (%s)" % tag,
            ["ssd", "--preset", preset, "--accelerate", "3000", "--precondition", "--steady", "--json"],
            want={"accelerated.extrapolated_days": None})

        # blkreplay in process and onto a file
        run("blkreplay --preset FILE (%s)" % tag,
            ["blkreplay", blk, "--preset", preset, "--loop", "2", "--json"],
            want={"trace": text(blk), "preset": text(pname), "passes": 2})
        disk = P(b"disk " + w + b".img")
        with open(disk, "wb") as f:
            f.truncate(256 << 20)
        run("blkreplay --target FILE (%s)" % tag, ["blkreplay", blk, "--target", disk, "--json"],
            want={"trace": text(blk), "target": text(disk)})

        # kv: --trace, --device FILE, --device none, a model that needs escaping
        run("kv --device FILE (%s)" % tag,
            ["kv", "--trace", kv, "--dram", "1G", "--device", preset, "--policy", "lru", "--json"],
            want={"trace": text(kv), "device": text(preset)})
        run("kv --device none (%s)" % tag,
            ["kv", "--trace", kv, "--dram", "1G", "--device", "none", "--ssd", "8G", "--policy", "gandalf",
             "--param", "lambda=4", "--json"], want={"trace": text(kv), "params": "lambda=4"})
        run("kv, no SSD writes: null WAF and lifetimes (%s)" % tag,
            ["kv", "--trace", kv, "--dram", "1T", "--device", preset, "--policy", "lru", "--json"],
            want={"waf": None, "lifetime_days.tbw": None})
        # a catalog whose model name holds a quote, a backslash and non-ASCII (GKeyFile allows no
        # control characters in group names, and reads UTF-8 only)
        model = 'm"\\é漢'
        mdir = P(b"models")
        os.mkdir(mdir)
        with open(os.path.join(mdir, b"models.ini"), "w", encoding="utf-8") as f:
            f.write("[%s]\ndescription = a \"test\" model\nfull_kv_bytes_per_token = 1000\n"
                    "linear_state_bytes = 0\n" % model)
        env = {"FEMU_GANDALF_MODELS": mdir}
        run("models --json, hostile model name (%s)" % tag, ["models", "--json"], env=env,
            want={"0.name": model})
        run("kv --model with a hostile name (%s)" % tag,
            ["kv", "--trace", kv, "--model", model, "--dram", "1G", "--device", "none", "--ssd", "8G",
             "--policy", "lru", "--json"], env=env, want={"model": model, "trace": text(kv)})

        # kv --target (the store) onto a hostile file, its record, lift with a hostile --out
        agt = kvt[b"agentic-small.jsonl"]
        store = P(b"store " + w + b".img")
        with open(store, "wb") as f:
            f.truncate(256 << 20)
        cap = P(b"cap " + w + b".csv")
        run("kv --target FILE --capture --record (%s)" % tag,
            ["kv", "--trace", agt, "--model", "test-hybrid-256", "--policy", "write-through", "--dram", "0",
             "--target", store, "--capture", "--meta", "1M", "--record", cap, "--json"],
            want={"trace": text(agt), "store.puts": 3164, "store.evictions": 0})
        lifted = P(b"lifted " + w + b".jsonl")
        run("lift --out --against (%s)" % tag,
            ["lift", cap, "--model", "test-hybrid-256", "--out", lifted, "--against", agt, "--json"],
            want={"requests": 92, "against.exact": 92})
        with open(lifted, "rb") as f:
            check("lift --out: JSONL (%s)" % tag, f.read(), None, jsonl=True)

        # bench --parse, --kv
        run("bench --parse (%s)" % tag, ["bench", "--parse", blk, "--parse", kv],
            want={"parse.0.path": text(blk), "parse.1.path": text(kv)})
        run("bench --kv (%s)" % tag, ["bench", "--kv", kv, "--policy", "lru"], want={"kv.path": text(kv)})
        doc = run("bench --kv --device (%s)" % tag, ["bench", "--kv", kv, "--policy", "lru", "--device", "tiny"],
                want={"kv.path": text(kv), "kv.policies.0.device": "tiny"})
        if doc:  # the drive times the tier's I/O; it does not change what hits
            r = doc["kv"]["policies"][0]
            if r["miss_ratio_device"] != r["miss_ratio_none"] or r["ssd_bytes"] <= 0:
                bad("bench --kv --device (%s)" % tag, "misses differ with and without the drive: %r" % r)

        # synth --out: JSONL, then read back
        out = P(b"synth " + w + b".jsonl")
        p = subprocess.run([FG.encode(), b"synth", b"--kind", b"agentic", b"--sessions", b"3",
                            b"--subagent-p", b"0.5", b"--out", out], capture_output=True)
        if p.returncode:
            bad("synth --out (%s)" % tag, p.stderr.decode(errors="replace"))
        else:
            with open(out, "rb") as f:
                lines = check("synth --out: JSONL (%s)" % tag, f.read(), None, jsonl=True)
            if lines is not None and not any("/sub" in r["session_id"] for r in lines):
                bad("synth --out (%s)" % tag, "no sub-agent session")
            run("trace info on synth's output (%s)" % tag, ["trace", "info", out, "--json"],
                want={"path": text(out), "format": "aiperf"})

    # ssd: a preset name cut to 63 bytes inside a multi-byte character
    long_name = b"a" * 62 + "漢".encode()
    preset = os.path.join(T, long_name + b".ini")
    shutil.copy(os.path.join(presets, b"tiny.ini"), preset)
    run("ssd: a preset name cut inside a UTF-8 sequence", ["ssd", "--preset", preset, "--writes", "0", "--json"],
        want={"preset": text(long_name[:63])})

    # models and bench --quick: no paths, but JSON all the same
    run("models --json", ["models", "--json"])
    doc = run("bench --quick", ["bench", "--quick"])
    if doc:  # (e), MQSim's case: Desnoyers' greedy model at Sf 0.10, Np = 64 gives 4.835
        w = doc["e_mqsim_1g"]["waf_last_4"]
        if abs(w / 4.835 - 1) > 0.02:
            bad("bench --quick", "(e) WAF %.4f is not within 2%% of the model's 4.835" % w)

    # --- the nbdkit plugin's stats file, at hostile paths
    if PLUGIN and shutil.which("nbdkit"):
        for tag, w in (("valid UTF-8", valid), ("invalid UTF-8", invalid)):
            d = os.path.join(T, w)
            stats, snap, data = (os.path.join(d, b"nbd " + n + b" " + w) for n in (b"stats", b"snap", b"data"))
            pid = os.path.join(T, b"nbdkit.pid")
            pname = b"p" + w.replace(b"\n", b"_")
            preset = os.path.join(d, pname + b".ini")
            for n in range(2):  # the second run loads the snapshot
                if os.path.exists(pid):
                    os.unlink(pid)
                sock = os.path.join(d, b"nbd%d.sock" % n)
                proc = subprocess.Popen([b"nbdkit", b"-f", b"--exit-with-parent", b"-U", sock, b"-P", pid,
                                         PLUGIN.encode(), b"preset=" + preset, b"data=file:" + data,
                                         b"snapshot=" + snap, b"stats=" + stats],
                                        stderr=subprocess.PIPE)
                for _ in range(100):
                    if os.path.exists(pid) and os.path.getsize(pid) or proc.poll() is not None:
                        break
                    time.sleep(0.1)
                proc.send_signal(signal.SIGTERM)
                err = proc.communicate(timeout=60)[1]
                if proc.returncode or not os.path.exists(stats):
                    bad("nbdkit stats (%s)" % tag, "exit %s: %s" % (proc.returncode, err.decode(errors="replace")))
                    break
                with open(stats, "rb") as f:
                    check("nbdkit stats file, run %d (%s)" % (n + 1, tag), f.read(),
                          {"nbdkit.snapshot": text(snap), "nbdkit.data": text(b"file:" + data),
                           "nbdkit.final": True, "nbdkit.snapshot_loaded": n == 1, "preset": text(pname)})
    else:
        print("skip nbdkit stats file: no plugin or no nbdkit")

    # --- every key kv --json writes is documented in docs/output.md's kv section: a drive run
    # with regions, an accelerated one, a run without a drive, and gandalf's policy figures
    doc = open(os.path.join(SRC, "docs/output.md")).read()
    sec = doc[doc.index("## `femu-gandalf kv --json`"):doc.index("## `femu-gandalf kv --target")]
    kv = [FG, "kv", "--trace", os.path.join(SRC, "traces/multiturn-small.jsonl"), "--model", "test-hybrid-256",
          "--dram", "64M", "--json"]
    undocumented = set()
    def walk(o, prefix=""):
        for k, v in o.items() if isinstance(o, dict) else ():
            if not re.search(r"(?<![A-Za-z0-9_])" + re.escape(k) + r"(?![A-Za-z0-9_])", sec):
                undocumented.add(prefix + k)
            walk(v, prefix + k + ".")
    for extra in (["--device", "tiny", "--alloc", "region"], ["--device", "tiny", "--accelerate", "100"],
                  ["--device", "none", "--ssd", "1G", "--policy", "lru"]):
        walk(json.loads(subprocess.run(kv + extra, capture_output=True, check=True).stdout))
    if undocumented:
        bad("every kv --json key in docs/output.md", "undocumented: " + ", ".join(sorted(undocumented)))
    else:
        ok("every kv --json key in docs/output.md")

    # --- hand-written JSON must not come back: a printf-family format with "\"key\": " followed
    # by a conversion, a quoted conversion, a container or a literal
    pat = re.compile(rb'\\"(%s|[A-Za-z_][A-Za-z0-9_]*)\\": *(%|\\"%|\{|\[(%|")|null|true|false)')
    hits = []
    for top in (b"hw", b"femu-gandalf"):
        for root, _, files in os.walk(os.path.join(SRC.encode(), top)):
            for fn in files:
                if fn.endswith((b".c", b".h")):
                    path = os.path.join(root, fn)
                    for i, line in enumerate(open(path, "rb"), 1):
                        if pat.search(line):
                            hits.append("%s:%d: %s" % (os.path.relpath(path, SRC.encode()).decode(), i,
                                                       line.decode(errors="replace").strip()))
    if hits:
        bad("no hand-written JSON outside common/", "use common/json.h:\n  " + "\n  ".join(hits))
    else:
        ok("no hand-written JSON outside common/")
finally:
    shutil.rmtree(T, ignore_errors=True)
print("test_json: %d failure(s)" % fails)
sys.exit(1 if fails else 0)
PY
