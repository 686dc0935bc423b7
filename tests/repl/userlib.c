/* userlib.c: a user's shared library for the REPL's extern test (transcripts/externs.in). */
#include <stdint.h>

double orn_test_scale(double x, int64_t k);

double orn_test_scale(double x, int64_t k)
{
    return x * (double)k + 0.25;
}
