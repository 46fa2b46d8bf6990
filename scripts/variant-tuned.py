#!/usr/bin/env python3
"""Installs a hand-edited variant of cuda/inexact_match.cu as this GPU's tuned kernels, so that
`bcuda aln` runs it and `bcuda aln --no-tuned` the unmodified kernels: an A/B of a kernel
change on a CUDA host without rebuilding the binary (bench/human-like.sh VARIANT=...).

    python3 scripts/variant-tuned.py VARIANT.cu [--device NAME --cc 9.0] [-o FILE]

The file is what `bcuda autotune` saves (src/autotune_cmd.rs, `Tuned`): the default switches,
exact_match's source unchanged, the variant as the inexact kernels' source, and the
fingerprint (FNV-1a, `kernels_id`) of this checkout's cuda/ sources, which must be those the
binary was built from (aln refuses the file otherwise). Without --device, nvidia-smi names
the GPU; the file goes where aln looks for it unless -o says otherwise, and its path is
printed (remove it after the A/B)."""
import argparse, json, os, re, subprocess, sys

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cuda")
read = lambda name: open(os.path.join(here, name), encoding="utf-8").read()


def kernels_id(sources):
    h = 0xCBF29CE484222325
    for text in sources:
        for b in text.encode() + b"\0":
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


p = argparse.ArgumentParser()
p.add_argument("variant")
p.add_argument("--device")
p.add_argument("--cc")
p.add_argument("-o", "--output")
a = p.parse_args()
if not a.device or not a.cc:
    out = subprocess.run(["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader", "-i", "0"], capture_output=True, text=True, check=True).stdout
    a.device, a.cc = [x.strip() for x in out.strip().split(",")]
major, minor = (int(x) for x in a.cc.split("."))
exact = read("exact_match.cu")
tuned = {
    "device": a.device,
    "compute_capability": [major, minor],
    "switches": [],
    "source": exact,
    "inexact_source": open(a.variant, encoding="utf-8").read(),
    "speedup": 1.0,
    "genome": {"switches": [], "patches": [], "inexact_patches": []},
    "kernels": kernels_id([read("bwt.cuh"), exact, read("inexact_match.cu")]),
}
if a.output:
    path = a.output
else:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.environ["HOME"], ".cache")
    name = re.sub(r"[^A-Za-z0-9]", "_", a.device)
    path = os.path.join(cache, "bcuda", "tuned", f"{name}-sm{major}{minor}.json")
os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
with open(path, "w", encoding="utf-8") as f:
    json.dump(tuned, f)
print(f"{a.variant} installed as the tuned kernels of {a.device} (sm_{major}{minor}): {path}", file=sys.stderr)
print(path)
