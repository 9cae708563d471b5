/* main.c: plrun, the runtime. Loads a plan, runs its steps on every rank,
 * reports loss, throughput and memory. See docs/runtime.md. */
#include <math.h>
#include <omp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/plan_io.h"
#include "common/tensors.h"
#include "plc/version.h"
#include "runtime/backend.h"
#include "runtime/checkpoint.h"
#include "runtime/hf_names.h"
#include "runtime/comm.h"
#include "runtime/data.h"
#include "runtime/executor.h"
#include "runtime/metrics.h"
#include "runtime/oracle_export.h"
#include "common/atomic_file.h"
#include "kernels/cpu/blas.h"
#include "runtime/plrun_args.h"
#include "runtime/proc_mem.h"
#include "runtime/trace.h"
#include "runtime/warm.h"

/* Exit status: 0 ok; 1 the input, the usage or the environment (options,
 * files, a diverged loss, a rank that stopped answering, a signal); 3 an
 * internal error (a bug of plrun). */
enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_INTERNAL = 3 };

/* SIGINT/SIGTERM: the step finishes, then plrun stops cleanly; a second
 * signal ends it at once */
static volatile sig_atomic_t stop_signal;
static void on_stop_signal(int sig)
{
    if (stop_signal) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    stop_signal = sig;
}

typedef struct plrun {
    plrun_args args;
    plc_comm comm;
    plc_arena arena;
    plc_plan plan;
    plc_backend *be;
    plc_data *data;
    plc_executor *x;
    plc_metrics_log log;
    int log_open;
    plc_trace trace;
    int trace_on;
    char oracle_metrics[4096];
    char resume_file[4096];   /* --resume, a directory resolved to its latest checkpoint */
    char last_ckpt[4096];     /* the last checkpoint written in this run, "" none */
    int64_t last_ckpt_step;
    double recent[10]; /* the last losses, for the closing line */
    int64_t nrecent;
    double time_sum;   /* step times after the first (warm-up), for the closing line */
    int64_t ntimed;
    char graph_mode[200];     /* step graphs: the setup line's words */
    char err[1024];
} plrun;

/* prints on rank 0 only (or every rank when `all`) */
static void say(const plrun *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const plrun *r, const char *fmt, ...)
{
    if (r->comm.rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

static void cleanup(plrun *r)
{
    if (r->log_open) plc_metrics_close(&r->log, r->err, sizeof r->err);
    plc_exec_destroy(r->x);
    if (r->be) r->be->ops->destroy(r->be);
    if (r->data) plc_data_close(r->data);
    plc_trace_free(&r->trace);
    plc_arena_free(&r->arena);
    plc_comm_finalize(&r->comm);
}

/* An error every rank hit the same way (plan, options): rank 0 says it,
 * all ranks leave cleanly. */
static int fail_all(plrun *r, int code)
{
    if (r->comm.rank == 0) fprintf(stderr, "plrun: error: %s\n", r->err);
    cleanup(r);
    return code;
}

/* An error of this rank alone: say it and take the job down, so that no
 * other rank waits for it forever. */
static void note_kept_checkpoint(plrun *r);
static int fail_rank(plrun *r, int code)
{
    fprintf(stderr, "plrun: error: %s\n", r->err);
    note_kept_checkpoint(r);
    fflush(stderr);
    if (r->comm.use_mpi && r->comm.size > 1) plc_comm_abort(&r->comm, code);
    cleanup(r);
    return code;
}

/* Every rank's outcome of a step that may fail on some ranks only: the
 * lowest failing rank says why; nonzero on every rank when any failed. */
static int any_failed(plrun *r, int rc)
{
    double v = rc ? (double)(r->comm.size - r->comm.rank) : 0.0;
    if (plc_comm_max_f64(&r->comm, &v, 1)) {
        fprintf(stderr, "plrun: error: rank %d: %s\n", r->comm.rank, r->comm.error);
        plc_comm_abort(&r->comm, EXIT_INPUT);
    }
    if (v == 0) return 0;
    if (r->comm.size - (int)v == r->comm.rank) fprintf(stderr, "plrun: error: %s\n", r->err);
    return 1;
}

/* says which checkpoint a failure belongs to */
static int checkpoint_failed(plrun *r, int64_t step)
{
    char msg[sizeof r->err];
    snprintf(msg, sizeof msg, "%s", r->err);
    plc_fail(r->err, sizeof r->err, "%s (writing the checkpoint of step %lld)", msg, (long long)step);
    return -1;
}

/* the checkpoints asked for at this point: into --checkpoint-dir, and at the
 * end (or a stop) into --checkpoint FILE and --export-hf DIR */
static int save_checkpoints(plrun *r, int final)
{
    plrun_args *a = &r->args;
    const int64_t step = plc_exec_next_step(r->x);
    char path[sizeof r->last_ckpt];
    if (a->checkpoint_dir && !(r->last_ckpt[0] && r->last_ckpt_step == step)) {
        if (plc_ckpt_save_dir(r->x, &r->comm, &r->plan, a->checkpoint_dir, a->checkpoint_keep, path, sizeof path,
                              r->err, sizeof r->err))
            return checkpoint_failed(r, step);
        memcpy(r->last_ckpt, path, sizeof path);
        r->last_ckpt_step = step;
        say(r, "checkpoint: %s (step %lld)\n", r->last_ckpt, (long long)step);
    }
    if (final && a->checkpoint_path) {
        if (plc_ckpt_save(r->x, &r->comm, &r->plan, a->checkpoint_path, 1, r->err, sizeof r->err))
            return checkpoint_failed(r, step);
        snprintf(r->last_ckpt, sizeof r->last_ckpt, "%s", a->checkpoint_path);
        r->last_ckpt_step = step;
        say(r, "checkpoint: %s (step %lld)\n", a->checkpoint_path, (long long)step);
    }
    if (final && a->export_hf_dir) {
        if (plc_ckpt_export_hf(r->x, &r->comm, &r->plan, a->export_hf_dir, r->err, sizeof r->err))
            return checkpoint_failed(r, step);
        say(r, "Hugging Face checkpoint: %s/model.safetensors, %s/config.json (step %lld)\n", a->export_hf_dir,
            a->export_hf_dir, (long long)step);
    }
    return 0;
}

/* what is kept after a failure, for the closing message */
static void note_kept_checkpoint(plrun *r)
{
    if (r->comm.rank != 0) return;
    if (r->last_ckpt[0])
        fprintf(stderr, "plrun: the last checkpoint, %s (step %lld), is intact; resume with --resume %s\n",
                r->last_ckpt, (long long)r->last_ckpt_step,
                r->args.checkpoint_dir ? r->args.checkpoint_dir : r->last_ckpt);
    else if (r->args.checkpoint_dir || r->args.checkpoint_path)
        fprintf(stderr, "plrun: no checkpoint was written in this run\n");
}

/* A checkpoint that could not be written: every rank agreed on it (rank 0
 * says why), unless a rank stopped answering: then the job ends now. */
static int fail_checkpoint(plrun *r)
{
    if (r->comm.timed_out) return fail_rank(r, EXIT_INPUT);
    if (r->comm.rank == 0) fprintf(stderr, "plrun: error: %s\n", r->err);
    note_kept_checkpoint(r);
    cleanup(r);
    return EXIT_INPUT;
}

/* Model FLOPs per token for forward + backward (3x forward): the matmuls
 * of every weight (lm_head, or the tied embedding as head) and causal
 * attention's QK^T and PV. */
static double model_flops_per_token(const plc_model *m)
{
    double n = (double)plc_model_param_count(m) - (double)(m->vocab * m->hidden); /* lookup is free */
    n += (double)(m->vocab * m->hidden) * (m->tie_embeddings ? 1 : 0);
    double attn = 2.0 * (double)m->layers * (double)m->seq_len * (double)m->hidden; /* causal half */
    return 3.0 * (2.0 * n + attn);
}

static int run_steps(plrun *r, int64_t total)
{
    const plc_plan *plan = &r->plan;
    const double tokens = (double)plan->train.global_batch * (double)plan->model.seq_len;
    const double flops_tok = model_flops_per_token(&plan->model);
    for (int64_t s = plc_exec_next_step(r->x); s < total; s++) {
        plc_step_stats st;
        if (plc_exec_step(r->x, &st, r->err, sizeof r->err)) {
            /* a watchdog timeout or a failed transfer: this rank's message, and
             * the job ends here (the peers may be waiting for it) */
            return fail_rank(r, r->comm.timed_out ? EXIT_INPUT : EXIT_INTERNAL);
        }
        if (st.nonfinite_rank >= 0 || !isfinite(st.loss) || (r->plan.train.grad_clip > 0 && !isfinite(st.grad_norm))) {
            /* the state is poisoned: no checkpoint from it */
            if (st.nonfinite_rank == r->comm.rank)
                fprintf(stderr, "plrun: error: %s: training diverged (try a lower train.lr.peak or a "
                                "train.grad_clip)\n",
                        plc_exec_nonfinite(r->x));
            else if (st.nonfinite_rank < 0 && r->comm.rank == 0)
                fprintf(stderr, "plrun: error: the loss is %g and the gradient norm %g at step %lld: training "
                                "diverged\n",
                        st.loss, st.grad_norm, (long long)s);
            if (r->comm.rank == 0) fprintf(stderr, "plrun: no checkpoint written from this state\n");
            note_kept_checkpoint(r);
            cleanup(r);
            return EXIT_INPUT;
        }
        if (r->args.oracle_dir && s == 0 &&
            plc_oracle_after_first_step(r->args.oracle_dir, r->x, &r->comm, plan, r->err, sizeof r->err))
            return fail_rank(r, EXIT_INTERNAL);
        r->recent[r->nrecent++ % 10] = st.loss;
        if (r->nrecent > 1) {
            r->time_sum += st.step_time_s;
            r->ntimed++;
        }
        if (r->comm.rank == 0) {
            plc_step_metrics m = {st.step, st.loss, st.lr, st.grad_norm,
                                  tokens / st.step_time_s, flops_tok * tokens / st.step_time_s,
                                  st.step_time_s, plan->model.moe.experts > 0 && plan->model.moe.capacity_factor > 0,
                                  st.moe_dropped};
            if (plc_metrics_step(&r->log, &m, r->err, sizeof r->err)) return fail_rank(r, EXIT_INPUT);
        }
        /* a signal on any rank stops every rank after the same step */
        double stop = stop_signal;
        r->comm.watch_instr = -2; /* under the watchdog, as the step's own reductions */
        int src = plc_comm_max_f64(&r->comm, &stop, 1);
        r->comm.watch_instr = -1;
        if (src) {
            snprintf(r->err, sizeof r->err, "rank %d: after step %lld: %s", r->comm.rank, (long long)s,
                     r->comm.error);
            return fail_rank(r, EXIT_INPUT);
        }
        if (stop != 0) {
            say(r, "plrun: stopped by %s after step %lld of %lld\n", (int)stop == SIGINT ? "SIGINT" : "SIGTERM",
                (long long)s + 1, (long long)total);
            if (save_checkpoints(r, 1)) return fail_checkpoint(r);
            note_kept_checkpoint(r);
            cleanup(r);
            return EXIT_INPUT;
        }
        const int64_t done = s + 1;
        if (r->args.checkpoint_every && done % r->args.checkpoint_every == 0 && done < total &&
            save_checkpoints(r, 0))
            return fail_checkpoint(r);
    }
    return EXIT_OK;
}

/* The plan's data source, opened on this rank: a token file is found as
 * docs/data.md says (--data-root, else beside the plan, else the working
 * directory) and checked against the plan's record of it, its size on every
 * rank and its CRC-32 on the first rank of each node (the node's ranks read
 * the same file). Collective: every rank calls it. 0, or -1 with r->err. */
static int open_data(plrun *r)
{
    const plc_plan *plan = &r->plan;
    int index;
    plc_comm_node(&r->comm, &index);
    if (!plan->train.data_path)
        return plc_data_open_synthetic(&r->data, &plan->model, plan->train.seed, r->err, sizeof r->err);
    char path[4096];
    if (plc_data_locate(plan->train.data_path, r->args.plan_path, r->args.data_root, path, sizeof path, r->err,
                        sizeof r->err))
        return -1;
    if (plc_data_check_record(path, &plan->train, index == 0, r->err, sizeof r->err)) return -1;
    return plc_data_open_file(&r->data, path, &plan->model, plan->train.seed, r->err, sizeof r->err);
}

/* Every output (metrics, trace, checkpoints) is checked before the first
 * step, on rank 0 which writes them: a bad path fails now, not after the run. */
static int check_outputs(plrun *r)
{
    const plrun_args *a = &r->args;
    if (r->comm.rank != 0) return 0;
    if (a->trace_path && plc_check_output_file("--trace", a->trace_path, r->err, sizeof r->err)) return -1;
    if (a->checkpoint_path && plc_check_output_file("--checkpoint", a->checkpoint_path, r->err, sizeof r->err))
        return -1;
    if (a->checkpoint_dir && plc_prepare_output_dir("--checkpoint-dir", a->checkpoint_dir, r->err, sizeof r->err))
        return -1;
    if (a->export_hf_dir) {
        char why[400];
        if (plc_hf_supported(&r->plan.model, why, sizeof why))
            return plc_fail(r->err, sizeof r->err, "--export-hf %s: %s", a->export_hf_dir, why);
        if (plc_prepare_output_dir("--export-hf", a->export_hf_dir, r->err, sizeof r->err)) return -1;
    }
    if (a->metrics_path) {
        struct stat st;
        if (stat(a->metrics_path, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(r->err, sizeof r->err, "--metrics %s: is a directory; give a file name", a->metrics_path);
            return -1;
        }
    }
    return 0;
}

/* What the runtime measured of its own memory (docs/runtime.md, Reports).
 * The fixed costs: the resident set before the arena (process, MPI, the
 * libraries and their warmed-up workspaces, the plan), the peak the dry
 * communication step reached beyond the arena (MPI's workspaces for this
 * plan's messages, some of them freed after each transfer),
 * and the code first run after the baseline (file-backed pages: never the
 * plan's buffers, which are anonymous memory). */
typedef struct mem_marks {
    double before_arena, with_arena, warmed; /* warmed: the dry step's peak */
    double code_warmed; /* RssFile at the baseline */
    int peak_reset;     /* VmHWM was reset after the warm-up */
    double dev_before;  /* device backends: device memory in use before the arena, -1 unknown */
} mem_marks;

enum { MEM_ARENA, MEM_USED, MEM_PROCESS, MEM_COMM, MEM_CODE, MEM_N };

/* A device backend's arena is device memory, which the process's resident
 * set does not show: the device's memory in use at the end, less what was
 * in use before the arena (the context, the libraries' handles), against
 * the plan. The difference is what the libraries allocated on first use
 * (matmul workspaces, collective buffers). */
static void report_device_memory(plrun *r, const mem_marks *m)
{
    double mine[3] = {(double)plc_exec_program(r->x)->arena_bytes, -1, m->dev_before};
    double now = 0;
    if (m->dev_before >= 0 && r->be->ops->device_memory(r->be, &now) == 0) mine[1] = now - m->dev_before;
    double *all = r->comm.rank == 0 ? calloc((size_t)r->comm.size * 3, sizeof *all) : NULL;
    double dummy[3];
    plc_comm_gather_f64(&r->comm, mine, 3, all ? all : dummy);
    if (!all) return;
    const double MiB = 1024.0 * 1024.0;
    printf("device memory per rank (MiB): planned arena | in use at the end - before the arena | difference | "
           "in use before the arena (context, libraries)\n");
    for (int i = 0; i < r->comm.size; i++) {
        const double *v = all + 3 * i;
        if (v[1] < 0 || v[2] < 0) {
            printf("  rank %-3d %10.2f | not measured (%s)\n", i, v[0] / MiB, r->be->error);
            continue;
        }
        printf("  rank %-3d %10.2f | %10.2f | %+6.1f%% | %8.2f\n", i, v[0] / MiB, v[1] / MiB,
               v[0] > 0 ? 100.0 * (v[1] - v[0]) / v[0] : 0.0, v[2] / MiB);
    }
    if (r->plan.pred.peak_bytes_estimate > 0)
        printf("  solver's estimate for the most loaded rank: %.2f MiB\n", r->plan.pred.peak_bytes_estimate / MiB);
    fflush(stdout);
    free(all);
}

static void report_memory(plrun *r, const mem_marks *m)
{
    if (r->be->ops->device_memory) {
        report_device_memory(r, m);
        return;
    }
    const plc_program *p = plc_exec_program(r->x);
    double mine[MEM_N];
    mine[MEM_ARENA] = (double)p->arena_bytes;
    mine[MEM_PROCESS] = m->before_arena;
    mine[MEM_COMM] = m->warmed - m->with_arena;
    mine[MEM_CODE] = plc_proc_rss_file_bytes() - m->code_warmed;
    mine[MEM_USED] = plc_proc_peak_bytes() - (mine[MEM_PROCESS] + mine[MEM_COMM] + mine[MEM_CODE]);
    double *all = r->comm.rank == 0 ? calloc((size_t)r->comm.size * MEM_N, sizeof *all) : NULL;
    double dummy[MEM_N];
    plc_comm_gather_f64(&r->comm, mine, MEM_N, all ? all : dummy);
    if (!all) return;
    const double MiB = 1024.0 * 1024.0;
    printf("memory per rank (MiB): planned arena | measured peak - fixed costs | difference | fixed costs "
           "(process + MPI workspaces + code)\n");
    double most = 0, worst = 0;
    for (int i = 0; i < r->comm.size; i++) {
        const double *v = all + MEM_N * i;
        const double fixed = v[MEM_PROCESS] + v[MEM_COMM] + v[MEM_CODE];
        const double diff = v[MEM_ARENA] > 0 ? (v[MEM_USED] - v[MEM_ARENA]) / v[MEM_ARENA] : 0;
        printf("  rank %-3d %10.2f | %10.2f | %+6.1f%% | %8.2f (%.2f + %.2f + %.2f)\n", i, v[MEM_ARENA] / MiB,
               v[MEM_USED] / MiB, 100.0 * diff, fixed / MiB, v[MEM_PROCESS] / MiB, v[MEM_COMM] / MiB,
               v[MEM_CODE] / MiB);
        if (fixed > most) most = fixed;
        if (fabs(diff) > fabs(worst)) worst = diff;
    }
    printf("runtime fixed costs measured: %.2f MiB on the most loaded rank; the peak beyond them is within "
           "%.1f%% of the planned arena on every rank%s\n",
           most / MiB, 100.0 * fabs(worst), m->peak_reset ? "" : " (the peak includes the warm-up)");
    if (r->trace_on)
        printf("  --trace: its event buffer (%.2f MiB on rank 0) is in the peak\n",
               (double)(r->trace.cap * sizeof *r->trace.ev) / MiB);
    if (r->plan.pred.peak_bytes_estimate > 0)
        printf("  solver's estimate for the most loaded rank: %.2f MiB\n", r->plan.pred.peak_bytes_estimate / MiB);
    fflush(stdout);
    free(all);
}

/* OpenMP threads that wait at a barrier spin by default (libgomp's active
 * policy), which on a shared, oversubscribed machine takes the core from
 * the very thread they wait for: a 2-thread step ran 5x slower than with
 * sleeping waits there. So plrun waits passively unless the environment
 * says otherwise. libgomp reads OMP_WAIT_POLICY when it is loaded, before
 * main: the variable is set and plrun started again, once (it is set the
 * second time); if that fails plrun goes on as it is. */
static void passive_omp_waits(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
    execv("/proc/self/exe", argv);
}

/* Temporaries of a step that are freed within it: the CPU kernels'
 * scratch (attention's backward takes 193 KiB per call on tiny.plan) and,
 * where MPI has no persistent collectives, Open MPI's nonblocking
 * allreduce's buffer of the message's size at each call. Once glibc has
 * raised its threshold (the warm-up's buffers, the first such block
 * freed), those come from the heap, at addresses that move as the order of
 * allocations and frees changes from step to step, and leave pages
 * resident that the baseline never saw: 0.2 to 0.5 MiB on `make run`'s
 * 8 MiB arena, a rank 5 to 6% over the plan. Blocks from 64 KiB up are
 * mapped on their own instead, and leave the resident set when freed. If
 * the allocator has no such setting plrun goes on as it is. */
enum { UNMAP_FREED_FROM = 64 * 1024 };

/* The plan loaded and checked against this run's options, MPI's groups set
 * up, the outputs checked and the thread count settled: EXIT_OK, or the
 * exit status after the error was said. */
static int load_plan(plrun *r)
{
    plrun_args *a = &r->args;
    plc_plan *plan = &r->plan;
    char msg[900];
    if (plc_plan_load_file(&r->arena, a->plan_path, plan, msg, sizeof msg)) {
        snprintf(r->err, sizeof r->err, "%s", msg);
        return fail_all(r, EXIT_INPUT);
    }
    if (plc_comm_setup(&r->comm, plan, r->err, sizeof r->err)) return fail_all(r, EXIT_INPUT);
    /* the watchdog's deadline: a multiple of the predicted step time */
    r->comm.deadline_s = a->timeout_s >= 0 ? a->timeout_s : fmax(30.0, 10.0 * plan->pred.step_time_s);
    for (int i = 0; i < a->nallow_changed; i++)
        if (!plc_ckpt_setting_known(a->allow_changed[i])) {
            char list[1024];
            plc_ckpt_settings_list(list, sizeof list);
            plc_fail(r->err, sizeof r->err, "--allow-changed %s: not a setting a resume compares; those are: %s",
                     a->allow_changed[i], list);
            return fail_all(r, EXIT_INPUT);
        }
    if (a->nallow_changed && !a->resume_path) {
        snprintf(r->err, sizeof r->err, "--allow-changed is for --resume");
        return fail_all(r, EXIT_INPUT);
    }
    if (any_failed(r, check_outputs(r))) {
        cleanup(r);
        return EXIT_INPUT;
    }
    if (a->threads == 0 && !getenv("OMP_NUM_THREADS")) {
        /* the node's cores shared by its ranks: oversubscribed OpenMP
         * threads spin against each other and run many times slower */
        int index, per_rank = omp_get_num_procs() / plc_comm_node(&r->comm, &index);
        a->threads = per_rank > 0 ? per_rank : 1;
    }
    return EXIT_OK;
}

/* The backend, the data, the arena and the transfers warmed, then the
 * weights initialised or a checkpoint loaded; marks records the resident
 * memory at each point and setup the time (start, backend up, arena up,
 * weights in). EXIT_OK, or the exit status after the error was said. */
static int bring_up(plrun *r, mem_marks *marks, double setup[4])
{
    plrun_args *a = &r->args;
    plc_plan *plan = &r->plan;
    setup[0] = plc_trace_now();
    r->be = plc_backend_create(a->backend, &r->comm, a->threads, plan, r->err, sizeof r->err);
    if (!r->be) return fail_all(r, EXIT_INPUT);
    if (any_failed(r, open_data(r))) {
        cleanup(r);
        return EXIT_INPUT;
    }

    /* The baseline: the runtime's fixed costs in place (the host libraries'
     * workspaces, then MPI's for this plan's messages), the arena apart. */
    if (strcmp(r->be->ops->name, "cpu") == 0 && plc_warm_host_libraries()) {
        snprintf(r->err, sizeof r->err, "out of memory while warming up OpenBLAS");
        return fail_all(r, EXIT_INPUT);
    }
    marks->before_arena = plc_proc_rss_bytes();
    marks->dev_before = -1;
    if (r->be->ops->device_memory && r->be->ops->device_memory(r->be, &marks->dev_before)) marks->dev_before = -1;
    setup[1] = plc_trace_now();
    if (plc_exec_create(&r->x, plan, &r->comm, r->be, r->data, r->err, sizeof r->err)) return fail_all(r, EXIT_INPUT);
    if (r->args.trace_path) snprintf(r->graph_mode, sizeof r->graph_mode, "eager (--trace)");
    else if (plc_exec_set_graphs(r->x, !r->args.no_graph, r->graph_mode, sizeof r->graph_mode, r->err, sizeof r->err))
        return fail_all(r, EXIT_INPUT);
    marks->with_arena = plc_proc_rss_bytes();
    /* MPI's workspaces: its peak during the transfers (some are freed after each) */
    const int peak_from_arena = plc_proc_reset_peak() == 0;
    if (plc_exec_warm_comm(r->x, r->err, sizeof r->err))
        return fail_rank(r, r->comm.timed_out ? EXIT_INPUT : EXIT_INTERNAL);
    setup[2] = plc_trace_now();
    marks->warmed = peak_from_arena ? plc_proc_peak_bytes() : plc_proc_rss_bytes();
    marks->code_warmed = plc_proc_rss_file_bytes();
    marks->peak_reset = plc_proc_reset_peak() == 0;
    if (a->resume_path) {
        int rc = plc_ckpt_resolve(a->resume_path, r->resume_file, sizeof r->resume_file, r->err, sizeof r->err);
        if (!rc)
            rc = plc_ckpt_load(r->x, &r->comm, plan, r->resume_file, a->allow_changed, a->nallow_changed, r->err,
                               sizeof r->err);
        if (any_failed(r, rc)) {
            cleanup(r);
            return EXIT_INPUT;
        }
    } else if (a->init_from) {
        char msg[sizeof r->err - 64];
        int rc = plc_ckpt_load_hf(r->x, &r->comm, plan, a->init_from, msg, sizeof msg);
        if (rc) plc_fail(r->err, sizeof r->err, "--init-from %s", msg);
        if (any_failed(r, rc)) {
            cleanup(r);
            return EXIT_INPUT;
        }
    } else if (plc_exec_init_weights(r->x, r->err, sizeof r->err)) {
        return fail_all(r, EXIT_INPUT);
    }
    setup[3] = plc_trace_now();
    return EXIT_OK;
}

/* A resumed checkpoint at or past the step the run ends at (total: --steps
 * or train.steps) is an error. */
static int check_resume_point(plrun *r, int64_t total)
{
    plrun_args *a = &r->args;
    if (a->resume_path && plc_exec_next_step(r->x) >= total) {
        plc_fail(r->err, sizeof r->err,
                 "nothing to run: the checkpoint %s is at step %lld and this run ends at step %lld (%s); "
                 "give --steps N with N > %lld to train further",
                 r->resume_file, (long long)plc_exec_next_step(r->x), (long long)total,
                 a->steps >= 0 ? "--steps" : "train.steps", (long long)plc_exec_next_step(r->x));
        return fail_all(r, EXIT_INPUT);
    }
    return EXIT_OK;
}

/* The lines that open a run: the plan, the layout, the data, the setup's
 * times (rank 0 says them). */
static void announce(plrun *r, const char *gemm, const double setup[4])
{
    plrun_args *a = &r->args;
    plc_plan *plan = &r->plan;
    if (a->steps > plan->train.steps && r->comm.rank == 0)
        fprintf(stderr, "plrun: warning: --steps %lld runs past the spec's train.steps = %lld: the learning rate stays at "
                        "lr.floor (%g) from step %lld (lr.decay_steps) on\n",
                (long long)a->steps, (long long)plan->train.steps, plan->train.lr_floor, (long long)plan->train.decay_steps);
    const plc_layout *l = &plan->layout;
    say(r, "plrun %s: %s, model '%s' (%lld parameters), backend %s%s%s%s, %d rank%s\n", PLC_VERSION,
        a->plan_path, plan->model.name, (long long)plc_model_param_count(&plan->model), a->backend,
        gemm ? " (sgemm: " : "", gemm ? gemm : "", gemm ? ")" : "",
        r->comm.size, r->comm.size == 1 ? "" : "s");
    char ltext[512];
    say(r, "layout: %s; global batch %lld x %lld tokens\n", plc_layout_text(l, ltext, sizeof ltext),
        (long long)plan->train.global_batch, (long long)plan->model.seq_len);
    if (strcmp(a->backend, "cpu")) say(r, "step: %s\n", r->graph_mode);
    say(r, "data: %s\n", plc_data_describe(r->data));
    say(r, "setup: %.2f s (backend and data %.2f, arena and transfers warmed %.2f, %s %.2f)\n", setup[3] - setup[0],
        setup[1] - setup[0], setup[2] - setup[1], a->resume_path || a->init_from ? "checkpoint" : "weights", setup[3] - setup[2]);
    if (a->init_from) say(r, "weights from the Hugging Face checkpoint %s\n", a->init_from);
    if (a->resume_path)
        say(r, "resumed from %s at step %lld\n", r->resume_file, (long long)plc_exec_next_step(r->x));
}

/* The run's outputs opened: the oracle export, the metrics (rank 0), the
 * stop signals' handler and the trace. */
static int open_outputs(plrun *r, int64_t total)
{
    plrun_args *a = &r->args;
    plc_plan *plan = &r->plan;
    if (a->oracle_dir) {
        if (plc_oracle_begin(a->oracle_dir, r->x, &r->comm, plan, r->data, total, r->err, sizeof r->err))
            return fail_all(r, EXIT_INPUT);
        if (!a->metrics_path) { /* the oracle compares plrun's metrics */
            snprintf(r->oracle_metrics, sizeof r->oracle_metrics, "%s/metrics.jsonl", a->oracle_dir);
            a->metrics_path = r->oracle_metrics;
        }
    }
    int mrc = 0;
    if (r->comm.rank == 0) {
        mrc = plc_metrics_open_default(&r->log, a->metrics_path, total, r->err, sizeof r->err);
        r->log_open = mrc == 0;
    }
    if (any_failed(r, mrc)) {
        cleanup(r);
        return EXIT_INPUT;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (a->trace_path) {
        plc_comm_barrier(&r->comm); /* common origin for every rank's events */
        plc_trace_init(&r->trace, (size_t)1 << 22);
        plc_exec_set_trace(r->x, &r->trace);
        r->trace_on = 1;
    }
    return EXIT_OK;
}

/* After the last step: the final checkpoint, the metrics and the trace
 * closed, the closing lines (loss against the source's floor, step time,
 * memory). */
static int finish(plrun *r, const mem_marks *marks)
{
    plrun_args *a = &r->args;
    plc_plan *plan = &r->plan;
    if (save_checkpoints(r, 1)) return fail_checkpoint(r);
    if (r->log_open) {
        r->log_open = 0;
        if (plc_metrics_close(&r->log, r->err, sizeof r->err)) return fail_rank(r, EXIT_INPUT);
    }
    if (r->trace_on) {
        int trc = plc_trace_write(&r->trace, &r->comm, plan, a->trace_path, r->err, sizeof r->err);
        if (any_failed(r, trc)) {
            cleanup(r);
            return EXIT_INPUT;
        }
        say(r, "trace: %s (%zu events on rank 0)\n", a->trace_path, r->trace.n);
    }
    if (a->oracle_dir) say(r, "oracle export: %s\n", a->oracle_dir);
    double floor_nats = plc_data_entropy_rate(r->data);
    if (r->nrecent > 0 && isfinite(floor_nats)) {
        int n = r->nrecent < 10 ? (int)r->nrecent : 10;
        double mean = 0;
        for (int i = 0; i < n; i++) mean += r->recent[i] / n;
        say(r, "loss: mean of the last %d steps %.4f, the source's entropy rate %.4f (%+.4f nats)\n", n,
            mean, floor_nats, mean - floor_nats);
    }
    if (r->ntimed > 0)
        say(r, "time: mean step %.4f s measured (after the first step), %.4f s predicted by plc\n",
            r->time_sum / (double)r->ntimed, plan->pred.step_time_s);
    report_memory(r, marks);
    cleanup(r);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    passive_omp_waits(argv);
    (void)plc_proc_unmap_large_frees(UNMAP_FREED_FROM);
    static plrun run;
    plrun *r = &run;
    plc_arena_init(&r->arena);
    if (plrun_parse_args(argc, argv, &r->args, r->err, sizeof r->err)) {
        fprintf(stderr, "plrun: error: %s\n", r->err);
        return EXIT_INPUT;
    }
    if (r->args.help) { plrun_usage(stdout); return EXIT_OK; }
    if (r->args.version) { printf("plrun %s\n", PLC_VERSION); return EXIT_OK; }

    if (plc_comm_world_init(&r->comm, argc, argv, r->err, sizeof r->err)) {
        fprintf(stderr, "plrun: error: %s\n", r->err);
        return EXIT_INTERNAL;
    }
    /* out of memory in a library: PLC_E_SYSTEM comes back here (plc/arena.h);
     * the trap is set in main, whose frame outlives every helper below */
    static plc_oom_trap oom;
    if (setjmp(oom.at)) {
        plc_fail(r->err, sizeof r->err, "rank %d: out of memory while %s (%zu bytes more were needed)", r->comm.rank,
                 oom.doing, oom.bytes);
        return fail_rank(r, EXIT_INPUT);
    }
    plc_oom_set_trap(&oom);
    plc_oom_doing("loading the plan");
    int rc = load_plan(r);
    if (rc != EXIT_OK) return rc;
    const char *gemm = strcmp(r->args.backend, "cpu") == 0 ? plc_gemm_name() : NULL;
    double setup[4] = {0};
    mem_marks marks = {0};
    rc = bring_up(r, &marks, setup);
    if (rc != EXIT_OK) return rc;
    const int64_t total = r->args.steps >= 0 ? r->args.steps : r->plan.train.steps;
    rc = check_resume_point(r, total);
    if (rc != EXIT_OK) return rc;
    announce(r, gemm, setup);
    rc = open_outputs(r, total);
    if (rc != EXIT_OK) return rc;

    rc = run_steps(r, total);
    if (rc != EXIT_OK) return rc;
    return finish(r, &marks);
}
