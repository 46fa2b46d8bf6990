# Sourced by the scripts that run on the CUDA host: where the bundled files are (bundle/
# from scripts/gpu-bundle.sh), where results go ($OUT, default gpu-out/), and a scratch folder.
set -uo pipefail
C=bundle
B=$C/bcuda
DEV=$C/bcuda-dev  # the development tools (synth-genome, stack-profile, gpu-bench, variant-tuned)
OUT=${OUT:-gpu-out}
W=${W:-$(mktemp -d)}
mkdir -p "$W"
mkdir -p "$OUT"
