import TripKit

/// Every version of an Xcode `.xcdatamodeld` as a `ModelPlan`, for `schema --model`.
///
/// Each `.xcdatamodel` folder in it is a version, named by the `userDefinedModelVersionIdentifier`
/// its `contents` declares (Xcode's "Core Data Model Version Identifier"), else by its folder name
/// without the extension; where two versions would share a name, every version is named by its
/// folder. Renames are the `elementID` attributes Xcode writes for an entity's, attribute's or
/// relationship's Renaming ID (read as `renamingIdentifier`). The current version is the one
/// `.xccurrentversion` names (`_XCCurrentVersionName`). Each version's entity version hashes, as
/// Core Data computes them (`versionHashes`), go with the plan: they tell a store's version.
///
/// Order: the folder names compared piece by piece, a run of digits as a number ("Model",
/// "Model 2", … "Model 10"), then the current version last where it does not sort last.
///
/// Stages: Core Data keeps no migration plan. A store opened with a newer model is migrated by one
/// mapping inferred from the store's version straight to the current model, so the plan has one
/// lightweight stage from each older version directly to the current one, never a chain.
extension XcodeModel {
    /// The plan of the `.xcdatamodeld` folder at `path`. A version whose `contents` is damaged is
    /// `.data` naming its file and line; nothing of the other versions is given then.
    static func plan(_ path: String) throws -> ModelPlan {
        let bundle = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        guard try FileSystem.kind(of: bundle, failing: .noInput) == .directory else {
            throw TripError.data("\(bundle): expected an .xcdatamodeld folder, found a file")
        }
        let names = try FileSystem.entries(of: bundle)
        let current = try currentVersion(of: bundle, names: names)
        let stem = { (folder: String) in String(folder.dropLast(".xcdatamodel".count)) }
        var folders = names.filter { $0.hasSuffix(".xcdatamodel") }.sorted { versionOrder(stem($0), stem($1)) }
        var notes: [String] = []
        if folders.last != current {
            notes.append("\(current) is the current version (.xccurrentversion) and is put last, after \(folders.last.map(stem) ?? "") "
                         + "whose name sorts after it")
            folders.removeAll { $0 == current }
            folders.append(current)
        }
        var read: [(folder: String, model: ObjectModel, places: [String: String], hashes: [String: [UInt8]]?)] = []
        for folder in folders {
            var places: [String: String] = [:]
            let contents = "\(bundle)/\(folder)/contents"
            let elements = try elements(contents)
            let model = try model(elements: elements, path: contents, places: &places)
            let (hashes, why) = versionHashes(model, elements: elements, path: contents)
            if let why { notes.append("no entity version hashes for \(stem(folder)), so a store's NSStoreModelVersionHashes cannot tell it: \(why)") }
            read.append((folder, model, places, hashes))
        }
        var identifiers = read.map { $0.model.versionIdentifiers.first ?? stem($0.folder) }
        if Set(identifiers).count < identifiers.count {
            notes.append("two versions declare the same identifier (userDefinedModelVersionIdentifier), so every version is named by its folder")
            identifiers = read.map { stem($0.folder) }
        }
        let named = zip(read, identifiers).map { "\($0.folder) as \($1.quotedForMessage)" }.joined(separator: ", ")
        notes.append(read.count == 1 ? "one version: \(named)"
                     : "versions in the order of their folder names, numbers in them compared as numbers, the current one last: \(named)")
        var versions: [ObjectModel] = []
        var places: [String: String] = [:]
        var hashes: [String: [String: [UInt8]]] = [:]
        for ((_, model, declared, entityHashes), identifier) in zip(read, identifiers) {
            var version = model
            version.versionIdentifiers = [identifier]
            versions.append(version)
            for (key, place) in declared { places["\(identifier)/\(key)"] = place }
            hashes[identifier] = entityHashes
        }
        let target = identifiers[identifiers.count - 1]
        let stages = identifiers.dropLast().map { ModelPlan.Stage(.lightweight, from: $0, to: target) }
        if !stages.isEmpty {
            notes.append("Core Data keeps no migration plan: it migrates a store by one lightweight mapping inferred from the store's "
                         + "version straight to the current one, so each stage goes from an older version directly to "
                         + "\(target.quotedForMessage), not through the versions between")
        }
        var plan = ModelPlan(versions: versions, stages: stages, notes: notes, places: places)
        plan.entityVersionHashes = hashes
        return plan
    }

    /// Whether version `a` (a folder name without its extension) comes before `b`: piece by piece, a run of digits compared as a
    /// number, other text as text; the names themselves break a tie ("Model 02" and "Model 2").
    static func versionOrder(_ a: String, _ b: String) -> Bool {
        let x = pieces(a), y = pieces(b)
        for (p, q) in zip(x, y) where p != q {
            switch (p, q) {
            case (.number(let m), .number(let n)) where m != n:
                return m.count != n.count ? m.count < n.count : m < n
            case (.number, .text): return true
            case (.text, .number): return false
            default:
                if case .text(let s) = p, case .text(let t) = q, s != t { return s < t }
            }
        }
        return x.count != y.count ? x.count < y.count : a < b
    }

    private enum Piece: Equatable {
        /// Digits without leading zeros (`"0"` for zero).
        case number(String)
        case text(String)
    }

    private static func pieces(_ name: String) -> [Piece] {
        var out: [Piece] = []
        var run = "", digits = false
        func flush() {
            guard !run.isEmpty else { return }
            if digits {
                let trimmed = String(run.drop { $0 == "0" })
                out.append(.number(trimmed.isEmpty ? "0" : trimmed))
            } else {
                out.append(.text(run))
            }
            run = ""
        }
        for c in name {
            let isDigit = c.isASCII && c.isNumber
            if isDigit != digits { flush(); digits = isDigit }
            run.append(c)
        }
        flush()
        return out
    }
}
