/* replay.c: runs a libFuzzer target's entry point over files, without libFuzzer, so the
 * corpora are replayed as ordinary tests in every build (a sanitizer build makes them
 * sanitizer tests). Usage: replay_<target> FILE_OR_DIR... */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
        return 1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) abort();
    for (size_t n; (n = fread(buf + len, 1, cap - len, f)) > 0;) {
        len += n;
        if (len == cap && !(buf = realloc(buf, cap *= 2))) abort();
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of dir, in name order so a failure is reproducible. */
static int run_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open '%s': %s\n", dir, strerror(errno));
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        if (n == cap && !(names = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names)))
            abort();
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(len))) abort();
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            rc |= run_file(names[i]);
            ++*count;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    int rc = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            rc |= run_dir(argv[i], &count);
        } else {
            rc |= run_file(argv[i]);
            count++;
        }
    }
    printf("replay: %d inputs%s\n", count, rc ? ", some unreadable" : "");
    return rc;
}
