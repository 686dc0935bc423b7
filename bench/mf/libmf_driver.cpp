// libmf_driver.cpp: runs LIBMF (fetched by bench/run.sh from PyPI's libmf sdist, never
// committed) on the SGD MF workload's data, for the peer comparison.
//
//   libmf_driver TRAIN TEST RANK THREADS ITERS
//
// Trains with mf_train (no evaluation inside the timed call; LIBMF's defaults otherwise:
// squared loss, lambda_q2 = lambda_p2 = 0.1, eta = 0.1 with its adaptive learning rate,
// 2 x THREADS + 1 >= nr_bins = 20 blocks), then computes the test RMSE. Prints
// "bench: S s/iter  test_rmse X  total_s T" where S = T / ITERS and T is the training
// call's wall time (it includes LIBMF's own setup: scaling, shuffling, blocking).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mf.h"

int main(int argc, char **argv)
{
    if (argc != 6) {
        std::fprintf(stderr, "usage: libmf_driver TRAIN TEST RANK THREADS ITERS\n");
        return 2;
    }
    mf::mf_problem tr = mf::read_problem(argv[1]), te = mf::read_problem(argv[2]);
    mf::mf_parameter param = mf::mf_get_default_param();
    param.k = std::atoi(argv[3]);
    param.nr_threads = std::atoi(argv[4]);
    param.nr_iters = std::atoi(argv[5]);
    param.quiet = true;
    auto t0 = std::chrono::steady_clock::now();
    mf::mf_model *model = mf::mf_train(&tr, param);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!model) return 1;
    double rmse = mf::calc_rmse(&te, model);
    std::printf("bench: %.6f s/iter  test_rmse %.6f  total_s %.3f\n", secs / param.nr_iters,
                rmse, secs);
    mf::mf_destroy_model(&model);
    return 0;
}
