import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// A model with every attribute kind and every kind of relationship, and objects of it, for the
/// graph writers' and readers' tests.
enum ObjectGraphSample {
    /// Thing (keyed by `@key`) with every attribute kind, a self-reference both ways, a many-to-many
    /// with Tag and an ordered to-many to Step; Gadget inherits from Thing and adds an attribute and
    /// a to-one to Tag; Tag is referred to by its unique name, Step by its unique UUID.
    static let model = ObjectModel(entities: [
        EntityDescription("Thing", attributes: [
            AttributeDescription("i16", .int16, isOptional: false, defaultValue: .int(7)),
            AttributeDescription("i32", .int32),
            AttributeDescription("i64", .int64, isOptional: false),
            AttributeDescription("dec", .decimal),
            AttributeDescription("dbl", .double),
            AttributeDescription("flt", .float),
            AttributeDescription("str", .string, isOptional: false),
            AttributeDescription("flag", .bool),
            AttributeDescription("when", .date),
            AttributeDescription("blob", .binary),
            AttributeDescription("uid", .uuid),
            AttributeDescription("link", .uri),
            AttributeDescription("xf", .transformable, valueClassName: "NSArray"),
            AttributeDescription("scratch", .string, isTransient: true),
        ], relationships: [
            RelationshipDescription("parent", to: "Thing", inverse: "children"),
            RelationshipDescription("children", to: "Thing", inverse: "parent", toMany: true),
            RelationshipDescription("tags", to: "Tag", inverse: "things", toMany: true),
            RelationshipDescription("steps", to: "Step", inverse: "thing", toMany: true, ordered: true, deleteRule: .cascade),
        ]),
        EntityDescription("Gadget", superentity: "Thing", attributes: [AttributeDescription("power", .int64)],
                          relationships: [RelationshipDescription("owner", to: "Tag")]),
        EntityDescription("Tag", attributes: [AttributeDescription("name", .string, isOptional: false)],
                          relationships: [RelationshipDescription("things", to: "Thing", inverse: "tags", toMany: true)],
                          uniquenessConstraints: [["name"]]),
        EntityDescription("Step", attributes: [AttributeDescription("id", .uuid, isOptional: false), AttributeDescription("order", .int32)],
                          relationships: [RelationshipDescription("thing", to: "Thing", inverse: "steps")],
                          uniquenessConstraints: [["id"]]),
    ])

    static let uuid1 = UUIDBytes(string: "1B9FD00D-CB92-46CD-8711-5297025B7822")!
    static let uuid2 = UUIDBytes(string: "00000000-0000-4000-8000-00000000000A")!
    static let step1 = UUIDBytes(string: "A0A0A0A0-0000-4000-8000-000000000001")!
    static let step2 = UUIDBytes(string: "0B0B0B0B-0000-4000-8000-000000000002")!

    static func ref(_ entity: Int, _ key: Int64) -> ObjectReference { ObjectReference(entity: entity, key: key) }

    /// The objects, entity by entity in key order; Tag and Step keys 1, 2, … as a reader numbers them.
    static var objects: [ObjectRecord] {
        let origin = RecordOrigin(source: "test", record: 0)
        func thing(_ e: Int, _ key: Int64, _ values: [ObjectValue], _ rels: [[ObjectReference]]) -> ObjectRecord {
            ObjectRecord(entity: e, key: key, attributes: values, relationships: ObjectRelationships(rels), origin: origin)
        }
        let full: [ObjectValue] = [
            .int(-32768), .int(2_147_483_647), .int(Int64.min), .decimal("12.5"), .double(1e-05), .double(0.1),
            .string("quote \" back \\ nl \n tab \t sep \u{2028} true é 東京"), .bool(true),
            .date(752_000_000 + 123_456_789 / 1e9), .data([0, 1, 2, 250, 255]), .uuid(uuid1), .url("https://example.com/a?b=c&d"),
            .data(Array("<plist/>".utf8)), .null,
        ]
        let sparse: [ObjectValue] = [
            .int(7), .null, .int(0), .null, .double(.infinity), .null, .string("true"), .bool(false),
            .date(-978_307_200), .null, .null, .null, .null, .null,
        ]
        return [
            thing(0, 1, full, [[], [ref(0, 2), ref(1, 5)], [ref(2, 1), ref(2, 2)], [ref(3, 2), ref(3, 1)]]),
            thing(0, 2, sparse, [[ref(0, 1)], [], [ref(2, 2)], []]),
            thing(1, 5, sparse + [.int(9000)], [[ref(0, 1)], [ref(1, 5)], [], [], [ref(2, 3)]]),
            thing(2, 1, [.string("Iron")], [[ref(0, 1)]]),
            thing(2, 2, [.string("null")], [[ref(0, 1), ref(0, 2)]]),
            thing(2, 3, [.string("- x: y")], [[]]),
            thing(3, 1, [.uuid(step1), .int(1)], [[ref(0, 1)]]),
            thing(3, 2, [.uuid(step2), .null], [[ref(0, 1)]]),
        ]
    }

    /// Writes the sample objects in `format` to `path`.
    static func write(_ format: Format, to path: String) throws {
        switch format {
        case .yaml:
            var writer = try YAMLObjectWriter(.file(path))
            try drive(&writer)
        default:
            var writer = try JSONObjectWriter(.file(path), format: format)
            try drive(&writer)
        }
    }

    /// Gives `objects` of `model` (the sample's unless told) to `writer`, and finishes it.
    static func drive<W: ObjectRecordWriter>(_ writer: inout W, model: ObjectModel = model, objects: [ObjectRecord] = objects) throws {
        try writer.begin(model)
        for o in objects { try writer.write(o) }
        try writer.finish()
    }

    /// Everything read from `path`: objects (sorted by entity and key) and rejections; whether the
    /// objects came entity by entity in the model's order.
    static func read(_ format: Format, from path: String) throws -> (objects: [ObjectRecord], rejected: [SetAsideRecord], inModelOrder: Bool) {
        var objects: [ObjectRecord] = [], rejected: [SetAsideRecord] = []
        func drain<R: ObjectRecordReader>(_ reader: inout R) throws {
            while let item = try reader.next() {
                switch item {
                case .object(let o): objects.append(o)
                case .rejected(let r): rejected.append(r)
                }
            }
        }
        if format == .yaml {
            var reader = try YAMLObjectReader(.file(path), model: model)
            try drain(&reader)
        } else {
            var reader = try JSONObjectReader(.file(path), format: format, model: model)
            try drain(&reader)
        }
        let inOrder = zip(objects, objects.dropFirst()).allSatisfy { $0.entity <= $1.entity }
        return (objects.sorted { ($0.entity, $0.key) < ($1.entity, $1.key) }, rejected, inOrder)
    }

    /// The parts of an object that a round trip keeps (not where it was read from).
    static func content(_ o: ObjectRecord) -> String { "\(o.entity) \(o.key) \(o.attributes) \(o.relationships)" }
}
