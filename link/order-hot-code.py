#!/usr/bin/env python3
"""Regenerates link/hot-code.txt: the functions `atomic` runs in everyday use, in the order
the linker should place them first (build.rs hands the file to lld as its symbol ordering
file for release builds).

Why: a run touches ~2.6 MB of the binary's code, spread over ~14 MB of pages; packed
together they fit in ~3 MB, and every process's resident memory drops by ~11 MB
(BENCHMARKS.md, "Hot code first").

How: for each build (default features, then `--features temporal`) it builds the release
binary with a linker map, runs everyday commands under valgrind's callgrind, maps every
instruction executed in the binary to the function section holding it, and writes the
sections' symbols, first build's first. Names that a later change renames are simply not
found by the linker (it is told not to warn), so a stale file costs memory, never a
failed build: run this again after large changes.

    python3 link/order-hot-code.py        # from the repository root; needs valgrind
"""

import bisect
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "link", "hot-code.txt")
BUILDS = [[], ["--features", "temporal"]]
HEADER = "# Written by link/order-hot-code.py; the linker places these functions first.\n"

W3 = """workflow "w3" {
    state { field "n" type="integer" default=0 }
    loop "l" max=300 until="state.n >= 300" {
        set "n" expr="state.n + 1" id="inc"
    }
}
"""
TOOLS = """workflow "tools" {
    state {
        field "said" type="string" default=""
        field "log" type="array" reduce="append" default="[]"
    }
    tool "say" {
        run "sh" "-c" "echo hello > said.txt; echo hello"
        output "said"
    }
    set "log" expr="state.said | trim" id="note"
    decision "route" {
        when "state.said != ''" goto="end"
        otherwise goto="end"
    }
}
"""


def scenarios(examples):
    """Everyday commands, each an argument list after `atomic`."""
    hello = os.path.join(examples, "hello.kdl")
    every = sorted(
        os.path.join(examples, name) for name in os.listdir(examples) if name.endswith(".kdl")
    )
    return [
        ["--version"],
        ["--help"],
        ["check", *every],
        ["graph", "--dot", os.path.join(examples, "review-and-fix.kdl")],
        ["run", hello],
        ["run", "w3.kdl", "--quiet"],
        ["run", "w3.kdl", "--quiet", "--store", "memory"],
        ["run", "tools.kdl"],
        ["runs"],
        ["runs", "show", "LAST", "--events"],
    ]


def cargo(*args):
    subprocess.run(["cargo", *args], cwd=ROOT, check=True)


def text_sections(map_path):
    """(start, end, symbol) of each function section of `.text`, by start address."""
    sections = []
    in_text = False
    line_re = re.compile(r"^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s(\s*)(.*)$")
    with open(map_path, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            match = line_re.match(line)
            if not match:
                continue
            vma, size, indent, rest = match.groups()
            if len(indent) < 2:  # an output section
                in_text = rest.strip() == ".text"
                continue
            if not in_text or ":(" not in rest:
                continue
            section = rest[rest.rindex(":(") + 2 : -1]
            name = function_of(section)
            if name:
                start = int(vma, 16)
                sections.append((start, start + int(size, 16), name))
    sections.sort()
    return sections


def function_of(section):
    """The symbol a function section is named after (`-ffunction-sections`), if it is."""
    for prefix in (".text.unlikely.", ".text.hot.", ".text.startup.", ".text.exit.", ".text."):
        if section.startswith(prefix):
            return section[len(prefix) :] or None
    return None


def executed(callgrind_out, binary):
    """Addresses of the instructions run in `binary`, from a callgrind profile written with
    --dump-instr=yes --compress-pos=no --compress-strings=no."""
    addresses = set()
    ours = False
    with open(callgrind_out, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if line.startswith("ob="):
                ours = os.path.realpath(line[3:].strip()) == binary
            elif ours and line.startswith("0x"):
                addresses.add(int(line.split()[0], 16))
    return addresses


def profile(binary, work):
    """The addresses every scenario runs in `binary`, as its ELF headers number them
    (callgrind writes them so)."""
    examples = os.path.join(ROOT, "examples")
    project = os.path.join(work, "project")
    shutil.rmtree(project, ignore_errors=True)
    os.makedirs(os.path.join(project, ".atomic"))
    for name, text in (("w3.kdl", W3), ("tools.kdl", TOOLS)):
        with open(os.path.join(project, name), "w", encoding="utf-8") as flow:
            flow.write(text)
    addresses = set()
    for number, args in enumerate(scenarios(examples)):
        if args[:2] == ["runs", "show"]:
            last = subprocess.run(
                [binary, "runs", "--json"], cwd=project, capture_output=True, text=True
            )
            runs = re.findall(r'"id":\s*"([^"]+)"', last.stdout)
            if not runs:
                continue
            args = ["runs", "show", runs[0], "--events"]
        out = os.path.join(work, f"callgrind.{number}")
        subprocess.run(
            [
                "valgrind", "--tool=callgrind", "--dump-instr=yes", "--compress-pos=no",
                "--compress-strings=no", f"--callgrind-out-file={out}", binary, *args,
            ],
            cwd=project,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "NO_COLOR": "1"},
        )
        addresses |= executed(out, binary)
    return addresses


def hot_functions(features, work):
    cargo("build", "--release", "--locked", *features)
    map_path = os.path.join(work, "atomic.map")
    cargo(
        "rustc", "--release", "--locked", "--bin", "atomic", *features,
        "--", "-C", f"link-arg=-Wl,-Map={map_path}",
    )
    binary = os.path.join(work, "atomic")
    shutil.copy(os.path.join(ROOT, "target", "release", "atomic"), binary)
    sections = text_sections(map_path)
    starts = [start for start, _, _ in sections]
    names, seen, outside = [], set(), 0
    size = 0
    executed_addresses = sorted(profile(binary, work))
    for address in executed_addresses:
        at = bisect.bisect_right(starts, address) - 1
        if at < 0 or address >= sections[at][1]:
            outside += 1
            continue
        start, end, name = sections[at]
        if name not in seen:
            seen.add(name)
            names.append(name)
            size += end - start
    # A few run outside function sections (the C runtime's start, the PLT); more than 1 %
    # means the profile's addresses and the map's do not agree.
    if not names or outside * 100 > len(executed_addresses):
        sys.exit(f"{outside} of {len(executed_addresses)} executed addresses fall outside the "
                 "map's function sections: callgrind's addresses no longer match the map's")
    print(f"{' '.join(features) or 'default features'}: {len(names)} functions, "
          f"{size / 1e6:.2f} MB of code ({outside} addresses outside function sections)")
    return names


def main():
    if shutil.which("valgrind") is None:
        sys.exit("needs valgrind (apt-get install valgrind)")
    if not os.path.exists(OUT):
        # build.rs watches the file: while it is missing, every cargo call rebuilds.
        with open(OUT, "w", encoding="utf-8") as out:
            out.write(HEADER)
    work = tempfile.mkdtemp(prefix="atomic-hot-code-")
    try:
        ordered, seen = [], set()
        for features in BUILDS:
            for name in hot_functions(features, work):
                if name not in seen:
                    seen.add(name)
                    ordered.append(name)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(OUT, "w", encoding="utf-8") as out:
        out.write(HEADER)
        out.writelines(f"{name}\n" for name in ordered)
    print(f"wrote {len(ordered)} names to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
