/* metrics.h: training curves for TensorBoard and for spreadsheets: the writer behind the
 * built-in log_metric(name, step, value) (docs/observability.md, "Training metrics").
 *
 * A writer owns one directory (the program's --logdir) and two files in it:
 *   - metrics.csv: "name,step,value,wall_time", one line per value; a file that exists is
 *     appended to (a resumed run continues its curves), the header written when it is new;
 *     values in the fewest digits that read back exactly, names quoted as RFC 4180 says
 *     when they hold a comma, a quote or a line break;
 *   - events.out.tfevents.<unix time>.<host>.<pid>: a TensorBoard event file, new for each
 *     writer: TFRecords (uint64 length, masked CRC32C of the length, data, masked CRC32C
 *     of the data; little-endian) whose data is a serialized tensorflow.Event: first
 *     {wall_time, file_version "brain.Event:2"}, then one {wall_time, step, summary {value
 *     {tag, simple_value}}} per value. simple_value is a float (TensorBoard's scalar), so
 *     the event file holds the value rounded to f32; the CSV holds it exactly.
 * Both are flushed after every value: a run that dies loses none of those it logged.
 *
 * Pure I/O: no MPI, no globals (the standard library keeps the writer in the program
 * context, on rank 0). Errors come back as -1 with a message naming the path and the cause,
 * "cannot write 'runs/a/metrics.csv': No space left on device"; a writer that failed
 * writes nothing more. */
#ifndef ORN_METRICS_H
#define ORN_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

typedef struct OrnMetrics OrnMetrics;

/* Create dir (and its parents) when missing, open metrics.csv and a new event file, and
 * write the event file's first record. wall: seconds since 1970 (the file's name and first
 * event); host, pid: the rest of its name. 0 with *out set, or -1 with err filled. */
int orn_metrics_open(const char *dir, double wall, const char *host, long pid, OrnMetrics **out,
                     char *err, size_t errlen);
/* One value (both files, flushed). 0, or -1 with err filled (then and after, nothing more
 * is written). */
int orn_metrics_log(OrnMetrics *m, const char *name, int64_t step, double value, double wall,
                    char *err, size_t errlen);
/* The directory as given, and the event file's path. */
const char *orn_metrics_dir(const OrnMetrics *m);
const char *orn_metrics_event_path(const OrnMetrics *m);
void orn_metrics_close(OrnMetrics *m);

/* ---- the pieces, exposed for the unit tests (tests/unit/test_metrics.c) ---- */

/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), continuing from crc (0 to start):
 * "123456789" gives 0xE3069283. */
uint32_t orn_metrics_crc32c(uint32_t crc, const void *data, size_t n);
/* TFRecord's masked CRC: rotate right by 15, add 0xa282ead8. */
uint32_t orn_metrics_masked_crc(const void *data, size_t n);
/* Append a serialized Event: wall_time, then step and summary {value {tag, simple_value}}
 * when tag is not NULL, else file_version "brain.Event:2" (the first event). */
void orn_metrics_event(OrnBuf *b, double wall, int64_t step, const char *tag, float value);
/* Append data framed as one TFRecord. */
void orn_metrics_record(OrnBuf *b, const void *data, size_t n);

#endif
