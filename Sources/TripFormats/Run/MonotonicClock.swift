#if canImport(Glibc)
import Glibc
#endif

/// Seconds on a monotonic clock: a run's elapsed time and each input's.
package func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
