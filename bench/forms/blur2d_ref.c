/* blur2d_ref.c: hand-written serial C baseline of the blur2d form (bench/forms/blur2d.orn,
 * bench/forms/run.sh).
 *
 *   blur2d_ref H W ITERS [clamp]
 *
 * An H x W f32 image, pixel (r, c) = ((31 r + 17 c) mod 256) / 255. Per iteration: every
 * pixel of `out` is the mean of its 3x3 neighbourhood inside the image (the interior
 * without tests, the border rows and columns with them, the sums in the same order as the
 * .orn program's: row offset, then column offset), then `out` is copied back. With
 * `clamp` (the blur2d_clamp form), the neighbours outside the image are its edge's pixels
 * (subscripts clamped) and every pixel is a ninth of the nine: the same interior. Prints
 * "bench: S s/iter  sum X" (the sum of the image after the last iteration). */
#include "../common/bench.h"

static int clamped;

static int64_t clamp(int64_t x, int64_t n)
{
    return x < 0 ? 0 : x > n - 1 ? n - 1 : x;
}

static float px(const float *img, int64_t h, int64_t w, int64_t r, int64_t c)
{
    float s = 0;
    int n = 0;
    for (int dr = -1; dr < 2; dr++)
        for (int dc = -1; dc < 2; dc++) {
            int64_t rr = r + dr, cc = c + dc;
            if (clamped) {
                s += img[clamp(rr, h) * w + clamp(cc, w)];
                n++;
            } else if (rr >= 0 && rr < h && cc >= 0 && cc < w) {
                s += img[rr * w + cc];
                n++;
            }
        }
    return s / (float)n;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: blur2d_ref H W ITERS [clamp]\n");
        return 2;
    }
    clamped = argc > 4 && strcmp(argv[4], "clamp") == 0;
    int64_t h = atoll(argv[1]), w = atoll(argv[2]);
    int iters = atoi(argv[3]);
    float *img = bench_xmalloc((size_t)(h * w) * sizeof *img),
          *out = bench_xmalloc((size_t)(h * w) * sizeof *out);
    for (int64_t r = 0; r < h; r++)
        for (int64_t c = 0; c < w; c++) img[r * w + c] = (float)((r * 31 + c * 17) % 256) / 255.0f;
    double total = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        for (int64_t r = 0; r < h; r++) {
            float *o = out + r * w;
            if (r == 0 || r == h - 1 || w < 3) {
                for (int64_t c = 0; c < w; c++) o[c] = px(img, h, w, r, c);
                continue;
            }
            const float *a = img + (r - 1) * w, *b = img + r * w, *d = img + (r + 1) * w;
            o[0] = px(img, h, w, r, 0);
            for (int64_t c = 1; c < w - 1; c++) {
                float s = 0;
                s += a[c - 1];
                s += a[c];
                s += a[c + 1];
                s += b[c - 1];
                s += b[c];
                s += b[c + 1];
                s += d[c - 1];
                s += d[c];
                s += d[c + 1];
                o[c] = s / 9.0f;
            }
            o[w - 1] = px(img, h, w, r, w - 1);
        }
        memcpy(img, out, (size_t)(h * w) * sizeof *img);
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  %.3f s\n", it + 1, secs);
    }
    double sum = 0;
    for (int64_t i = 0; i < h * w; i++) sum += img[i];
    printf("bench: %.6f s/iter  sum %.9e\n", total / iters, sum);
    free(img);
    free(out);
    return 0;
}
