#!/usr/bin/env python3
"""meta.py OUT EXP COMMIT DIRTY WALL JOBS QUICK PROG N WALL.csv... ARGS... - an experiment's
meta.json: the command (scripts/experiments/PROG ARGS), the commit and whether the tree was
dirty, this invocation's wall time, the runs (one per row of the N wall.csv files) and their
own wall times summed, the jobs, --quick, the machine's CPUs and the date (UTC)."""
import csv
import json
import os
import sys
import time


def run_walls(paths):
    """Every run's wall_s, over the rows of the wall.csv files at paths."""
    walls = []
    for p in paths:
        with open(p, newline="") as f:
            walls += [float(r["wall_s"]) for r in csv.DictReader(f)]
    return walls


def main():
    out, exp, commit, dirty, wall, jobs, quick, prog, n, *rest = sys.argv[1:]
    walls, args = rest[:int(n)], rest[int(n):]
    runs = run_walls(walls)
    meta = {"experiment": exp,
            "command": " ".join(["scripts/experiments/" + os.path.basename(prog)] + args),
            "commit": commit, "dirty": dirty == "true", "wall_s": int(wall), "jobs": int(jobs),
            "runs": len(runs), "runs_wall_s": round(sum(runs), 3),
            "quick": quick == "1", "cpus": os.cpu_count(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with open(out, "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
