/* plan_svg.c: plc trace --svg (see plantools.h). Events arrive from the
 * simulation one instruction at a time; a rank's timeline has tens of
 * thousands of them, far more than pixels. So each row is binned: every
 * pixel column accumulates the time of each kind in it, a column more than
 * half busy takes its largest kind's colour (else it is idle), and runs of
 * one colour become one rectangle. The picture stays small and readable at
 * 8 and at 64 ranks alike. */
#include "compiler/plantools/plantools_int.h"

#include <stdlib.h>
#include <string.h>


/* the kinds drawn, each with its colour and legend name, then idle time
 * (the background, the legend's last entry) */
typedef enum kind { K_FORWARD, K_BACKWARD, K_RECOMPUTE, K_COMM, K_OPTIMIZER, K_OTHER, K_WGRAD, K_COUNT } kind;
#define BUBBLE_COLOR "#f3ecc8"
static const char *const kind_color[K_COUNT + 1] = {"#4e79a7", "#f28e2b", "#b07aa1", "#e15759",
                                                    "#59a14f", "#9c9c9c", "#8c564b", BUBBLE_COLOR};
static const char *const kind_name[K_COUNT + 1] = {"forward",   "backward",           "recompute",
                                                   "communication", "optimizer", "other (data, loss)",
                                                   "weight gradients (W)", "idle (bubble, waiting)"};

static bool is_comm_op(plc_op op)
{
    return plc_op_comm(op) != PLC_COMM_NONE;
}

/* a layer's weight-gradient product (dW += X^T dY, a bias's column sums,
 * the embedding's and the positions' gradients): the W units of a
 * zero-bubble schedule's split backwards */
static bool is_wgrad(const plc_instr *in, int64_t layers)
{
    if (in->phase != PLC_PHASE_BACKWARD) return false;
    switch (in->op) {
    case PLC_OP_MATMUL: return in->layer >= 0 && in->layer < layers && in->arg[3] == 1;
    case PLC_OP_BIAS_BWD:
    case PLC_OP_EMBED_BWD:
    case PLC_OP_POS_BWD: return true;
    default: return false;
    }
}

static kind kind_of(const plc_instr *in, int64_t split_layers)
{
    if (is_comm_op(in->op)) return K_COMM;
    if (split_layers > 0 && is_wgrad(in, split_layers)) return K_WGRAD;
    switch (in->phase) {
    case PLC_PHASE_FORWARD: return K_FORWARD;
    case PLC_PHASE_BACKWARD: return K_BACKWARD;
    case PLC_PHASE_RECOMPUTE: return K_RECOMPUTE;
    case PLC_PHASE_GRAD_SYNC:
    case PLC_PHASE_OPTIMIZER: return K_OPTIMIZER;
    default: return K_OTHER;
    }
}

#define COLUMNS 1000 /* pixel columns of the time axis */

typedef struct drawer {
    int64_t *row_of_rank; /* world rank -> row */
    float *cover;         /* [rows][2 streams][COLUMNS][K_COUNT]: seconds of each kind */
    int64_t split_layers; /* a zero-bubble schedule: the model's layers (W drawn apart), else 0 */
    double bin;           /* seconds per column */
} drawer;

static void on_event(void *ctx, int64_t rank, int64_t stage, uint32_t i, const plc_instr *in, double start, double end)
{
    (void)stage;
    (void)i;
    drawer *d = ctx;
    if (end <= start) return;
    int64_t row = d->row_of_rank[rank];
    int stream = in->stream == PLC_STREAM_COMM;
    int k = kind_of(in, d->split_layers);
    float *c = d->cover + ((size_t)row * 2 + (size_t)stream) * COLUMNS * K_COUNT;
    plc_svg_bin_add(c, COLUMNS, K_COUNT, d->bin, k, start, end);
}

int plc_trace_svg(const plc_plan *p, bool all_ranks, FILE *out, char *err, size_t errlen)
{
    /* first pass: the step time, for the scale */
    plc_trace_cost_ctx *cost = plc_trace_cost_ctx_new(p);
    if (!cost) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    plc_sim_opts o = {all_ranks, plc_trace_cost, cost, NULL, NULL};
    plc_sim_result res;
    if (plc_sim_run(p, &o, &res, err, errlen)) {
        plc_trace_cost_ctx_free(cost);
        return -1;
    }
    int64_t rows = all_ranks ? p->world_size : p->layout.pp;
    drawer d = {0};
    d.row_of_rank = calloc((size_t)p->world_size, sizeof *d.row_of_rank);
    d.cover = calloc((size_t)rows * 2 * COLUMNS * K_COUNT, sizeof *d.cover);
    int64_t *rank_of_row = calloc((size_t)rows, sizeof *rank_of_row);
    if (!d.row_of_rank || !d.cover || !rank_of_row) {
        snprintf(err, errlen, "out of memory");
        free(d.row_of_rank);
        free(d.cover);
        free(rank_of_row);
        plc_trace_cost_ctx_free(cost);
        return -1;
    }
    for (int64_t k = 0; k < rows; k++) {
        int64_t r = all_ranks ? k : plc_coords_to_rank(&p->layout, (plc_rank_coords){0, 0, 0, k});
        d.row_of_rank[r] = k;
        rank_of_row[k] = r;
    }
    double T = res.end_time > 0 ? res.end_time : 1;
    d.bin = T / COLUMNS;
    d.split_layers = plc_schedule_splits(p->layout.schedule) ? p->model.layers : 0;
    /* the legend: W only where the schedule splits backwards */
    const char *colors[K_COUNT + 1], *names[K_COUNT + 1];
    int nlegend = 0;
    for (int k = 0; k <= K_COUNT; k++)
        if (k != K_WGRAD || d.split_layers) colors[nlegend] = kind_color[k], names[nlegend++] = kind_name[k];
    o.event = on_event;
    o.event_ctx = &d;
    int rc = plc_sim_run(p, &o, &res, err, errlen);

    /* geometry: the header (title, subtitle and legend, each as many lines
     * as it takes), then rows that shrink from 40 px (a few ranks) to 10 px
     * (many) */
    const plc_layout *l = &p->layout;
    char lt[512], sub[640];
    snprintf(sub, sizeof sub, "%s; thin rows: the communication stream", plc_layout_text(l, lt, sizeof lt));
    double width = 1200, left = 170, right = 30;
    int sub_lines = plc_svg_text_wrapped(NULL, 12, 44, 11.5, 15, "#444444", width - 24, sub);
    double legend_y = 44 + 15 * (sub_lines - 1) + 12;
    int legend_rows = plc_svg_legend(NULL, 12, legend_y, width - 12, 18, nlegend, colors, names);
    double top = legend_y + 18 * legend_rows + 16;
    double row_h = 480.0 / (double)rows;
    if (row_h > 40) row_h = 40;
    if (row_h < 10) row_h = 10;
    double comp_h = row_h * 0.62, comm_h = row_h * 0.22;
    double height = top + (double)rows * row_h + 50;
    double px = (width - left - right) / COLUMNS;

    char title[256];
    snprintf(title, sizeof title, "plc trace: predicted step of %s, %lld rank%s, %.4g s", p->spec_path ? p->spec_path : "plan",
             (long long)p->world_size, plc_word_plural(p->world_size), T);
    plc_svg_begin(out, width, height, title);
    plc_svg_text(out, 12, 24, 15, "start", "#222222", "Predicted step: %.4g s, %lld rank%s%s", T, (long long)p->world_size,
                 plc_word_plural(p->world_size), all_ranks ? "" : " (one row per pipeline stage)");
    plc_svg_text_wrapped(out, 12, 44, 11.5, 15, "#444444", width - 24, sub);
    plc_svg_legend(out, 12, legend_y, width - 12, 18, nlegend, colors, names);
    double label = row_h < 14 ? row_h * 0.8 : 11.5;
    int64_t every = rows > 64 ? (rows + 63) / 64 : 1;
    for (int64_t k = 0; k < rows; k++) {
        double y = top + (double)k * row_h;
        plc_svg_rect(out, left, y, width - left - right, comp_h, BUBBLE_COLOR, NULL);
        const float *c = d.cover + (size_t)k * 2 * COLUMNS * K_COUNT;
        plc_svg_binned_row(out, c, COLUMNS, K_COUNT, kind_color, d.bin, left, px, y, comp_h);
        plc_svg_binned_row(out, c + COLUMNS * K_COUNT, COLUMNS, K_COUNT, kind_color, d.bin, left, px, y + comp_h + 1,
                           comm_h);
        if (k % every == 0) {
            plc_rank_coords rc2 = plc_rank_to_coords(l, rank_of_row[k]);
            plc_svg_text(out, left - 8, y + comp_h * 0.8, label, "end", "#333333", "rank %lld (pp %lld)",
                         (long long)rank_of_row[k], (long long)rc2.pp);
        }
    }
    double axis_y = top + (double)rows * row_h + 8;
    plc_svg_line(out, left, axis_y, width - right, axis_y, "#555555", 1, NULL);
    double step = plc_svg_tick_step(T, 8);
    for (int i = 0; (double)i * step <= T * 1.0001; i++) {
        double x = left + (double)i * step * (width - left - right) / T;
        plc_svg_line(out, x, axis_y, x, axis_y + 5, "#555555", 1, NULL);
        plc_svg_text(out, x, axis_y + 18, 11, "middle", "#333333", "%g s", (double)i * step);
    }
    plc_svg_end(out);
    free(d.row_of_rank);
    free(d.cover);
    free(rank_of_row);
    plc_trace_cost_ctx_free(cost);
    return rc;
}
