#!/usr/bin/env python3
"""Writes a history for stopwatchd in format 2 (docs/HISTORY.md): N intervals (default
1,000,000) for a few names, spread over the last months, in the order they ended, into
HISTORY_DIR/DEVICE_ID/YYYY-MM.jsonl (the month of the end in UTC), each with an id; then
C corrections (default 0) of intervals spread over all of it, in the current month: nine
amends (a shorter end, a note) for each delete. HISTORY_DIR/stopwatchd-history.json marks
the folder as format 2.

usage: generate-history.py HISTORY_DIR DEVICE_ID [N] [--months M] [--corrections C] [--totals]

With --totals it prints what `swctl report --csv` is to print of it, corrections applied:
`name,elapsed_ms` for each name (the names need no CSV quoting).
"""
import os
import sys
import time


def option(args, name, default):
    if name in args:
        i = args.index(name)
        value = int(args[i + 1])
        del args[i:i + 2]
        return value
    return default


def main():
    args = [a for a in sys.argv[1:]]
    totals_wanted = "--totals" in args
    if totals_wanted:
        args.remove("--totals")
    months = option(args, "--months", 12)
    corrections = option(args, "--corrections", 0)
    if len(args) < 2:
        sys.exit(__doc__)
    history, device = args[0], args[1]
    count = int(args[2]) if len(args) > 2 else 1_000_000
    names = ["tea", "work", "client-call", "run", "build.1"]
    folder = os.path.join(history, device)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(history, 0o700)
    os.chmod(folder, 0o700)
    with open(os.path.join(history, "stopwatchd-history.json"), "w") as marker:
        marker.write('{"format":2}\n')
    now_ms = int(time.time() * 1000)
    span_ms = months * 30 * 86_400_000
    step = max(span_ms // max(count, 1), 2)
    end = now_ms - span_ms - 120_000
    files = {}
    totals = {}
    every = max(count // corrections, 1) if corrections else None
    corrected = []

    def month_file(month):
        f = files.get(month)
        if f is None:
            for old in files.values():
                old.close()
            files.clear()
            path = os.path.join(folder, month + ".jsonl")
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            f = files[month] = os.fdopen(fd, "w", encoding="utf-8", buffering=1 << 20)
        return f

    try:
        for i in range(count):
            elapsed = (i * 7919) % step
            end += step
            start = end - elapsed
            name = names[i % len(names)]
            ident = "%016x" % ((i * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)
            totals[name] = totals.get(name, 0) + elapsed
            f = month_file(time.strftime("%Y-%m", time.gmtime(end / 1000)))
            quoted = name.replace("\\", "\\\\").replace('"', '\\"')
            f.write('{"id":"%s","name":"%s","start_ms":%d,"end_ms":%d,"elapsed_ms":%d}\n' % (ident, quoted, start, end, elapsed))
            if every and i % every == 0 and len(corrected) < corrections and elapsed >= 2:
                corrected.append((ident, quoted, name, start, end, elapsed))
        made = now_ms - 60_000
        f = month_file(time.strftime("%Y-%m", time.gmtime(made / 1000)))
        for number, (ident, quoted, name, start, end, elapsed) in enumerate(corrected):
            rec = "%016x" % (((number + 1) * 0xD6E8FEB86659FD93) & 0xFFFFFFFFFFFFFFFF)
            if number % 10 == 9:
                f.write('{"op":"delete","rec":"%s","made_ms":%d,"id":"%s"}\n' % (rec, made, ident))
                totals[name] -= elapsed
            else:
                half = elapsed // 2
                f.write('{"op":"amend","rec":"%s","made_ms":%d,"id":"%s","name":"%s","start_ms":%d,"end_ms":%d,"elapsed_ms":%d,"note":"corrected %d"}\n'
                        % (rec, made, ident, quoted, start, start + half, half, number))
                totals[name] -= elapsed - half
    finally:
        for f in files.values():
            f.close()
    if totals_wanted:
        for name, total in totals.items():
            print("%s,%d" % (name, total))


if __name__ == "__main__":
    main()
