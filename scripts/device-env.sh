# Sourced by the scripts that run on the device machine: where the carried files are (.carry/
# from scripts/gpu-bundle.sh), where results go ($OUT, which the device tool returns), and a
# scratch folder.
set -uo pipefail
C=.carry
B=$C/bcuda
DEV=$C/bcuda-dev  # the development tools (synth-genome, stack-profile, gpu-bench)
OUT=${OUT:-gpu-out}
W=${W:-$(mktemp -d)}
mkdir -p "$W"
mkdir -p "$OUT"
