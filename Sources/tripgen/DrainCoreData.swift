import TripKit
import TripFormats
#if canImport(Glibc)
import Glibc
#endif

// tripgen --drain-coredata STORE: reads every object of a store .ci/bench/coredata_graph.py wrote
// (its model: Author, Book, Tag) through CoreDataObjectReader into a counting sink, and prints the
// objects, references and records set aside: the reader's own cost, for docs/BENCHMARKS.md.

/// The model of the stores `.ci/bench/coredata_graph.py` writes.
let benchGraphModel = ObjectModel(entities: [
    EntityDescription("Author", attributes: [
        AttributeDescription("name", .string), AttributeDescription("born", .date),
        AttributeDescription("rating", .double), AttributeDescription("id", .uuid),
    ], relationships: [RelationshipDescription("books", to: "Book", inverse: "author", toMany: true, ordered: true)],
    uniquenessConstraints: [["name"]]),
    EntityDescription("Book", attributes: [
        AttributeDescription("title", .string), AttributeDescription("pages", .int32),
        AttributeDescription("published", .date), AttributeDescription("inPrint", .bool),
    ], relationships: [
        RelationshipDescription("author", to: "Author", inverse: "books"),
        RelationshipDescription("tags", to: "Tag", inverse: "books", toMany: true),
    ]),
    EntityDescription("Tag", attributes: [AttributeDescription("label", .string)],
                      relationships: [RelationshipDescription("books", to: "Book", inverse: "tags", toMany: true)]),
])

/// Drains the store at `path`; prints `objects N references N rejected N`.
func drainCoreData(_ path: String) -> Never {
    do {
        let reader = try CoreDataObjectReader(path: path, model: benchGraphModel)
        var objects = 0, references = 0, rejected = 0
        while let item = try reader.next() {
            switch item {
            case .object(let o):
                objects += 1
                for r in o.relationships { references += r.count }
            case .rejected: rejected += 1
            }
        }
        print("objects \(objects) references \(references) rejected \(rejected)")
        exit(0)
    } catch let error as TripError {
        // The status tripconv would exit with: 65 a store that is not the model's, 66 a missing one, 74 an I/O error.
        fail(error.message, status: error.kind.rawValue)
    } catch {
        fail("\(error)", status: 70)
    }
}
