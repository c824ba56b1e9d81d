#if canImport(Glibc)
import Glibc
#endif

/// glibc's allocator, set for how tripconv's runs use it.
enum Allocator {
    /// Frees of chunks up to 160 bytes (requests of up to 152) go to glibc's fastbins, not its 128
    /// bytes: an object read on one thread is freed on another, and a chunk past the fastbins' limit
    /// is then freed under its arena's lock, which the reading thread holds as it allocates. A plan's
    /// objects (an object's relationships in one buffer: a recipe of four ingredients and a chef, 144
    /// bytes) passed the default often enough to double the run's context switches
    /// (docs/DESIGN-NOTES.md, "An object's relationships in one buffer").
    static func tune() {
        #if canImport(Glibc)
        // `mallopt` is in <malloc.h>, which Swift's Glibc module does not bring: found by name.
        // M_MXFAST is 1; RTLD_DEFAULT is the null handle.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return }
        _ = unsafeBitCast(symbol, to: Mallopt.self)(1, 160)
        #endif
    }
}
