// liblinear_driver.cpp: runs LIBLINEAR (fetched by bench/run.sh from PyPI's
// liblinear-official sdist, never committed) on the SLR workload's data, for the peer
// comparison.
//
//   liblinear_driver TRAIN TEST SOLVER C
//
// Reads both libsvm files (not timed), trains L2-regularized logistic regression with
// train() (timed: LIBLINEAR's whole training call), then predicts the test set. SOLVER is
// LIBLINEAR's -s: 0 (primal trust-region Newton) or 7 (dual coordinate descent), each with
// the stopping tolerance its own command line uses by default (0.01, 0.1); no bias term,
// like bench/slr/slr.orn. Prints "bench: S s/train  test_accuracy A" where S is the
// training call's wall time.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "linear.h"

namespace {

struct Data {
    std::vector<double> y;
    std::vector<feature_node> nodes; // every row's features, each row ended by index -1
    std::vector<size_t> start;       // row r begins at nodes[start[r]]
    int max_index = 0;
};

// One libsvm file: "LABEL idx:val idx:val ..." per line, 1-based indices. Exits naming
// path:line on a malformed line.
bool read_libsvm(const char *path, Data *d)
{
    FILE *f = std::fopen(path, "r");
    if (!f) {
        std::fprintf(stderr, "liblinear_driver: cannot open %s\n", path);
        return false;
    }
    std::vector<char> line(1 << 16);
    long lineno = 0;
    while (std::fgets(line.data(), (int)line.size(), f)) {
        lineno++;
        size_t len = std::strlen(line.data());
        while (len + 1 == line.size() && line[len - 1] != '\n') { // a longer line: grow
            line.resize(2 * line.size());
            if (!std::fgets(line.data() + len, (int)(line.size() - len), f)) break;
            len += std::strlen(line.data() + len);
        }
        char *p = line.data(), *end;
        double label = std::strtod(p, &end);
        if (end == p) {
            if (std::strspn(p, " \t\r\n") == std::strlen(p)) continue; // blank line
            std::fprintf(stderr, "liblinear_driver: %s:%ld: no label\n", path, lineno);
            std::fclose(f);
            return false;
        }
        d->y.push_back(label > 0 ? 1.0 : -1.0);
        d->start.push_back(d->nodes.size());
        p = end;
        for (;;) {
            while (*p == ' ' || *p == '\t') p++;
            if (*p == '\n' || *p == '\r' || *p == '\0') break;
            long idx = std::strtol(p, &end, 10);
            if (end == p || *end != ':' || idx < 1 || idx > 0x7fffffff) {
                std::fprintf(stderr, "liblinear_driver: %s:%ld: bad feature\n", path, lineno);
                std::fclose(f);
                return false;
            }
            p = end + 1;
            double v = std::strtod(p, &end);
            if (end == p) {
                std::fprintf(stderr, "liblinear_driver: %s:%ld: bad value\n", path, lineno);
                std::fclose(f);
                return false;
            }
            p = end;
            d->nodes.push_back(feature_node{(int)idx, v});
            if (idx > d->max_index) d->max_index = (int)idx;
        }
        d->nodes.push_back(feature_node{-1, 0.0});
    }
    std::fclose(f);
    return true;
}

void quiet(const char *) {}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 5) {
        std::fprintf(stderr, "usage: liblinear_driver TRAIN TEST SOLVER C\n");
        return 2;
    }
    Data tr, te;
    if (!read_libsvm(argv[1], &tr) || !read_libsvm(argv[2], &te)) return 1;
    std::vector<feature_node *> rows(tr.y.size());
    for (size_t r = 0; r < rows.size(); r++) rows[r] = &tr.nodes[tr.start[r]];
    problem prob{};
    prob.l = (int)tr.y.size();
    prob.n = tr.max_index > te.max_index ? tr.max_index : te.max_index;
    prob.y = tr.y.data();
    prob.x = rows.data();
    prob.bias = -1;
    parameter param{};
    param.solver_type = std::atoi(argv[3]);
    param.C = std::atof(argv[4]);
    param.eps = param.solver_type == L2R_LR ? 0.01 : 0.1;
    param.regularize_bias = 1;
    if (param.solver_type != L2R_LR && param.solver_type != L2R_LR_DUAL) {
        std::fprintf(stderr, "liblinear_driver: SOLVER is 0 or 7\n");
        return 2;
    }
    if (const char *err = check_parameter(&prob, &param)) {
        std::fprintf(stderr, "liblinear_driver: %s\n", err);
        return 2;
    }
    set_print_string_function(quiet);
    auto t0 = std::chrono::steady_clock::now();
    model *m = train(&prob, &param);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!m) return 1;
    long right = 0;
    for (size_t r = 0; r < te.y.size(); r++)
        right += predict(m, &te.nodes[te.start[r]]) == te.y[r];
    std::printf("bench: %.6f s/train  test_accuracy %.6f\n", secs,
                te.y.empty() ? 0.0 : (double)right / (double)te.y.size());
    free_and_destroy_model(&m);
    return 0;
}
