/* svg.h: the one SVG writer of plc's pictures (plc trace --svg, plc scale
 * --svg, plc explain --svg): standalone SVG 1.1 documents that a browser
 * opens and a README embeds, with the text in a system sans-serif font.
 * Coordinates are pixels; text is XML-escaped here. */
#ifndef PLC_SVG_H
#define PLC_SVG_H

#include <stdio.h>

/* the document: a white canvas w x h with a title (the tooltip and the
 * accessible name) */
void plc_svg_begin(FILE *out, double w, double h, const char *title);
void plc_svg_end(FILE *out);
/* a filled rectangle; tip (may be NULL) becomes its tooltip */
void plc_svg_rect(FILE *out, double x, double y, double w, double h, const char *fill, const char *tip);
/* a line; dash NULL for solid */
void plc_svg_line(FILE *out, double x1, double y1, double x2, double y2, const char *stroke, double width, const char *dash);
/* a polyline through n points */
void plc_svg_polyline(FILE *out, const double *x, const double *y, int n, const char *stroke, double width);
void plc_svg_circle(FILE *out, double x, double y, double r, const char *fill);
/* text at (x, y) baseline; anchor "start", "middle" or "end"; printf format */
void plc_svg_text(FILE *out, double x, double y, double size, const char *anchor, const char *fill, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* a tick step of 1, 2 or 5 x 10^k giving about `ticks` ticks over range */
double plc_svg_tick_step(double range, int ticks);

#endif
