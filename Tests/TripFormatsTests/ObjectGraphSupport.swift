import Foundation
@testable import TripFormats
import TripKit
import TripTestSupport

/// A model using every attribute kind and every kind of relationship, and a graph of its objects, for
/// the object writers' and readers' tests.
enum ObjectGraph {
    static let model = ObjectModel(entities: [
        EntityDescription("Component", attributes: [
            AttributeDescription("i16", .int16, isOptional: false), AttributeDescription("i32", .int32),
            AttributeDescription("i64", .int64, isOptional: false), AttributeDescription("dec", .decimal),
            AttributeDescription("dbl", .double), AttributeDescription("flt", .float),
            AttributeDescription("flag", .bool, isOptional: false), AttributeDescription("when", .date),
            AttributeDescription("blob", .binary), AttributeDescription("uid", .uuid), AttributeDescription("link", .uri),
            AttributeDescription("note", .string), AttributeDescription("cache", .string, isTransient: true),
        ], relationships: [
            RelationshipDescription("item", to: "Item", inverse: "components"),
            RelationshipDescription("parts", to: "Component", toMany: true, ordered: true),
            RelationshipDescription("next", to: "Component"),
        ]),
        EntityDescription("Item", attributes: [AttributeDescription("name", .string, isOptional: false), AttributeDescription("weight", .double)],
                          relationships: [
                              RelationshipDescription("components", to: "Component", inverse: "item", toMany: true),
                              RelationshipDescription("categories", to: "Category", inverse: "items", toMany: true),
                          ], uniquenessConstraints: [["name"]]),
        EntityDescription("Category", attributes: [AttributeDescription("uid", .uuid, isOptional: false), AttributeDescription("label", .string)],
                          relationships: [RelationshipDescription("items", to: "Item", inverse: "categories", toMany: true)],
                          uniquenessConstraints: [["uid"]]),
        EntityDescription("Animal", attributes: [AttributeDescription("legs", .int16, isOptional: false)],
                          relationships: [RelationshipDescription("owner", to: "Item"),
                                          RelationshipDescription("friends", to: "Animal", toMany: true)]),
        EntityDescription("Dog", superentity: "Animal", attributes: [AttributeDescription("breed", .string)]),
        EntityDescription("Cat", superentity: "Animal", attributes: [AttributeDescription("lives", .int32)]),
    ])

    static func uuid(_ n: UInt8) -> ObjectValue {
        .uuid(UUIDBytes([0x1B, 0x9F, 0xD0, 0x0D, 0xCB, 0x92, 0x46, 0xCD, 0x87, 0x11, 0x52, 0x97, 0x02, 0x5B, 0x78, n])!)
    }
    static func ref(_ entity: Int, _ key: Int64) -> ObjectReference { ObjectReference(entity: entity, key: key) }
    static let origin = RecordOrigin(source: "-", record: 0)

    /// The graph: components 10, 20, 30 (keyed), items 1, 2 (named), categories 1, 2 (by UUID), an
    /// animal, two dogs and a cat sharing the animals' keys.
    static let objects: [ObjectRecord] = [
        ObjectRecord(entity: 0, key: 10, attributes: [
            .int(-32768), .int(2_147_483_647), .int(Int64.min), .decimal("-12345678901234567890.123456789"), .double(0.1), .double(-.infinity),
            .bool(true), .date(786_123_456.789_123_4), .data([0, 1, 2, 255]), uuid(1), .url("https://example.com/a?b=c,d"),
            .string("=SUM(A1),\"quoted\"\nnext line"), .null,
        ], relationships: [[ref(1, 1)], [ref(0, 30), ref(0, 20)], []], origin: origin),
        ObjectRecord(entity: 0, key: 20, attributes: [
            .int(0), .null, .int(7), .null, .null, .null, .bool(false), .date(-978_307_200), .data([]), .null, .null, .string(""), .null,
        ], relationships: [[ref(1, 1)], [], [ref(0, 10)]], origin: origin),
        ObjectRecord(entity: 0, key: 30, attributes: [
            .int(5), .int(-1), .int(Int64.max), .decimal("1e-7"), .double(1e300), .double(1.5), .bool(true), .date(0.000_000_1), .null, uuid(3),
            .url(""), .string("\\N\ttab, -1 'x"), .null,
        ], relationships: [[], [ref(0, 10)], [ref(0, 30)]], origin: origin),
        ObjectRecord(entity: 1, key: 1, attributes: [.string("Iron, \"cast\""), .double(7.5)],
                     relationships: [[ref(0, 10), ref(0, 20)], [ref(2, 2), ref(2, 1)]], origin: origin),
        ObjectRecord(entity: 1, key: 2, attributes: [.string(""), .null], relationships: [[], [ref(2, 1)]], origin: origin),
        ObjectRecord(entity: 2, key: 1, attributes: [uuid(0xA1), .string("metal")], relationships: [[ref(1, 1), ref(1, 2)]], origin: origin),
        ObjectRecord(entity: 2, key: 2, attributes: [uuid(0xA2), .null], relationships: [[ref(1, 1)]], origin: origin),
        ObjectRecord(entity: 3, key: 1, attributes: [.int(2)], relationships: [[ref(1, 2)], [ref(4, 2), ref(5, 4)]], origin: origin),
        ObjectRecord(entity: 4, key: 2, attributes: [.int(4), .string("Collie")], relationships: [[], [ref(3, 1)]], origin: origin),
        ObjectRecord(entity: 4, key: 3, attributes: [.int(3), .null], relationships: [[ref(1, 1)], []], origin: origin),
        ObjectRecord(entity: 5, key: 4, attributes: [.int(4), .int(9)], relationships: [[], [ref(4, 3), ref(4, 2), ref(3, 1)]], origin: origin),
    ]

    /// Records with their origins set aside, to compare what was written with what was read.
    static func plain(_ records: [ObjectRecord]) -> [ObjectRecord] {
        records.map { var r = $0; r.origin = origin; return r }
    }

    /// Writes `objects` with `writer`.
    static func write(_ objects: [ObjectRecord] = objects, model: ObjectModel = model, with writer: some ObjectRecordWriter) throws {
        var writer = writer
        try writer.begin(model)
        for o in objects { try writer.write(o) }
        try writer.finish()
    }

    /// Every item a reader gives.
    static func readAll(_ reader: some ObjectRecordReader) throws -> (objects: [ObjectRecord], rejected: [SetAsideRecord]) {
        var reader = reader
        var objects: [ObjectRecord] = [], rejected: [SetAsideRecord] = []
        while let item = try reader.next() {
            switch item {
            case .object(let o): objects.append(o)
            case .rejected(let r): rejected.append(r)
            }
        }
        return (objects, rejected)
    }
}
