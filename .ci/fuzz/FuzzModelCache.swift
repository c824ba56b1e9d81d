// The store's own model (issue 26): `model-cache`. The input's first byte picks what the rest is:
// even, a Z_MODELCACHE.Z_CONTENT blob (raw DEFLATE of a keyed archive), inflated and decoded into an
// ObjectModel; odd, the inflated bytes themselves, read as a binary property list, then as a keyed
// archive of an NSManagedObjectModel. A BinaryPropertyList.Failure is a clean rejection; a trap, an
// ASan report, a hang, another error type, or a model whose parts do not refer to each other as
// ModelCache.check requires is a finding. Needs the internals of TripFormats (@testable import).
#if canImport(Glibc)
import Glibc
#endif
import TripKit
@testable import TripFormats

let fuzzModelCacheTarget = FuzzTarget(name: "model-cache") { input in
    guard let first = input.first else { return }
    let bytes = Array(input.dropFirst())
    do {
        let model: ObjectModel
        if first & 1 == 0 {
            model = try ModelCache.model(compressed: bytes)
        } else {
            _ = try BinaryPropertyList.parse(bytes)
            model = try ModelCache.model(archive: KeyedArchive(bytes))
        }
        fuzzNote("read a model of \(model.entities.count) entities")
        do { try ModelCache.check(model) } catch { fuzzFinding("a model read from a cache fails its own check: \(error)") }
        for i in model.entities.indices { _ = model.lineage(of: i); _ = model.allRelationships(of: i) }
    } catch let failure as BinaryPropertyList.Failure {
        fuzzNote("refused: \(failure)")
    } catch {
        fuzzFinding("the model cache decoders threw a \(type(of: error)), not a BinaryPropertyList.Failure: \(error)")
    }
}
