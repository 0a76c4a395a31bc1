#!/usr/bin/env python3
"""The straight loop of every points_kernel instance in a `cuobjdump -sass` listing: the
innermost loop with tensor-core instructions and no branch inside, its instructions per lane's
atom-point pair by kind, and its order as one letter per instruction (H HMMA, M MUFU, F FP32
arithmetic, L shared-memory load, o other), to see whether MUFU work is spread between the
HMMAs or comes in bursts after them. Pairs per iteration: 2 per HMMA (a 16 x 8 tile's r^2 takes
two m16n8k8 MMAs and gives a lane 4 pairs). No GPU needed (docs/points-kernel.md):
  cuobjdump -sass build/ci/kernels/CMakeFiles/dcs_cuda.dir/src/points/points_kernel.cu.o >x.sass
Usage: points_sass.py LISTING.sass"""
import re
import sys
from collections import Counter

KINDS = {0: "coulomb", 1: "screened", 2: "distance"}


def letter(op):
    if op.startswith("HMMA"):
        return "H"
    if op.startswith("MUFU"):
        return "M"
    if re.match(r"F(FMA|MUL|ADD|MNMX|SETP|SEL)", op):
        return "F"
    if op.startswith("LDS"):
        return "L"
    return "o"


def functions(text):
    name, body = None, []
    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m and name:
            body.append((int(m.group(1), 16), m.group(2)))
    if name:
        yield name, body


def main():
    text = open(sys.argv[1]).read()
    for name, code in functions(text):
        m = re.search(r"points_kernelILNS_8PairKindE(\d)ELi(\d+)E", name)
        if not m:
            continue
        kind, software = KINDS.get(int(m.group(1)), m.group(1)), m.group(2)
        index = {address: i for i, (address, _) in enumerate(code)}
        loops = []
        for i, (address, instruction) in enumerate(code):
            b = re.search(r"BRA (?:[^,]*, )?0x([0-9a-f]+)", instruction)
            if b and int(b.group(1), 16) < address and int(b.group(1), 16) in index:
                body = code[index[int(b.group(1), 16)]:i + 1]
                inner = [x for _, x in body[:-1]]
                if any("HMMA" in x for x in inner) and not any(
                        re.search(r"\bBRA\b|BSSY|EXIT", x) for x in inner):
                    loops.append(body)
        if not loops:
            print(f"  {kind}/{software}: no straight loop found")
            continue
        body = max(loops, key=lambda b: sum("MUFU" in x for _, x in b))
        ops = [x.split()[0] if not x.startswith("@") else x.split()[1] for _, x in body]
        count = Counter(letter(op) for op in ops)
        pairs = 2 * count["H"]
        order = "".join(letter(op) for op in ops)
        runs = max(len(r) for r in re.split("M", order))  # longest stretch without MUFU
        print(f"  {kind}/{software} FMA-pipe pairs per 16: {len(ops)} instructions per iteration, "
              f"{pairs} pairs per lane: per pair {len(ops) / pairs:.2f} "
              f"(HMMA {count['H'] / pairs:.3f}, MUFU {count['M'] / pairs:.2f}, "
              f"FP32 {count['F'] / pairs:.2f}, LDS {count['L'] / pairs:.3f}, "
              f"other {count['o'] / pairs:.2f}); longest run without MUFU {runs}")
        print(f"    order: {order}")


if __name__ == "__main__":
    main()
