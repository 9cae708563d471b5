#!/usr/bin/env bash
# scripts/gpu/kit.sh: packs the host libraries plrun, plc and unit_tests load
# (Open MPI with its plugins, help files and launcher, OpenBLAS, libyaml, CUnit and
# their dependencies, not glibc, libstdc++ or CUDA) into .gpukit/deps.tar.xz,
# for a GPU machine that has CUDA but not these; scripts/gpu/check.sh unpacks
# it there (libraries under /opt/plcdeps/lib, Open MPI's plugin tree at its
# own path, never over an existing file).
set -eu
cd "$(dirname "$0")/../.."
kit=$(mktemp -d)
trap 'rm -rf "$kit"' EXIT
plugins=$(ls /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so /usr/lib/x86_64-linux-gnu/pmix2/lib/pmix/*.so 2>/dev/null || true)
mkdir -p "$kit/opt/plcdeps/lib" "$kit/usr/lib/x86_64-linux-gnu" "$kit/usr/share" "$kit/etc"
mpirun=$(readlink -f "$(command -v mpirun)")
for f in bin/plrun bin/plc bin/unit_tests "$mpirun" $plugins; do ldd "$f" | awk '/=>/ { print $3 }'; done | sort -u |
    grep -v '^/usr/local/cuda' | grep -vE '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so' |
    while read -r lib; do cp -L "$lib" "$kit/opt/plcdeps/lib/$(basename "$lib")"; done
mkdir -p "$kit/opt/plcdeps/bin" && cp -L "$mpirun" "$kit/opt/plcdeps/bin/mpirun" # 2 ranks on the one GPU
# Open MPI's plugins under /opt/plcdeps too: a machine with its own Open MPI
# at these paths keeps it there, and env.sh points ours at the copy
for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2; do [ -d $d ] && cp -a $d "$kit/usr/lib/x86_64-linux-gnu/"; done
cp -a /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 "$kit/opt/plcdeps/openmpi3"
for d in /usr/share/openmpi /usr/share/pmix; do [ -d $d ] && cp -a $d "$kit/usr/share/"; done
for d in /etc/openmpi /etc/pmix; do [ -d $d ] && cp -a $d "$kit/etc/"; done
mkdir -p .gpukit
tar -C "$kit" -cJf .gpukit/deps.tar.xz .
ls -la .gpukit/deps.tar.xz
