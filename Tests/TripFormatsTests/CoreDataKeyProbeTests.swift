import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// The reader tests references against the destination's keys as it reads their rows
/// (`CoreDataEntityCursor`), and runs the `NOT IN` checks only on a miss: the error must name the row
/// the checks name when all run before the entity's first object, as they did.
@Suite("Core Data: keys tested as their rows are read", .needsPython3)
struct CoreDataKeyProbeTests {
    let scratch = ScratchDirectory()
    typealias L = LibraryStore

    func readError(_ damage: String) throws -> TripError? {
        let path = scratch.path("library.store")
        try L.write(path, ["damage=" + damage])
        return #expect(throws: TripError.self) { try L.drain(try CoreDataObjectReader(path: path, model: L.model)) }
    }

    @Test("two relationships with a missing row each: the first check's least row is named, not the first met",
          arguments: [
            // Book's checks: author (to-one) before tags (join table); the join table's miss (owner 1) is met first.
            ("UPDATE ZBOOK SET ZAUTHOR = 99 WHERE Z_PK = 4; INSERT INTO Z_2TAGS VALUES (1, 42, 3);",
             "ZBOOK row Z_PK 4: column ZAUTHOR names Z_PK 99"),
            ("UPDATE ZBOOK SET ZAUTHOR = 98 WHERE Z_PK = 4; UPDATE ZBOOK SET ZAUTHOR = 99 WHERE Z_PK = 2;",
             "ZBOOK row Z_PK 2: column ZAUTHOR names Z_PK 99"),
          ])
    func firstCheckNamed(damage: String, place: String) throws {
        let error = try readError(damage)
        #expect(error?.kind == .data)
        #expect(error?.message.contains(place) == true, "\(error?.message ?? "")")
    }

    @Test("join table rows the owner's list does not meet: a NULL owner, an owner past the last row",
          arguments: [("INSERT INTO Z_2TAGS VALUES (NULL, 42, 9);", "Z_2TAGS row of owner Z_PK 0: column Z_6TAGS names Z_PK 42"),
                      ("INSERT INTO Z_2TAGS VALUES (9, 1, 1), (9, 42, 2);", "Z_2TAGS row of owner Z_PK 9: column Z_6TAGS names Z_PK 42")])
    func rowsOutsideTheMerge(damage: String, place: String) throws {
        let error = try readError(damage)
        #expect(error?.kind == .data)
        #expect(error?.message.contains(place) == true, "\(error?.message ?? "")")
    }

    @Test("a store whose keys are too sparse for a bitmap is checked by NOT IN: read whole, a missing row named")
    func sparseKeys() throws {
        let far: Int64 = 10_000_000
        let sparse = "UPDATE ZAUTHOR SET Z_PK = \(far) WHERE Z_PK = 3; UPDATE ZBOOK SET ZAUTHOR = \(far) WHERE Z_PK = 4;"
        let path = scratch.path("sparse.store")
        try L.write(path, ["damage=" + sparse])
        let objects = try L.objects(try CoreDataObjectReader(path: path, model: L.model))
        #expect(objects.filter { $0.entity == L.author }.map(\.key) == [1, 2, far])
        let book = objects.first { $0.entity == L.book && $0.key == 4 }
        #expect(book?.references("author", in: L.model) == [ObjectReference(entity: L.author, key: far)])
        let error = try readError(sparse + " UPDATE ZBOOK SET ZAUTHOR = \(far - 1) WHERE Z_PK = 3;")
        #expect(error?.message.contains("ZBOOK row Z_PK 3: column ZAUTHOR names Z_PK \(far - 1)") == true, "\(error?.message ?? "")")
    }

    @Test("the bitmap of keys: dense keys held, a key below the first or past 64 bits a key refused")
    func bits() {
        var bits = CoreDataKeyBits()
        #expect(!bits.contains(0))
        let first: [Int64] = [5, 6, 9, 700]
        let inserted = first.map { bits.insert($0) }
        #expect(inserted == [true, true, true, true])
        let probes: [Int64] = [4, 5, 6, 7, 8, 9, 699, 700, 701, Int64.min, Int64.max]
        #expect(probes.map { bits.contains($0) }
                == [false, true, true, false, false, true, false, true, false, false, false])
        let below = bits.insert(4)
        #expect(!below)
        var sparse = CoreDataKeyBits()
        let edge: Int64 = -3 + 64 * 2 + 4096
        let keys: [Int64] = [-3, 0, edge, edge - 1]
        let dense = keys.map { sparse.insert($0) }
        #expect(dense == [true, true, false, true])
        var extreme = CoreDataKeyBits()
        let ends: [Bool] = [extreme.insert(Int64.min), extreme.insert(Int64.max)]
        #expect(ends == [true, false])
    }
}
