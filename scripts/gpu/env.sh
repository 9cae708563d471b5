# scripts/gpu/env.sh: sourced by the GPU scripts from the repository root.
# Unpacks scripts/gpu/kit.sh's host libraries where the machine lacks them and
# points the loader at them and at the machine's cuBLAS, NCCL and CUDA runtime.
if [ -f .gpukit/deps.tar.xz ]; then
    tar -C / --skip-old-files -xJf .gpukit/deps.tar.xz || echo "kit: unpack failed" >&2
    export LD_LIBRARY_PATH=/opt/plcdeps/lib PATH=/opt/plcdeps/bin:$PATH \
        OMPI_MCA_mca_base_component_path=/opt/plcdeps/openmpi3
fi
for lib in libcublas.so.13 libnccl.so.2 libcudart.so.13; do
    d=$(ls -d /usr/local/cuda/lib64/$lib /usr/local/cuda/targets/x86_64-linux/lib/$lib 2>/dev/null | head -n 1)
    [ -n "$d" ] || d=$(find / -xdev -name "$lib" -not -path '*/proc/*' 2>/dev/null | head -n 1)
    [ -n "$d" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(dirname "$d")"
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader \
    OMPI_MCA_btl_vader_single_copy_mechanism=none
