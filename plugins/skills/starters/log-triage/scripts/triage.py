"""Error and warning counts, the most repeated messages, and the latest errors of a log file."""

import argparse
import collections
import re
import sys

ERROR = re.compile(r"\b(error|err|fatal|critical|crit|panic|exception|traceback|failed|failure)\b", re.I)
WARN = re.compile(r"\b(warn|warning)\b", re.I)
FOLD = [
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>"),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<hex>"),
    (re.compile(r"(?<![A-Za-z_])\d+(?:\.\d+)*"), "<n>"),  # 30s -> <n>s, but v2 stays
]
MAX_LINE = 300


def fold(line: str) -> str:
    for pattern, mark in FOLD:
        line = pattern.sub(mark, line)
    return line.strip()[:MAX_LINE]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path")
    parser.add_argument("--since-line", type=int, default=0)
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    errors, warnings, total = 0, 0, 0
    repeated: collections.Counter[str] = collections.Counter()
    latest: collections.deque[tuple[int, str]] = collections.deque(maxlen=5)
    try:
        handle = open(args.path, encoding="utf-8", errors="replace")
    except OSError as exc:
        print(f"cannot open {args.path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    with handle:
        for number, line in enumerate(handle, start=1):
            if number <= args.since_line:
                continue
            total += 1
            if ERROR.search(line):
                errors += 1
                repeated[fold(line)] += 1
                latest.append((number, line.rstrip()[:MAX_LINE]))
            elif WARN.search(line):
                warnings += 1
                repeated[fold(line)] += 1
    print(f"{args.path}: {total} lines read, {errors} error-like, {warnings} warning-like")
    if repeated:
        print("most repeated (numbers, ids and times folded):")
        for text, count in repeated.most_common(max(args.top, 1)):
            print(f"{count:>6}x  {text}")
    if latest:
        print("latest errors:")
        for number, text in latest:
            print(f"  line {number}: {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
