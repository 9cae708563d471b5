/* warm.h: puts the host libraries' lazily allocated workspaces in place, so
 * that plrun's baseline includes them (docs/runtime.md, Reports). */
#ifndef PLC_RUNTIME_WARM_H
#define PLC_RUNTIME_WARM_H

/* For the CPU backend, from the main thread before the arena: starts the
 * OpenMP team the kernels use (the threads' stacks) and has every thread
 * run one single-threaded OpenBLAS GEMM of the CPU kernels' largest panel,
 * which touches that thread's packing buffers as far as any kernel call
 * reaches. Its own matrices are freed before it returns. 0, or -1 when
 * memory for them ran out. */
int plc_warm_host_libraries(void);

#endif
