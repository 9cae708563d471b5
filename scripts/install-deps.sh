#!/usr/bin/env bash
# Installs what plc needs on Debian (12 or later): the build tools, the
# libraries, Open MPI, OpenBLAS, Debian's PyTorch for the oracle test, and
# clang with libFuzzer and valgrind for the robustness tests, and Slurm
# with munge for the srun launch test (about 13 MB installed).
# Run as root, or through sudo; prints the command to run otherwise.
set -euo pipefail
packages=(
    build-essential pkg-config flex bison
    libyaml-dev libcunit1-dev
    libopenmpi-dev openmpi-bin
    libopenblas-dev
    python3 python3-numpy python3-yaml python3-torch
    clang libfuzzer-14-dev valgrind
    slurmd slurmctld slurm-client munge
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: everything is installed"
    exit 0
fi
echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
    else
        echo "install-deps: not root and no sudo; as root, run:" >&2
        echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
else
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi
