import TripKit

/// A Core Data (SwiftData) store's own account of itself: its model (from its `Z_MODELCACHE`, from
/// an Xcode model or model JSON given with `--model`, else told from its tables), its metadata
/// (`Z_METADATA`), its entity numbers (`Z_PRIMARYKEY`), its objects per entity, and whether a `-wal`
/// file lies beside it.
///
/// The store is opened as the trip readers open one (read-only; a `-wal` beside it is read, without
/// one a WAL-mode store is opened immutable) and read in one read transaction. Core Data's own
/// tables and entities (`Z_METADATA`, `Z_MODELCACHE`, `Z_PRIMARYKEY`, persistent history's
/// `ACHANGE`, `ATRANSACTION`, `ATRANSACTIONSTRING`, numbered 16000 and up) are never the model's.
///
/// ```swift
/// let store = try StoreModel.read(storeAt: "default.store")
/// print(store.source, store.model.entities.map(\.name), store.objectCounts)
/// ```
public struct StoreModel: Sendable {
    /// Where a model came from.
    public enum Source: String, Sendable {
        case modelCache = "the store's model cache (Z_MODELCACHE)"
        case xcodeModel = "an Xcode model"
        case json = "a model JSON file"
        /// The current version (the plan's last schema) of an app's Swift source or plan JSON.
        case swiftSource = "the current version of an app's Swift source"
        case planJSON = "the current version of a plan JSON file"
        /// The current version of an `.xcdatamodeld` of several versions.
        case xcodeVersions = "the current version of an Xcode model's versions (.xcdatamodeld)"
        case tables = "the store's tables"
        case objectStore = "the model table of a tripconv store (tripconv_model)"
    }

    public var model: ObjectModel
    public var source: Source
    /// The model file read, for `.xcodeModel` (its `contents`) and `.json`.
    public var modelFile: String?
    /// `NSStoreModelVersionIdentifiers` of `Z_METADATA`.
    public var versionIdentifiers: [String] = []
    /// `NSPersistenceFrameworkVersion` of `Z_METADATA` (Core Data's build: 1345 in 2024, 479 in 2014).
    public var frameworkVersion: Int?
    /// `NSStoreType` of `Z_METADATA` (`SQLite`).
    public var storeType: String?
    /// The entity names `NSStoreModelVersionHashes` has hashes of.
    public var hashedEntities: [String] = []
    /// `NSStoreModelVersionHashes` of `Z_METADATA`: each entity's version hash (32 bytes), by name.
    public var versionHashes: [String: [UInt8]] = [:]
    /// Each entity's number (`Z_ENT`), from `Z_PRIMARYKEY`; Core Data's own (16000 and up) left out.
    public var entityNumbers: [String: Int] = [:]
    /// Each entity's objects (its rows of its root's table with its own `Z_ENT`).
    public var objectCounts: [String: Int] = [:]
    /// Whether a non-empty `-wal` file lies beside the store: changes not yet checkpointed into it,
    /// read here, lost to whoever copies the store alone.
    public var hasPendingWAL = false

    /// A model from `source`, with nothing a store says of itself.
    public init(model: ObjectModel, source: Source, modelFile: String? = nil) {
        self.model = model; self.source = source; self.modelFile = modelFile
    }

    /// The entity numbers at and above which Core Data numbers its own entities (persistent history).
    static let privateEntityNumbers: Int64 = 16000
    static let modelCacheTable = "Z_MODELCACHE"

    /// Reads a store's model and metadata. `modelPath` (an `.xcdatamodeld`, `.xcdatamodel`, `contents`
    /// or model JSON) is the model when given, else the store's model cache, else its tables. A store
    /// that is not Core Data's, a damaged cache or metadata, a model that disagrees with the tables:
    /// `.data`, naming the table and column.
    public static func read(storeAt path: String, modelPath: String? = nil) throws -> StoreModel {
        // As the objects are read: with the -wal, at one snapshot, writing no byte of the store's files.
        let snapshot = try StoreSnapshot(path: path, busyTimeout: 5000)
        defer { snapshot.end() }
        let connection: SQLiteConnection = snapshot.connection
        let structure = SQLiteStoreStructure(connection)
        let tables = try structure.tableNames()
        guard CoreDataStoreLayout.isCoreData(tables: tables) else {
            throw TripError.data("\(path): not a Core Data store: it has no \(CoreDataStoreLayout.primaryKeyTable) and \(CoreDataStoreLayout.metadataTable) tables")
        }
        var entities: [(number: Int64, name: String, parent: Int64)] = []
        let list = try connection.prepare("SELECT \"Z_ENT\", \"Z_NAME\", \"Z_SUPER\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_ENT\" < ?1 ORDER BY \"Z_ENT\"")
        try list.bind(1, privateEntityNumbers)
        while try list.step() { entities.append((list.int64(0), list.text(1), list.isNull(2) ? 0 : list.int64(2))) }

        var out: StoreModel
        if let modelPath {
            let (model, file, source) = try readModelFile(modelPath)
            out = StoreModel(model: model, source: source, modelFile: file)
        } else if tables.contains(modelCacheTable), let blob = try modelCacheBlob(connection) {
            do {
                out = StoreModel(model: try ModelCache.model(compressed: blob), source: .modelCache)
            } catch let failure as BinaryPropertyList.Failure {
                throw TripError.data("\(path): \(modelCacheTable).Z_CONTENT: a damaged model cache: \(failure)")
            }
        } else {
            out = StoreModel(model: try TableModel.model(connection, entities: entities), source: .tables)
        }
        try out.readMetadata(connection, path: path)
        for e in entities { out.entityNumbers[e.name] = Int(e.number) }
        out.hasPendingWAL = (FileSystem.size(path + "-wal") ?? 0) > 0
        try out.countObjects(connection, path: path, tables: Set(tables), entities: entities)
        if out.model.versionIdentifiers.isEmpty { out.model.versionIdentifiers = out.versionIdentifiers.filter { !$0.isEmpty } }
        return out
    }

    /// The names of a Core Data store's entities (`Z_PRIMARYKEY`, Core Data's own left out), and nothing
    /// else read: whether the store is SampleTrips' or another app's. Nil for a file that is not a
    /// Core Data store (whose reader says why).
    public static func entityNames(storeAt path: String) -> [String]? {
        guard isStoreFile(path), let snapshot = try? StoreSnapshot(path: path, busyTimeout: 5000) else { return nil }
        defer { snapshot.end() }
        let connection: SQLiteConnection = snapshot.connection
        guard let tables = try? SQLiteStoreStructure(connection).tableNames(), CoreDataStoreLayout.isCoreData(tables: tables),
              let s = try? connection.prepare("SELECT \"Z_NAME\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_ENT\" < 16000 ORDER BY \"Z_ENT\"") else { return nil }
        var names: [String] = []
        while (try? s.step()) == true { names.append(s.text(0)) }
        return names
    }

    /// A model file: an Xcode model (folder or `contents`) or model JSON, told by what it is.
    public static func readModelFile(_ path: String) throws -> (model: ObjectModel, file: String, source: Source) {
        let swift = ModelPlanSource.isSwiftSource(path)
        if swift || ModelPlanSource.isPlanJSON(path) {
            guard let current = try ModelPlanSource.read(path, isSwift: swift).current else { throw TripError.data("\(path): a plan without a version") }
            return (current, path, swift ? .swiftSource : .planJSON)
        }
        if try FileSystem.kind(of: path, failing: .noInput) != .directory {
            let head = try FileSystem.head(of: path, count: 64, failing: .noInput)
            let first = head.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
            if first == UInt8(ascii: "{") { return (try ObjectModelJSON.read(path), path, .json) }
            guard first == UInt8(ascii: "<") else {
                throw TripError.data("\(path): not a model: expected a Core Data store, an .xcdatamodeld or .xcdatamodel folder, "
                                     + "its contents XML or model JSON")
            }
        }
        let (model, file) = try XcodeModel.read(path)
        return (model, file, .xcodeModel)
    }

    /// Whether a path is a SQLite file (a store, rather than a model file).
    public static func isStoreFile(_ path: String) -> Bool {
        FileSystem.kind(path) == .file && (try? FileSystem.head(of: path, count: 16, failing: .noInput)) == SQLiteConnection.fileHeader
    }

    private static func modelCacheBlob(_ connection: SQLiteConnection) throws -> [UInt8]? {
        let s = try connection.prepare("SELECT \"Z_CONTENT\" FROM \"Z_MODELCACHE\" LIMIT 1")
        guard try s.step(), s.storage(0) == .blob else { return nil }
        guard s.byteCount(0) <= BinaryPropertyList.maximumBytes else {
            throw TripError.data("\(connection.path): \(modelCacheTable).Z_CONTENT: a model cache of \(s.byteCount(0)) bytes is longer than the limit")
        }
        return s.bytes(0)
    }

    private mutating func readMetadata(_ connection: SQLiteConnection, path: String) throws {
        let s = try connection.prepare("SELECT \"Z_PLIST\" FROM \"Z_METADATA\" ORDER BY \"Z_VERSION\" LIMIT 1")
        guard try s.step(), s.storage(0) == .blob else { return }
        let plist: PropertyListValue
        do {
            guard s.byteCount(0) <= BinaryPropertyList.maximumBytes else { throw BinaryPropertyList.Failure("longer than the limit") }
            plist = try BinaryPropertyList.parse(s.bytes(0))
        } catch let failure as BinaryPropertyList.Failure {
            throw TripError.data("\(path): Z_METADATA.Z_PLIST: damaged store metadata: \(failure)")
        }
        versionIdentifiers = plist["NSStoreModelVersionIdentifiers"]?.arrayValue?.compactMap(\.stringValue) ?? []
        if case .int(let v)? = plist["NSPersistenceFrameworkVersion"] { frameworkVersion = Int(truncatingIfNeeded: v) }
        storeType = plist["NSStoreType"]?.stringValue
        if case .dictionary(let d)? = plist["NSStoreModelVersionHashes"] {
            hashedEntities = d.keys.sorted()
            for (name, value) in d { if case .data(let bytes) = value { versionHashes[name] = bytes } }
        }
    }

    /// Counts each entity's rows, and checks that the model's entities are the store's.
    private mutating func countObjects(_ connection: SQLiteConnection, path: String, tables: Set<String>,
                                       entities: [(number: Int64, name: String, parent: Int64)]) throws {
        for e in model.entities {
            guard let number = entityNumbers[e.name] else {
                throw TripError.data("\(path): Z_PRIMARYKEY: the model's entity \(e.name) is not among the store's entities",
                                     notes: ["the store's entities: " + entities.map(\.name).joined(separator: ", ")])
            }
            guard let root = model.rootEntity(of: e.name) else { continue }
            let table = CoreDataStoreLayout.column(root.name)
            guard tables.contains(table) else {
                if e.isAbstract { continue }
                throw TripError.data("\(path): \(table): no such table, for the model's entity \(e.name)")
            }
            let s = try connection.prepare("SELECT count(*) FROM \(quoted(table)) WHERE \"Z_ENT\" = ?1")
            try s.bind(1, Int64(number))
            objectCounts[e.name] = try s.step() ? Int(s.int64(0)) : 0
        }
    }
}
