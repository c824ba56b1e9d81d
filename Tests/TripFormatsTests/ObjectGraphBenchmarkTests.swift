import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// Writing 1M objects of three entities, with references by unique value and by `@key`, to JSON
/// Lines: the writer's part of issue 26's store-to-JSON-Lines benchmark (docs/BENCHMARKS.md). Run
/// with `TRIPCONV_OBJECT_BENCH=1 swift test -c release --filter ObjectGraphBenchmarkTests`.
@Suite struct ObjectGraphBenchmarkTests {
    static let model = ObjectModel(entities: [
        EntityDescription("Author", attributes: [AttributeDescription("name", .string, isOptional: false), AttributeDescription("born", .date)],
                          relationships: [RelationshipDescription("books", to: "Book", inverse: "author", toMany: true)],
                          uniquenessConstraints: [["name"]]),
        EntityDescription("Book", attributes: [AttributeDescription("title", .string), AttributeDescription("published", .date),
                                               AttributeDescription("price", .double), AttributeDescription("id", .uuid)],
                          relationships: [RelationshipDescription("author", to: "Author", inverse: "books")]),
        EntityDescription("Review", attributes: [AttributeDescription("stars", .int16), AttributeDescription("text", .string)],
                          relationships: [RelationshipDescription("book", to: "Book")]),
    ])

    @Test(.enabled(if: ProcessInfo.processInfo.environment["TRIPCONV_OBJECT_BENCH"] != nil, "set TRIPCONV_OBJECT_BENCH=1 to run"))
    func writeMillionObjectsAsJSONLines() throws {
        let authors = 100_000, books = 450_000, reviews = 450_000
        let origin = RecordOrigin(source: "bench", record: 0)
        func object(_ n: Int) -> ObjectRecord {
            if n < authors {
                let k = Int64(n + 1)
                return ObjectRecord(entity: 0, key: k, attributes: [.string("Author \(k)"), .date(Double(k) * 1000.25)],
                                    relationships: [[ObjectReference(entity: 1, key: k)]], origin: origin)
            } else if n < authors + books {
                let k = Int64(n - authors + 1)
                var id = [UInt8](repeating: 0, count: 16)
                withUnsafeBytes(of: k.bigEndian) { id.replaceSubrange(8..<16, with: $0) }
                return ObjectRecord(entity: 1, key: k, attributes: [.string("Book \(k)"), .date(Double(k) * 60.5), .double(Double(k) / 8),
                                                                    .uuid(UUIDBytes(id)!)],
                                    relationships: [[ObjectReference(entity: 0, key: (k - 1) % Int64(authors) + 1)]], origin: origin)
            }
            let k = Int64(n - authors - books + 1)
            return ObjectRecord(entity: 2, key: k, attributes: [.int(k % 5), .string("Review \(k): fine")],
                                relationships: [[ObjectReference(entity: 1, key: k)]], origin: origin)
        }
        let dir = ScratchDirectory()
        let total = authors + books + reviews
        let clock = ContinuousClock()
        let making = clock.measure { for n in 0..<total { _ = object(n) } }
        var writer = try JSONObjectWriter(.file(dir.path("bench.jsonl")), format: .jsonl)
        try writer.begin(Self.model)
        let writing = try clock.measure {
            for n in 0..<total { try writer.write(object(n)) }
            try writer.finish()
        }
        let size = (try FileManager.default.attributesOfItem(atPath: dir.path("bench.jsonl"))[.size] as? Int) ?? 0
        print("objects: \(total), making them: \(making), making and writing: \(writing), bytes: \(size)")
        #expect(size > 0)
    }
}
