/* words.h: plc's one output vocabulary. Every command prints switches as
 * on/off, counts with their plural, percentages exactly (77.5%, not 78%),
 * and figures with the units of the .plan language, through these helpers.
 * Each writes into buf (size bytes) and returns it. */
#ifndef PLC_WORDS_H
#define PLC_WORDS_H

#include <stddef.h>
#include <stdint.h>

#include "plc/job.h"

/* "on" / "off" */
const char *plc_word_onoff(int64_t v);
/* "" or "s" for a count */
const char *plc_word_plural(long long n);
/* a fraction as a percentage with up to 4 significant digits: 0.775 -> "77.5%" */
const char *plc_word_percent(double frac, char *buf, size_t size);
/* a value of a unit kind (SI base units) in the spelling of the .plan
 * language: 85899345920 -> "80 GiB", 2.5e11 -> "250 GB/s", 0.8 -> "80%" */
const char *plc_word_quantity(plc_unit_kind kind, double v, char *buf, size_t size);

#endif
