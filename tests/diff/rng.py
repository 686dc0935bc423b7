"""rng.py: the random streams of compiled programs (runtime/rng.c), redone in Python so
that the oracle draws the same numbers: Philox4x32-10 keyed by the program seed, the counter
holding a draw number and a hash of (stream, iteration key)."""

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF
PROGRAM_STREAM = M64


def philox(ctr, key):
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        hi0, lo0 = p0 >> 32, p0 & M32
        hi1, lo1 = p1 >> 32, p1 & M32
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        k0 = (k0 + 0x9E3779B9) & M32
        k1 = (k1 + 0xBB67AE85) & M32
    return [c0, c1, c2, c3]


def mix64(z):
    z = (z + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def u53(hi, lo):
    return float(((hi << 32) | lo) >> 11) * (1.0 / 9007199254740992.0)


class Rng:
    """orn_rt_rng_init(seed, stream, key): one iteration's (or the program's) stream."""

    def __init__(self, seed, stream, key=()):
        h = mix64(stream & M64)
        for k in key:
            h = mix64(h ^ (k & M64))
        self.key = [seed & M32, (seed >> 32) & M32]
        self.ctr = [0, 0, h & M32, h >> 32]
        self.out = []

    def u32(self):
        if not self.out:
            self.out = philox(self.ctr, self.key)
            self.ctr[0] = (self.ctr[0] + 1) & M32
            if self.ctr[0] == 0:
                self.ctr[1] = (self.ctr[1] + 1) & M32
        return self.out.pop(0)

    def uniform(self):
        hi = self.u32()
        lo = self.u32()
        return u53(hi, lo)

    def randint(self, n):
        if n <= 1:
            return 0
        limit = M64 - M64 % n
        while True:
            hi = self.u32()
            lo = self.u32()
            r = (hi << 32) | lo
            if r < limit:
                return r % n


def rand_at(seed, index):
    """Element `index` (row-major) of rand(T, ..., seed = seed)."""
    out = philox([index & M32, (index >> 32) & M32, 0x52414E44, 0x41525259],
                 [seed & M32, (seed >> 32) & M32])
    return u53(out[0], out[1])
