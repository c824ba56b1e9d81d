import TripKit

/// Makes a store hold what a migration stage's code left in its context, touching only the rows
/// that must change: the rows of trips the code removed (merged or dropped duplicates) are deleted
/// with their related rows, a trip whose values it changed is updated under its own row id with its
/// related rows replaced, a trip it added is inserted, and every other row is left alone, ids and
/// all.
///
/// What changes is found in one walk, without holding the store: the context's trips come in
/// their order, which for a stage that only removes and changes trips is the store's row-id order
/// (each kept trip carries its row's place, `record` N for the Nth row), and the store is read
/// again beside them, row by row. A row passed over is a removed trip; a row met is compared with
/// the trip that carries its place. The decisions go to temporary files (row ids to delete, trips
/// to update or insert, held under the run's budget like a conversion's trips) and are applied
/// once the walk is over, so the store is never changed under a statement still reading it.
struct SQLiteMigrationWriteBack {
    let connection: SQLiteConnection
    let store: DetectedStore
    let budget: SpillBudget

    init(_ connection: SQLiteConnection, store: DetectedStore, budget: SpillBudget) {
        self.connection = connection; self.store = store; self.budget = budget
    }

    /// Finds and applies what changed.
    func apply(_ context: MigrationContext) throws {
        let path = connection.path
        let deleted = RowIDFile(directory: budget.directory)
        // Trips to update carry their row id as the record of their origin.
        let changed = SpillingTrips(budget: budget), added = SpillingTrips(budget: budget)
        try walk(context, deleted: deleted, changed: changed, added: added)
        guard deleted.count > 0 || changed.count > 0 || added.count > 0 else { return }
        let layout = StoreLayout(store.schema)
        // Foreign keys are off, so nothing cascades: related rows are deleted by trip.
        let deleteChildren = try layout.children.map {
            try connection.prepare("DELETE FROM \(quoted($0.name)) WHERE \(quoted(layout.foreignKey)) = ?1", doing: "cannot migrate the store")
        }
        let deleteRoot = try connection.prepare("DELETE FROM \(quoted(layout.rootTable)) WHERE \(quoted(StoreLayout.idColumn)) = ?1",
                                                doing: "cannot migrate the store")
        func deleteRelated(_ id: Int64) throws {
            for s in deleteChildren {
                try s.bind(1, id)
                try s.run()
            }
        }
        try deleted.forEach { id in
            try deleteRelated(id)
            try deleteRoot.bind(1, id)
            try deleteRoot.run()
        }
        let rows = try SQLiteRowWriter(connection, layout: layout)
        try changed.forEach { object, origin in
            let id = Int64(origin.record)
            try deleteRelated(id)
            try rows.update(object, id: id)
            try rows.insertRelated(object, tripID: id)
        }
        try added.forEach { object, _ in
            guard try rows.insert(object, id: nil) != nil else {
                throw TripError.data("\(path): cannot migrate the store: the unique index refused a trip the migration added")
            }
        }
        try rows.flush()
    }

    /// Goes through the context's trips and the store's rows side by side (see the type's comment).
    private func walk(_ context: MigrationContext, deleted: RowIDFile, changed: SpillingTrips, added: SpillingTrips) throws {
        let path = connection.path
        let cursor = try StoreTripCursor(connection, try store.tripQueries(path, byID: false))
        var builder = RecordBuilder(source: path, format: Format.sqlite.rawValue, options: ReadOptions(sourceVersion: store.version))
        var passed = 0
        func nextRow() throws -> (id: Int64, object: ModelObject)? {
            guard let (id, record) = try cursor.nextTrip(into: &builder, record: passed + 1) else { return nil }
            passed += 1
            return (id, record.object)
        }
        try context.trips.forEach { object, origin in
            // A trip that is not the store's, or that comes out of the store's order, is inserted
            // (its row, passed over, is deleted): the same trips, under new row ids.
            guard origin.source == path, origin.record > passed else { return try added.put(object, origin: origin) }
            while passed < origin.record - 1 {
                guard let row = try nextRow() else { return try added.put(object, origin: origin) }
                try deleted.append(row.id)
            }
            guard let row = try nextRow() else { return try added.put(object, origin: origin) }
            if row.object != object { try changed.put(object, origin: RecordOrigin(source: path, record: Int(row.id))) }
        }
        while let row = try nextRow() { try deleted.append(row.id) }
    }
}

/// Row ids written to an anonymous temporary file, read back in the order written.
final class RowIDFile {
    private let directory: String
    private var file: SpillFile?
    private(set) var count = 0

    init(directory: String) { self.directory = directory }

    func append(_ id: Int64) throws {
        if file == nil { file = try SpillFile(directory: directory, bufferSize: 1 << 16) }
        var value = id.littleEndian
        try withUnsafeBytes(of: &value) { try file!.append($0.bindMemory(to: UInt8.self)) }
        count += 1
    }

    func forEach(_ body: (Int64) throws -> Void) throws {
        guard let file else { return }
        try file.flush()
        var reader = file.reader(bufferSize: 1 << 16)
        while let bytes = try reader.read(8) {
            var value: Int64 = 0
            withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
            try body(Int64(littleEndian: value))
        }
    }
}
