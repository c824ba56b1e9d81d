#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripKit

/// The store core's part of a migration in place, the same for tripconv's SQLite and PostgreSQL
/// trip stores: whether one is needed, the time a stage is recorded at, and how the trips that
/// share a name differ (what `--dry-run` prints).
enum StoreMigration {
    /// Whether a store at `version` must be migrated to take trips at `target` (any kind of store).
    static func isNeeded(version: SchemaVersion, target: any VersionedSchema.Type, path: String, migrate: Bool) throws -> Bool {
        let wanted = target.versionIdentifier
        if version == wanted { return false }
        if version > wanted {
            throw TripError.usage("\(path): store is at \(version), target is \(wanted); a store is never migrated down",
                                  notes: ["convert the store into a new file to get a \(wanted) copy"])
        }
        guard migrate else {
            throw TripError.usage("\(path): store is at \(version), target is \(wanted); pass --migrate to migrate it in place",
                                  notes: ["or run `tripconv migrate \(path)` first"])
        }
        return true
    }

    /// The time now, as ISO 8601 text to the second.
    static func now() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(milliseconds: Int64(ts.tv_sec) * 1000).iso8601
    }

    /// The fields whose values differ among `objects`, trips that share the unique attribute at `key`.
    static func conflicts(_ objects: [ModelObject], entity: Entity, except key: Int,
                          schema: any VersionedSchema.Type) -> [StoreMigrationPreview.Conflict] {
        var out: [StoreMigrationPreview.Conflict] = []
        func add(_ field: String, _ texts: [String]) {
            var distinct: [String] = []
            for t in texts where !distinct.contains(t) { distinct.append(t) }
            if distinct.count > 1 { out.append(.init(field: field, values: distinct)) }
        }
        for (slot, attribute) in entity.attributes.enumerated() where slot != key && !attribute.isTransient {
            add(attribute.name, objects.map { text($0.attributes[slot]) })
        }
        for (slot, relationship) in entity.relationships.enumerated() {
            add(relationship.name, objects.map { object -> String in
                guard slot < object.relationships.count else { return "none" }
                switch object.relationships[slot] {
                case .toMany(let items):
                    let titles = items.map { $0.attributes.first.map(text) ?? "" }
                    return "\(items.count) item\(items.count == 1 ? "" : "s")" + (items.isEmpty ? "" : ": " + titles.joined(separator: ", "))
                case .toOne(let object?):
                    return object.attributes.map(text).filter { !$0.isEmpty }.joined(separator: ", ")
                case .toOne(nil):
                    return "none"
                }
            })
        }
        return out
    }

    private static func text(_ value: Value) -> String {
        switch value {
        case .string(let s): return s
        case .date(let t): return t.iso8601
        default: return value.literal
        }
    }
}
