#!/usr/bin/env python3
"""Writes a history for stopwatchd: N intervals (default 1,000,000) for a few names into
STATE_DIR/history/YYYY-MM.jsonl, in the order they ended, spread over the last months, as
the daemon writes them (one JSON line each, the month of the end in UTC).

usage: generate-history.py STATE_DIR [N] [--months M] [--totals]

With --totals it prints what `swctl report --csv` is to print of it: `name,elapsed_ms` for
each name (the names need no CSV quoting).
"""
import os
import sys
import time

def main():
    args = [a for a in sys.argv[1:]]
    months = 12
    totals_wanted = "--totals" in args
    if totals_wanted:
        args.remove("--totals")
    if "--months" in args:
        i = args.index("--months")
        months = int(args[i + 1])
        del args[i:i + 2]
    if not args:
        sys.exit(__doc__)
    state_dir = args[0]
    count = int(args[1]) if len(args) > 1 else 1_000_000
    names = ["tea", "work", "client-call", "run", "build.1"]
    history = os.path.join(state_dir, "history")
    os.makedirs(history, mode=0o700, exist_ok=True)
    os.chmod(history, 0o700)
    now_ms = int(time.time() * 1000)
    span_ms = months * 30 * 86_400_000
    step = max(span_ms // max(count, 1), 2)
    end = now_ms - span_ms
    files = {}
    totals = {}
    try:
        for i in range(count):
            elapsed = (i * 7919) % step
            end += step
            start = end - elapsed
            month = time.strftime("%Y-%m", time.gmtime(end / 1000))
            f = files.get(month)
            if f is None:
                for old in files.values():
                    old.close()
                files.clear()
                path = os.path.join(history, month + ".jsonl")
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                f = files[month] = os.fdopen(fd, "w", encoding="utf-8", buffering=1 << 20)
            totals[names[i % len(names)]] = totals.get(names[i % len(names)], 0) + elapsed
            name = names[i % len(names)].replace("\\", "\\\\").replace('"', '\\"')
            f.write('{"name":"%s","start_ms":%d,"end_ms":%d,"elapsed_ms":%d}\n' % (name, start, end, elapsed))
    finally:
        for f in files.values():
            f.close()
    if totals_wanted:
        for name, total in totals.items():
            print("%s,%d" % (name, total))

if __name__ == "__main__":
    main()
