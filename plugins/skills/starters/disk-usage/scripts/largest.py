"""Free space of a path's filesystem and the largest entries directly under it (read-only)."""

import argparse
import os
import shutil
import sys

MAX_FILES = 200_000


def human(n: float) -> str:
    for unit in ("B", "K", "M", "G", "T"):
        if n < 1024 or unit == "T":
            return f"{n:.0f}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024
    return f"{n:.1f}T"


def tree_size(path: str, budget: list[int]) -> int:
    total = 0
    stack = [path]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    if budget[0] <= 0:
                        return total
                    budget[0] -= 1
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
        except OSError:
            continue
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", nargs="?", default=".")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    path = os.path.abspath(args.path)
    if not os.path.isdir(path):
        print(f"not a directory: {path}", file=sys.stderr)
        return 2
    usage = shutil.disk_usage(path)
    print(f"filesystem of {path}: {human(usage.total)} total, {human(usage.used)} used, "
          f"{human(usage.free)} free ({usage.used * 100 // max(usage.total, 1)}% used)")
    budget = [MAX_FILES]
    sizes = []
    with os.scandir(path) as entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    sizes.append((tree_size(entry.path, budget), entry.name + "/"))
                else:
                    sizes.append((entry.stat(follow_symlinks=False).st_size, entry.name))
            except OSError:
                continue
    sizes.sort(reverse=True)
    print(f"largest under {path}:")
    for size, name in sizes[:max(args.top, 1)]:
        print(f"{human(size):>8}  {name}")
    if budget[0] <= 0:
        print(f"(stopped counting after {MAX_FILES} files; sizes are lower bounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
