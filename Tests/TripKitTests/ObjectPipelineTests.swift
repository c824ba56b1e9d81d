import Testing
import TripKit

/// The object pipeline accounts for every record and leaves no output when it fails.
@Suite struct ObjectPipelineTests {
    static let model = ObjectModel(entities: [
        EntityDescription("Item", attributes: [AttributeDescription("name", .string, isOptional: false)],
                          uniquenessConstraints: [["name"]]),
        EntityDescription("Tag", attributes: [AttributeDescription("label", .string)],
                          relationships: [RelationshipDescription("items", to: "Item", toMany: true)]),
    ])

    struct ListReader: ObjectRecordReader {
        var model: ObjectModel { ObjectPipelineTests.model }
        var items: [ObjectReadItem]
        mutating func next() throws -> ObjectReadItem? { items.isEmpty ? nil : items.removeFirst() }
    }

    struct ListWriter: ObjectRecordWriter {
        var began: ObjectModel?
        var written: [ObjectRecord] = []
        var finished = false, aborted = false
        var failAt: Int?
        struct Failure: Error {}
        mutating func begin(_ model: ObjectModel) throws { began = model }
        mutating func write(_ object: ObjectRecord) throws {
            if written.count == failAt { throw Failure() }
            written.append(object)
        }
        mutating func finish() throws { finished = true }
        mutating func abort() { aborted = true }
    }

    static func object(_ entity: Int, _ key: Int64, _ value: String) -> ObjectRecord {
        ObjectRecord(entity: entity, key: key, attributes: [.string(value)], relationships: entity == 1 ? [[]] : [],
                     origin: RecordOrigin(source: "s", record: Int(key)))
    }

    @Test func everyRecordIsWrittenOrSetAside() throws {
        let bad = SetAsideRecord(origin: RecordOrigin(source: "s", record: 2), reason: "ZNAME: a BLOB where text belongs")
        var reader = ListReader(items: [.object(Self.object(0, 1, "a")), .rejected(bad), .object(Self.object(1, 3, "t"))])
        var writer = ListWriter()
        var summary = ObjectConversionSummary()
        var setAside: [SetAsideRecord] = []
        try ObjectPipeline.run(&reader, into: &writer, summary: &summary) { setAside.append($0) }
        #expect(writer.began == Self.model && writer.finished && !writer.aborted)
        #expect(writer.written.map(\.key) == [1, 3])
        #expect(setAside == [bad])
        #expect(summary.read == 3 && summary.written == 2 && summary.rejected == 1 && summary.counts == [1, 1])
        #expect(summary.line(elapsedSeconds: 0.004) == "read 3 objects; wrote 2 (Item 1, Tag 1); rejected 1; 0.004 s")
    }

    @Test func anObjectWithoutARequiredValueIsSetAside() throws {
        var nameless = Self.object(0, 2, "x")
        nameless.attributes[0] = .null
        var tagless = Self.object(1, 3, "t")
        tagless.attributes[0] = .null
        var reader = ListReader(items: [.object(Self.object(0, 1, "a")), .object(nameless), .object(tagless)])
        var writer = ListWriter()
        var summary = ObjectConversionSummary()
        var setAside: [SetAsideRecord] = []
        try ObjectPipeline.run(&reader, into: &writer, summary: &summary) { setAside.append($0) }
        // Item.name is required; Tag.label is optional.
        #expect(writer.written.map(\.key) == [1, 3])
        #expect(setAside.map(\.reason) == ["Item.name: no value, and the model requires one"])
        #expect(setAside.first?.origin == nameless.origin)
        #expect(summary.read == 3 && summary.written == 2 && summary.rejected == 1)
    }

    @Test func aFailingWriterIsAborted() {
        var reader = ListReader(items: [.object(Self.object(0, 1, "a")), .object(Self.object(0, 2, "b"))])
        var writer = ListWriter(failAt: 1)
        var summary = ObjectConversionSummary()
        #expect(throws: ListWriter.Failure.self) {
            try ObjectPipeline.run(&reader, into: &writer, summary: &summary) { _ in }
        }
        #expect(writer.aborted && !writer.finished)
    }
}
