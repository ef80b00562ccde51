#!/usr/bin/env python3
"""Checks the shape docs/architecture.md promises, on the sources as they are:

1. Layering: a library file includes only headers of its own layer and the layers below it
   (LAYERS); a test (*_test.cc) may also include the layers its test links for a functional
   check (TEST_EXTRA).
2. Size: no function in src/ is longer than MAX_FUNCTION_LINES lines (from its signature's line
   to its closing brace) and no file longer than MAX_FILE_LINES lines.
3. Link lines: each binary given after --no-link-to NAMES --binary PATH ... does not load a
   shared library whose name contains one of NAMES (ldd), e.g. the stream library's test binary
   and PCRE2/ICU/zlib/zstd.

Usage: check_structure.py SRC_DIR [--no-link-to pcre2,icu --binary PATH ...]
Exit 0 when everything holds; otherwise every violation is printed and the exit code is 1.
"""
import os
import re
import subprocess
import sys

LAYERS = {
    "core": {"core"},
    "repops": {"core", "repops"},
    "tokenizer": {"core", "tokenizer"},
    "data": {"core", "data"},
    "model": {"core", "repops", "model"},
    "ingest": {"core", "data", "tokenizer", "ingest"},
    "corpus": {"core", "data", "tokenizer", "ingest", "corpus"},
    "collectives": {"core", "collectives"},
    "train": {"core", "repops", "model", "data", "collectives", "train"},
    "fetch": {"core", "fetch"},
    "audit": {"core", "repops", "model", "data", "tokenizer", "collectives", "train", "fetch", "audit"},
    "plan": {"core", "repops", "model", "data", "collectives", "train", "plan"},
    "report": {"core", "repops", "model", "data", "tokenizer", "collectives", "train", "fetch", "audit", "infer", "report"},
    "infer": {"core", "repops", "model", "data", "tokenizer", "ingest", "collectives", "train", "infer"},
}
# The block-diagonal mask's functional test of packing runs packed batches through the real attention op.
TEST_EXTRA = {"data": {"repops"}}
MAX_FUNCTION_LINES = 120
MAX_FILE_LINES = 600


def strip_code(src):
    """Comments, string and character literals blanked; line breaks kept."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * src.count("\n", i, j))
            i = j
            continue
        if src[i] == "R" and src.startswith('R"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', src[i:i + 40])
            if m:
                end = ")" + m.group(1) + '"'
                j = src.find(end, i + len(m.group(0)))
                j = n if j < 0 else j + len(end)
                out.append('""' + "\n" * src.count("\n", i, j))
                i = j
                continue
        c = src[i]
        if c in "\"'":
            if c == "'" and i > 0 and src[i - 1].isalnum():  # digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    text = "".join(out)
    # Preprocessor lines (#include, #if ...) carry no braces of their own.
    return "\n".join("" if l.lstrip().startswith("#") else l for l in text.split("\n"))


def function_lengths(path):
    """(lines, first line, signature tail) of every function body at namespace or class scope."""
    text = strip_code(open(path, encoding="utf-8", errors="replace").read())
    stack, found, last, line = [], [], 0, 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        if c not in "{};":
            continue
        head = " ".join(text[last:i].split())
        last = i + 1
        if c == "{":
            if any(kind == "fn" for kind, _, _ in stack):
                kind = "block"
            elif re.search(r"\b(namespace|class|struct|union|enum)\b", head) and "(" not in head.split(":")[0]:
                kind = "scope"
            elif re.search(r'extern\s*""$', head):
                kind = "scope"
            elif head.endswith((")", "const", "override", "noexcept", "final")) or re.search(r"\)\s*(->.*)?$", head) or re.search(r"\)\s*:", head):
                kind = "fn"
            else:
                kind = "init"
            stack.append((kind, line, head[-70:]))
        elif c == "}" and stack:
            kind, start, head = stack.pop()
            if kind == "fn":
                found.append((line - start + 1, start, head))
    return found


# C++ sources and headers, CUDA's included.
SOURCE_SUFFIXES = (".cc", ".h", ".cu", ".cuh")


def layer_of(path, src):
    rel = os.path.relpath(path, src)
    return rel.split(os.sep)[0]


def check_sources(src):
    problems = []
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(SOURCE_SUFFIXES + (".cc.in",)):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, os.path.dirname(src))
            layer = layer_of(path, src)
            text = open(path, encoding="utf-8", errors="replace").read()
            lines = text.count("\n")
            if lines > MAX_FILE_LINES:
                problems.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES})")
            if layer in LAYERS:
                allowed = set(LAYERS[layer])
                if f.endswith("_test.cc"):
                    allowed |= TEST_EXTRA.get(layer, set())
                for m in re.finditer(r'#include "([a-z_]+)/', text):
                    if m.group(1) in LAYERS and m.group(1) not in allowed:
                        problems.append(f"{rel}: layer '{layer}' includes '{m.group(0)[10:]}' (allowed: {', '.join(sorted(allowed))})")
            if f.endswith(SOURCE_SUFFIXES):
                for n, start, head in function_lengths(path):
                    if n > MAX_FUNCTION_LINES:
                        problems.append(f"{rel}:{start}: function of {n} lines (at most {MAX_FUNCTION_LINES}): ...{head}")
    return problems


def check_links(names, binaries):
    problems = []
    for b in binaries:
        out = subprocess.run(["ldd", b], capture_output=True, text=True, check=True).stdout
        for name in names:
            hits = [l.split()[0] for l in out.splitlines() if name in l.split()[0]] if out else []
            for h in hits:
                problems.append(f"{b}: links {h} (must not link anything named '{name}')")
    return problems


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    src, names, binaries, i = argv[1], [], [], 2
    while i < len(argv):
        if argv[i] == "--no-link-to":
            names = [n for n in argv[i + 1].split(",") if n]
            i += 2
        elif argv[i] == "--binary":
            binaries.append(argv[i + 1])
            i += 2
        else:
            print(f"unknown argument {argv[i]}")
            return 2
    problems = check_sources(src) + check_links(names, binaries)
    for p in problems:
        print(p)
    files = sum(len([f for f in fs if f.endswith(SOURCE_SUFFIXES)]) for _, _, fs in os.walk(src))
    print(f"structure: {files} source files, {len(binaries)} binaries checked; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
