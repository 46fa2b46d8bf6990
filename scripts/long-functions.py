#!/usr/bin/env python3
"""Lists the Rust functions longer than a limit (120 lines by default), from their `fn` line
to their closing brace, in the product's crates (src/, index/src/, autotune/src/) or in the
folders given. Exits 1 when there is one, so that CI can run it.

    scripts/long-functions.py [--max LINES] [DIR ...]
"""

import argparse
import pathlib
import re
import sys

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"C\"\s+)?fn\s+(\w+)")


def code_only(line, in_block_comment):
    """The line without comments, string and char literals (their braces do not count)."""
    out, i, n = [], 0, len(line)
    while i < n:
        if in_block_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_block_comment = end + 2, False
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_block_comment, i = True, i + 2
        elif line[i] == '"':
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            i += 1
        elif line[i] == "'" and re.match(r"'(\\.|[^\\'])'", line[i:]):
            i += len(re.match(r"'(\\.|[^\\'])'", line[i:]).group(0))
        else:
            out.append(line[i])
            i += 1
    return "".join(out), in_block_comment


def functions(path):
    """(name, first line, line count) of every function of a file with a body."""
    lines = path.read_text().splitlines()
    stack, depth, in_comment, found = [], 0, False, []
    pending, nesting = None, 0  # a `fn` whose body's brace is not seen yet; ( and [ open since
    for number, raw in enumerate(lines, 1):
        code, in_comment = code_only(raw, in_comment)
        m = FN.match(code)
        if m:
            pending, nesting = (m.group(1), number), 0
        for ch in code:
            if ch in "([":
                nesting += 1
            elif ch in ")]":
                nesting -= 1
            elif ch == ";" and pending and nesting == 0:
                pending = None  # a declaration without a body (a trait's method)
            elif ch == "{":
                depth += 1
                if pending and nesting == 0:
                    stack.append((pending[0], pending[1], depth))
                    pending = None
            elif ch == "}":
                if stack and stack[-1][2] == depth:
                    name, first, _ = stack.pop()
                    found.append((name, first, number - first + 1))
                depth -= 1
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=120)
    parser.add_argument("dirs", nargs="*", default=["src", "index/src", "autotune/src"])
    args = parser.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    long = []
    for d in args.dirs:
        for path in sorted((root / d).rglob("*.rs")):
            long += [(n, path.relative_to(root), first, name) for name, first, n in functions(path) if n > args.max]
    for n, path, first, name in sorted(long, reverse=True):
        print(f"{n:5} lines  {path}:{first}  {name}")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
