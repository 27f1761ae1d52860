#!/usr/bin/env python3
"""Holds the instructions and heap allocations of a save and of a key look-up to thresholds.

Runs the StorageCounts executable of the debug build (`swift build` or `swift test` made it) under
`valgrind --tool=callgrind`, dumping the counts of the function that makes the counted saves (then
of the one of the look-ups) alone, and divides them by the number of operations. Counts of one
build repeat from run to run (callgrind counts instructions, not time), so the thresholds can be
tight: an operation over its instruction threshold (the count of record plus 5 %) or making more
heap allocations than recorded (plus half of one: one more allocation an operation fails) fails
the run. docs/BENCHMARKS.md ("Counts held in CI") says where the figures come from; when a change
moves them on purpose, run `scripts/count-check.py --print` and record the new figures below.

Usage: scripts/count-check.py [--print] [--build-path .build/debug]
"""
import os
import re
import subprocess
import sys
import tempfile

# backend, operation: (instructions an operation, heap allocations an operation), debug build.
RECORDED = {
    ("sqlite", "save"): (211_520, 90.76),
    ("sqlite", "fetch"): (38_773, 5.33),
    ("lmdb", "save"): (179_819, 69.67),
    ("lmdb", "fetch"): (51_966, 1.72),
}
COUNT = 200
FUNCTIONS = {"save": "*12countedSaves*", "fetch": "*14countedFetches*"}
END = "*10countedEnd*"
ALLOCATORS = {"malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign"}


def measure(executable, backend, operation):
    with tempfile.TemporaryDirectory(prefix="storage-counts-") as folder:
        output = os.path.join(folder, "callgrind.out")
        store = os.path.join(folder, "store." + backend)
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + output,
             "--dump-before=" + FUNCTIONS[operation], "--dump-before=" + END,
             executable, "--backend", backend, "--path", store, "--count", str(COUNT)],
            capture_output=True, text=True)
        if run.returncode != 0 or "done" not in run.stdout:
            sys.exit(f"count-check: StorageCounts failed on {backend}:\n{run.stdout}{run.stderr}")
        # A part is dumped as each trigger's function begins: the counted function's part is the
        # one that ends at the `countedEnd` right after the counted function began.
        parts = sorted((f for f in os.listdir(folder) if f.startswith("callgrind.out.")),
                       key=lambda name: int(name.rsplit(".", 1)[1]))
        began = False
        for part in parts:
            path = os.path.join(folder, part)
            trigger = trigger_of(path)
            if began and "countedEnd" in trigger:
                return parse(path)
            began = FUNCTIONS[operation].strip("*") in trigger
        sys.exit(f"count-check: no dump of the counted {operation}s on {backend}")


def trigger_of(path):
    with open(path) as lines:
        for line in lines:
            if line.startswith("desc: Trigger:"):
                return line
    return ""


def parse(path):
    """Total instructions and calls to the allocator in a callgrind output file."""
    names = {}
    instructions = 0
    allocations = 0
    callee = None
    with open(path) as lines:
        for line in lines:
            match = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
            if match:
                if match.group(2):
                    names[match.group(1)] = match.group(2).strip()
                callee = names.get(match.group(1)) if line.startswith("cfn=") else None
                continue
            if line.startswith("calls=") and callee in ALLOCATORS:
                allocations += int(line.split("=")[1].split()[0])
            elif line.startswith("totals:") or line.startswith("summary:"):
                instructions = int(line.split()[1])
    return instructions, allocations


def main():
    arguments = sys.argv[1:]
    build = ".build/debug"
    if "--build-path" in arguments:
        build = arguments[arguments.index("--build-path") + 1]
    executable = os.path.join(build, "StorageCounts")
    if not os.path.exists(executable):
        sys.exit(f"count-check: no {executable}; build first (swift build --product StorageCounts)")
    failures = []
    for (backend, operation), (instructions, allocations) in RECORDED.items():
        total, allocated = measure(executable, backend, operation)
        per_instructions, per_allocations = total / COUNT, allocated / COUNT
        print(f"count-check: {backend} {operation}: {per_instructions:,.0f} instructions "
              f"(recorded {instructions:,}), {per_allocations:.2f} allocations (recorded {allocations:.2f})")
        if "--print" in arguments:
            continue
        if per_instructions > instructions * 1.05:
            failures.append(f"{backend} {operation}: {per_instructions:,.0f} instructions, over "
                            f"{instructions:,} + 5 %")
        if per_allocations > allocations + 0.5:
            failures.append(f"{backend} {operation}: {per_allocations:.2f} heap allocations, over "
                            f"{allocations:.2f} (one more an operation)")
    if failures:
        sys.exit("count-check: failed:\n  " + "\n  ".join(failures))


main()
