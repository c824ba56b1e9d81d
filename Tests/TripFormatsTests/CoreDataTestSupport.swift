import Foundation
import Testing
import TripKit
@testable import TripFormats

/// Builds Core Data stores for the tests, laid out as Core Data lays them out, with the knobs the
/// tests turn: the version's columns, the entity numbers, the metadata plist, how the accommodation
/// is linked, WAL mode.
struct CoreDataStoreBuilder {
    /// How a trip's accommodation is linked: both ways (Core Data's one-to-one), or from one side.
    enum AccommodationLink { case both, fromAccommodation, fromTrip }

    var schema: any VersionedSchema.Type = TripSchemaV3.self
    /// Entity numbers, by entity name (Core Data numbers them in name order; nothing may rely on it).
    var numbers: [String: Int64] = ["BucketListItem": 1, "LivingAccommodation": 2, "Trip": 3]
    /// Extra entities: (number, name, parent number).
    var extraEntities: [(Int64, String, Int64)] = []
    /// The metadata plist; nil stores NULL.
    var plist: [UInt8]? = CoreDataStoreBuilder.plist(identifiers: ["3.0.0"])
    var link = AccommodationLink.both
    var isWAL = false
    /// A column of the trip table no version declares.
    var extraTripColumn: String?

    /// A binary plist of Core Data's store metadata, made by Foundation.
    static func plist(identifiers: [String]) -> [UInt8] {
        let metadata: [String: Any] = [
            "NSPersistenceFrameworkVersion": 1338,
            "NSStoreModelVersionHashes": ["Trip": Data(repeating: 7, count: 32)],
            "NSStoreModelVersionHashesVersion": 3,
            "NSStoreModelVersionIdentifiers": identifiers,
            "NSStoreType": "SQLite",
            "NSStoreUUID": "0F2C1D8E-4B6A-4E8B-9C1D-2A3B4C5D6E7F",
        ]
        return [UInt8](try! PropertyListSerialization.data(fromPropertyList: metadata, format: .binary, options: 0))
    }

    /// Seconds since 2001-01-01 of a date value, as SQL text Core Data would have stored as REAL.
    static func seconds(_ value: Value) -> String {
        guard case .date(let t) = value else { return "NULL" }
        let ms = t.milliseconds - Timestamp.referenceDateOffset * 1000
        let whole = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000)
        let fraction = ms - whole * 1000
        return "\(whole).\(String(repeating: "0", count: 3 - String(fraction).count))\(fraction)"
    }

    /// Makes the store at `path` with the trips (objects of `schema`); returns the connection that
    /// made it, still open (so a WAL store keeps its `-wal` file until the caller lets it go).
    @discardableResult
    func build(at path: String, trips: [ModelObject]) throws -> SQLiteConnection {
        let c = try SQLiteConnection(path: path, access: .writing, create: true)
        if isWAL { try c.execute("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0") }
        let root = schema.rootEntity
        let dates = root.persistedAttributes.filter { $0.type == .date }.map { CoreDataStoreLayout.column($0.name) }
        let tripFK = link == .fromAccommodation ? "" : " ZLIVINGACCOMMODATION INTEGER,"
        let accommodationFK = link == .fromTrip ? "" : " ZTRIP INTEGER,"
        try c.execute("""
            BEGIN;
            CREATE TABLE ZBUCKETLISTITEM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, \
            ZHASRESERVATION INTEGER, ZISINPLAN INTEGER, ZTRIP INTEGER, ZDETAILS VARCHAR, ZTITLE VARCHAR );
            CREATE TABLE ZLIVINGACCOMMODATION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,\(accommodationFK) \
            ZADDRESS VARCHAR, ZPLACENAME VARCHAR );
            CREATE TABLE ZTRIP ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,\(tripFK) \(dates[0]) TIMESTAMP, \(dates[1]) TIMESTAMP, \
            ZNAME VARCHAR, ZDESTINATION VARCHAR\(extraTripColumn.map { ", \($0) VARCHAR" } ?? "") );
            CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
            CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
            CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
            CREATE INDEX ZBUCKETLISTITEM_ZTRIP_INDEX ON ZBUCKETLISTITEM (ZTRIP);
            """)
        if root.uniqueAttribute != nil {
            try c.execute("CREATE UNIQUE INDEX Z_Trip_UNIQUE_name ON ZTRIP (ZNAME COLLATE BINARY ASC)")
        }
        // Blobs go in as hex literals: the bytes are ours, not input.
        let blob = plist.map { "X'" + $0.map { String(format: "%02X", $0) }.joined() + "'" } ?? "NULL"
        try c.execute("INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, 'UUID', \(blob))")
        var itemKey: Int64 = 0, placeKey: Int64 = 0
        let trip = try c.prepare("INSERT INTO ZTRIP (Z_PK, Z_ENT, Z_OPT,\(link == .fromAccommodation ? "" : " ZLIVINGACCOMMODATION,") \(dates[0]), \(dates[1]), ZNAME, ZDESTINATION) VALUES (?1, ?2, 1,\(link == .fromAccommodation ? "" : " ?7,") CAST(?3 AS REAL), CAST(?4 AS REAL), ?5, ?6)")
        let item = try c.prepare("INSERT INTO ZBUCKETLISTITEM (Z_PK, Z_ENT, Z_OPT, ZHASRESERVATION, ZISINPLAN, ZTRIP, ZDETAILS, ZTITLE) VALUES (?1, ?2, 1, ?3, ?4, ?5, ?6, ?7)")
        let place = try c.prepare("INSERT INTO ZLIVINGACCOMMODATION (Z_PK, Z_ENT, Z_OPT,\(link == .fromTrip ? "" : " ZTRIP,") ZADDRESS, ZPLACENAME) VALUES (?1, ?2, 1,\(link == .fromTrip ? "" : " ?5,") ?3, ?4)")
        for (i, t) in trips.enumerated() {
            let key = Int64(i + 1)
            var accommodation: Int64?
            if case .toOne(let a?) = t.relationships[1] {
                placeKey += 1
                accommodation = placeKey
                try place.bind(1, placeKey)
                try place.bind(2, numbers["LivingAccommodation"]!)
                try place.bind(3, a.attributes[0])
                try place.bind(4, a.attributes[1])
                if link != .fromTrip { try place.bind(5, key) }
                try place.run()
            }
            try trip.bind(1, key)
            try trip.bind(2, numbers["Trip"]!)
            try trip.bind(3, CoreDataStoreBuilder.seconds(t.attributes[2]))
            try trip.bind(4, CoreDataStoreBuilder.seconds(t.attributes[3]))
            try trip.bind(5, t.attributes[0])
            try trip.bind(6, t.attributes[1])
            if link != .fromAccommodation {
                if let accommodation { try trip.bind(7, accommodation) } else { try trip.bindNull(7) }
            }
            try trip.run()
            for it in t.relationships[0].objects {
                itemKey += 1
                try item.bind(1, itemKey)
                try item.bind(2, numbers["BucketListItem"]!)
                try item.bind(3, it.attributes[2])
                try item.bind(4, it.attributes[3])
                try item.bind(5, key)
                try item.bind(6, it.attributes[1])
                try item.bind(7, it.attributes[0])
                try item.run()
            }
        }
        let keys = try c.prepare("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?1, ?2, ?3, ?4)")
        let maxima: [String: Int64] = ["BucketListItem": itemKey, "LivingAccommodation": placeKey, "Trip": Int64(trips.count) + 2]
        for (name, number) in numbers.sorted(by: { $0.value < $1.value }) {
            try keys.bind(1, number); try keys.bind(2, name); try keys.bind(3, Int64(0)); try keys.bind(4, maxima[name] ?? 0)
            try keys.run()
        }
        for (number, name, parent) in extraEntities {
            try keys.bind(1, number); try keys.bind(2, name); try keys.bind(3, parent); try keys.bind(4, Int64(0))
            try keys.run()
        }
        try c.execute("COMMIT")
        return c
    }
}

enum CoreDataTesting {
    /// Reads a Core Data store to the end through the factory, as `tripconv` would (`.store` → sqlite → sniffed).
    static func read(_ path: String, options: ReadOptions = ReadOptions()) throws -> SQLiteReadResult {
        var reader = try FormatFactory.makeReader(.file(path), format: .sqlite, options: options)
        return try SQLiteTesting.readAll(&reader)
    }

    /// The bytes of a file, or nil when it is absent.
    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
}
