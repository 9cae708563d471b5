/* report_svg.c: the pictures of plc scale --svg (throughput, MFU and
 * per-GPU return against cluster size) and plc explain --svg (memory per
 * pipeline stage by component against the limit), drawn with compiler/svg. */
#include <math.h>
#include <string.h>

#include "compiler/cli/cli_int.h"
#include "compiler/plantools/plantools.h"

static const char *const mem_color[PLC_MEM_COUNT] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                                     "#edc948", "#b07aa1", "#ff9da7", "#9c755f"};

/* one panel of the scale picture: y against log2 GPUs */
static void panel(FILE *out, double x0, double y0, double w, double h, const char *title, const char *unit, int n,
                  const double *gpus, const double *y, const double *ideal, double ymax_hint)
{
    double ymax = ymax_hint;
    for (int i = 0; i < n; i++) {
        if (!isnan(y[i]) && y[i] > ymax) ymax = y[i];
        if (ideal && !isnan(ideal[i]) && ideal[i] > ymax) ymax = ideal[i];
    }
    if (!(ymax > 0)) ymax = 1;
    double step = plc_svg_tick_step(ymax, 5);
    ymax = ceil(ymax / step) * step;
    double lo = log2(gpus[0]), hi = log2(gpus[n - 1]);
    if (hi <= lo) hi = lo + 1;
    plc_svg_text(out, x0 + w / 2, y0 - 12, 13, "middle", "#222222", "%s", title);
    plc_svg_line(out, x0, y0 + h, x0 + w, y0 + h, "#555555", 1, NULL);
    plc_svg_line(out, x0, y0, x0, y0 + h, "#555555", 1, NULL);
    for (int t = 0; (double)t * step <= ymax * 1.0001; t++) {
        double v = (double)t * step, yy = y0 + h - v / ymax * h;
        plc_svg_line(out, x0, yy, x0 + w, yy, "#e4e4e4", 1, NULL);
        plc_svg_text(out, x0 - 6, yy + 4, 10.5, "end", "#333333", "%g%s", v, unit);
    }
    double xs[64], ys[64], is[64];
    int m = 0, mi = 0;
    for (int i = 0; i < n && i < 64; i++) {
        double xx = x0 + (log2(gpus[i]) - lo) / (hi - lo) * w;
        plc_svg_line(out, xx, y0 + h, xx, y0 + h + 4, "#555555", 1, NULL);
        plc_svg_text(out, xx, y0 + h + 17, 10.5, "middle", "#333333", "%g", gpus[i]);
        if (ideal && !isnan(ideal[i])) { xs[mi] = xx; is[mi++] = y0 + h - ideal[i] / ymax * h; }
    }
    for (int i = 1; ideal && i < mi; i++) plc_svg_line(out, xs[i - 1], is[i - 1], xs[i], is[i], "#9c9c9c", 1.2, "5,4");
    m = 0;
    for (int i = 0; i < n && i < 64; i++) {
        if (isnan(y[i])) continue;
        xs[m] = x0 + (log2(gpus[i]) - lo) / (hi - lo) * w;
        ys[m++] = y0 + h - y[i] / ymax * h;
    }
    if (m > 1) plc_svg_polyline(out, xs, ys, m, "#4e79a7", 2.2);
    for (int i = 0; i < m; i++) plc_svg_circle(out, xs[i], ys[i], 3.5, "#4e79a7");
    plc_svg_text(out, x0 + w / 2, y0 + h + 34, 11, "middle", "#333333", "GPUs");
}

void plc_report_scale_svg(FILE *out, const plc_job *job, int n, const double *gpus, const double *tokens_per_s,
                          const double *mfu, const double *per_gpu_return)
{
    double W = 1200, H = 400, pw = 300, ph = 240, top = 90;
    char title[256];
    snprintf(title, sizeof title, "plc scale: %s from %g to %g GPUs", job->model.name, gpus[0], gpus[n - 1]);
    plc_svg_begin(out, W, H, title);
    plc_svg_text(out, 12, 24, 15, "start", "#222222", "%s on %s: the best layout at each cluster size", job->model.name,
                 job->cluster.hw.name);
    plc_svg_text(out, 12, 44, 11.5, "start", "#444444",
                 "%lld sequences of %lld tokens per step; dashed: perfect scaling from the first size that fits",
                 (long long)job->train.global_batch, (long long)job->model.seq_len);
    double ktps[64], ideal[64], pmfu[64], pret[64];
    double first = NAN, first_g = 0;
    for (int i = 0; i < n && i < 64; i++) {
        ktps[i] = isnan(tokens_per_s[i]) ? NAN : tokens_per_s[i] / 1000.0;
        if (isnan(first) && !isnan(ktps[i])) { first = ktps[i]; first_g = gpus[i]; }
        ideal[i] = isnan(first) ? NAN : first * gpus[i] / first_g;
        pmfu[i] = isnan(mfu[i]) ? NAN : 100.0 * mfu[i];
        pret[i] = isnan(per_gpu_return[i]) ? NAN : 100.0 * per_gpu_return[i];
    }
    panel(out, 90, top, pw, ph, "throughput (thousand tokens/s)", "k", n, gpus, ktps, ideal, 0);
    panel(out, 90 + pw + 90, top, pw, ph, "MFU", "%", n, gpus, pmfu, NULL, 0);
    panel(out, 90 + 2 * (pw + 90), top, pw, ph, "per-GPU return", "%", n, gpus, pret, NULL, 100);
    plc_svg_end(out);
}

void plc_report_explain_svg(FILE *out, const plc_job *job, const plc_estimate *w, const plc_plan *plan)
{
    int stages = w->stages;
    double bar = stages <= 8 ? 34 : stages <= 32 ? 16 : 8, gap = bar * 0.35;
    double left = 110, top = 100, plot_w = 820, W = 1200;
    double H = top + stages * (bar + gap) + 70;
    double max = w->limit_bytes;
    for (int s = 0; s < stages; s++) {
        double t = 0;
        for (int c = 0; c < PLC_MEM_COUNT; c++) t += w->stage_mem[s][c];
        if (t > max) max = t;
    }
    max *= 1.08;
    double scale = plot_w / max;
    char title[256];
    snprintf(title, sizeof title, "plc explain: memory per rank of %s by pipeline stage", job->model.name);
    plc_svg_begin(out, W, H, title);
    char lt[64], text[512];
    plc_svg_text(out, 12, 24, 15, "start", "#222222", "Memory per rank by pipeline stage: %s, %lld x %s", job->model.name,
                 (long long)plc_cluster_gpus(&job->cluster), job->cluster.hw.name);
    plc_svg_text(out, 12, 44, 11.5, "start", "#444444", "%s; limit %s of the device",
                 plc_layout_text(&w->layout, text, sizeof text), plc_word_percent(job->layout.memory_limit, lt, sizeof lt));
    double lx = 12;
    for (int c = 0; c < PLC_MEM_COUNT; c++) {
        const char *n = plc_mem_component_name((plc_mem_component)c);
        plc_svg_rect(out, lx, 58, 12, 12, mem_color[c], NULL);
        plc_svg_text(out, lx + 16, 68, 11.5, "start", "#333333", "%s", n);
        lx += 30 + 7.0 * (double)strlen(n);
    }
    if (plan) {
        plc_svg_line(out, lx, 64, lx + 14, 64, "#111111", 2.5, NULL);
        plc_svg_text(out, lx + 18, 68, 11.5, "start", "#333333", "plan's exact arena");
    }
    for (int s = 0; s < stages; s++) {
        double y = top + s * (bar + gap), x = left, total = 0;
        for (int c = 0; c < PLC_MEM_COUNT; c++) {
            double v = w->stage_mem[s][c];
            char tip[96];
            snprintf(tip, sizeof tip, "stage %d %s: %.2f GiB", s, plc_mem_component_name((plc_mem_component)c), v / PLC_GIB);
            if (v > 0) plc_svg_rect(out, x, y, v * scale, bar, mem_color[c], tip);
            x += v * scale;
            total += v;
        }
        if (plan && s < plan->layout.pp) {
            /* the plan's arena holds weights .. temporaries: drawn as a mark at that size */
            double arena = (double)plan->programs[plan->stage_program[s]].arena_bytes;
            plc_svg_line(out, left + arena * scale, y - 2, left + arena * scale, y + bar + 2, "#111111", 2.5, NULL);
        }
        if (stages <= 64 || s % ((stages + 63) / 64) == 0)
            plc_svg_text(out, left - 8, y + bar * 0.7, bar < 12 ? bar : 11.5, "end", "#333333", "stage %d", s);
        plc_svg_text(out, x + 6, y + bar * 0.7, bar < 12 ? bar : 11, "start", "#333333", "%.1f GiB", total / PLC_GIB);
    }
    double bottom = top + stages * (bar + gap);
    double lim = left + w->limit_bytes * scale;
    plc_svg_line(out, lim, top - 8, lim, bottom, "#c00000", 1.5, "6,4");
    plc_svg_text(out, lim, top - 12, 11, "middle", "#c00000", "limit %.1f GiB", w->limit_bytes / PLC_GIB);
    plc_svg_line(out, left, bottom + 4, left + plot_w, bottom + 4, "#555555", 1, NULL);
    double step = plc_svg_tick_step(max / PLC_GIB, 8);
    for (int t = 0; (double)t * step * PLC_GIB <= max; t++) {
        double xx = left + (double)t * step * PLC_GIB * scale;
        plc_svg_line(out, xx, bottom + 4, xx, bottom + 9, "#555555", 1, NULL);
        plc_svg_text(out, xx, bottom + 22, 10.5, "middle", "#333333", "%g", (double)t * step);
    }
    plc_svg_text(out, left + plot_w / 2, bottom + 40, 11, "middle", "#333333", "GiB per rank");
    plc_svg_end(out);
}
