/* svg.c: plc's SVG writer (see plantools.h). */
#include "compiler/plantools/plantools_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

static void escaped(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

void plc_svg_begin(FILE *out, double w, double h, const char *title)
{
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n<title>",
            w, h, w, h);
    escaped(out, title);
    fprintf(out, "</title>\n<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
}

void plc_svg_end(FILE *out) { fputs("</svg>\n", out); }

void plc_svg_rect(FILE *out, double x, double y, double w, double h, const char *fill, const char *tip)
{
    fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x, y, w, h, fill);
    if (tip) {
        fputs("><title>", out);
        escaped(out, tip);
        fputs("</title></rect>\n", out);
    } else {
        fputs("/>\n", out);
    }
}

void plc_svg_line(FILE *out, double x1, double y1, double x2, double y2, const char *stroke, double width, const char *dash)
{
    fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"%.2f\"%s%s%s/>\n", x1,
            y1, x2, y2, stroke, width, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
}

void plc_svg_polyline(FILE *out, const double *x, const double *y, int n, const char *stroke, double width)
{
    fputs("<polyline fill=\"none\" points=\"", out);
    for (int i = 0; i < n; i++) fprintf(out, "%s%.2f,%.2f", i ? " " : "", x[i], y[i]);
    fprintf(out, "\" stroke=\"%s\" stroke-width=\"%.2f\"/>\n", stroke, width);
}

void plc_svg_circle(FILE *out, double x, double y, double r, const char *fill)
{
    fprintf(out, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"%s\"/>\n", x, y, r, fill);
}

void plc_svg_text(FILE *out, double x, double y, double size, const char *anchor, const char *fill, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(out, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" text-anchor=\"%s\" fill=\"%s\">", x, y, size, anchor, fill);
    escaped(out, buf);
    fputs("</text>\n", out);
}

/* the width of n characters of text at size: an estimate (DejaVu Sans
 * averages about 0.6 em a character), generous rather than short */
static double text_width(size_t n, double size) { return 0.6 * size * (double)n; }

int plc_svg_text_wrapped(FILE *out, double x, double y, double size, double line_h, const char *fill, double max_w,
                         const char *text)
{
    size_t fit = (size_t)(max_w / text_width(1, size));
    if (fit < 8) fit = 8;
    int lines = 0;
    const char *p = text;
    while (*p) {
        size_t n = strlen(p);
        if (n > fit) { /* cut at the last space that fits, else at the first after */
            size_t cut = fit;
            while (cut > 0 && p[cut] != ' ') cut--;
            if (cut == 0) {
                cut = fit;
                while (p[cut] && p[cut] != ' ') cut++;
            }
            n = cut;
        }
        if (out) plc_svg_text(out, x, y + lines * line_h, size, "start", fill, "%.*s", (int)n, p);
        lines++;
        p += n;
        while (*p == ' ') p++;
    }
    return lines;
}

int plc_svg_legend(FILE *out, double x, double y, double max_x, double line_h, int n, const char *const *colors,
                   const char *const *names)
{
    const double size = 11.5, box = 12;
    double lx = x;
    int rows = 1;
    for (int k = 0; k < n; k++) {
        if (!names[k] || !names[k][0]) continue;
        double w = box + 4 + text_width(strlen(names[k]), size);
        if (lx > x && lx + w > max_x) {
            lx = x;
            rows++;
        }
        double ty = y + (rows - 1) * line_h;
        if (out) {
            plc_svg_rect(out, lx, ty, box, box, colors[k], NULL);
            plc_svg_text(out, lx + box + 4, ty + 10, size, "start", "#333333", "%s", names[k]);
        }
        lx += w + 14;
    }
    return rows;
}

double plc_svg_tick_step(double range, int ticks)
{
    if (!(range > 0) || ticks < 1) return 1;
    double raw = range / ticks, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

void plc_svg_bin_add(float *cover, int columns, int kinds, double bin, int kind, double start, double end)
{
    for (int64_t x = (int64_t)(start / bin); x <= (int64_t)(end / bin) && x < columns; x++) {
        double lo = (double)x * bin, hi = lo + bin;
        double t = (end < hi ? end : hi) - (start > lo ? start : lo);
        if (t > 0) cover[x * kinds + kind] += (float)t;
    }
}

void plc_svg_binned_row(FILE *out, const float *cover, int columns, int kinds, const char *const *colors, double bin,
                        double x0, double px, double y, double h)
{
    int run = -1, from = 0;
    for (int x = 0; x <= columns; x++) {
        int k = -1;
        if (x < columns) {
            double busy = 0, best = 0;
            for (int j = 0; j < kinds; j++) {
                busy += cover[x * kinds + j];
                if (cover[x * kinds + j] > best) { best = cover[x * kinds + j]; k = j; }
            }
            if (busy < 0.5 * bin) k = -1;
        }
        if (k == run) continue;
        if (run >= 0) plc_svg_rect(out, x0 + from * px, y, (x - from) * px, h, colors[run], NULL);
        run = k;
        from = x;
    }
}
