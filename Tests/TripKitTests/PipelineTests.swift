import Testing
import TripKit
import TripTestSupport

@Suite("Pipeline: read, detect, migrate, dedupe, write, and account for every record")
struct PipelineTests {
    static let v1 = SchemaVersion(1, 0, 0), v3 = SchemaVersion(3, 0, 0)

    func input(_ name: String, version: SchemaVersion, _ items: [ReadItem]) -> PipelineInput {
        PipelineInput(name: name) {
            ArrayReader(items: items, detection: Detection(format: "test", version: version, evidence: .fields(["x"])))
        }
    }

    func trip(_ t: TestTrip, _ version: SchemaVersion, _ record: Int, source: String = "a") -> ReadItem {
        .trip(TripRecord(object: object(t, version: version), origin: RecordOrigin(source: source, record: record)))
    }

    @Test("inputs of different versions are migrated on their own and deduplicated across all, in first-seen order")
    func acrossInputs() throws {
        let writer = CollectingWriter()
        var p = Pipeline()
        p.keepsGoing = true
        var ledger: [SetAsideRecord] = []
        let summary = try p.run([
            input("a", version: Self.v1, [trip(TestTrip(name: "X"), Self.v1, 1), trip(TestTrip(name: "Y"), Self.v1, 2),
                                          trip(TestTrip(name: "X", destination: "X2"), Self.v1, 3)]),
            input("b", version: Self.v3, [trip(TestTrip(name: "Z"), Self.v3, 1, source: "b"),
                                          trip(TestTrip(name: "Y", destination: "Y2"), Self.v3, 2, source: "b")]),
        ], into: { writer }, setAside: { ledger.append($0) })
        #expect(writer.objects == [object(TestTrip(name: "X", destination: "X2")), object(TestTrip(name: "Y", destination: "Y2")),
                                   object(TestTrip(name: "Z"))])
        #expect(writer.finished)
        #expect(summary.read == 5 && summary.written == 3 && summary.merged == 2 && summary.rejected == 0)
        #expect(summary.inputs[0].stages == ["1.0.0 -> 2.0.0 (custom)", "2.0.0 -> 3.0.0 (lightweight)"])
        #expect(summary.inputs[1].stages.isEmpty)
        #expect(ledger.count == 2)
    }

    /// A writer that logs each trip it gets among the pipeline's other events.
    final class EventWriter: RecordWriter {
        var events: [String]
        let needsShape: Bool
        var objects: [ModelObject] = []
        init(events: [String], needsShape: Bool) { self.events = events; self.needsShape = needsShape }
        func write(_ object: ModelObject) throws {
            objects.append(object)
            events.append("write")
        }
        func finish() throws { events.append("finish") }
    }

    @Test("where the target's name is not unique, each input's trips are written before the next input is read, unless the writer needs the shape")
    func streamsInputs() throws {
        func run(needsShape: Bool) throws -> (EventWriter, [String], ConversionSummary) {
            var opened: [String] = []
            let writer = EventWriter(events: [], needsShape: needsShape)
            var p = Pipeline()
            p.targetVersion = Self.v1
            let inputs = ["a", "b", "c"].map { name in
                PipelineInput(name: name) {
                    opened.append(name)
                    writer.events.append("open \(name)")
                    return ArrayReader(items: [self.trip(TestTrip(name: "X"), Self.v3, 1, source: name),
                                               self.trip(TestTrip(name: name), Self.v3, 2, source: name)],
                                       detection: Detection(format: "test", version: Self.v3, evidence: .fields(["x"])))
                }
            }
            let summary = try p.run(inputs, into: { writer })
            return (writer, opened, summary)
        }
        let (streaming, _, s1) = try run(needsShape: false)
        let (holding, _, s2) = try run(needsShape: true)
        #expect(streaming.events == ["open a", "write", "write", "open b", "write", "write", "open c", "write", "write", "finish"])
        #expect(holding.events == ["open a", "open b", "open c", "write", "write", "write", "write", "write", "write", "finish"])
        #expect(streaming.objects == holding.objects && streaming.objects.count == 6)
        #expect(s1.written == 6 && s2.written == 6 && s1.read == 6 && s1.merged == 0)
    }

    @Test("a 3.0.0 input that breaks its own uniqueness is deduplicated too")
    func v3Duplicates() throws {
        let writer = CollectingWriter()
        let summary = try Pipeline().run([input("a", version: Self.v3, [trip(TestTrip(name: "X"), Self.v3, 1), trip(TestTrip(name: "X"), Self.v3, 2)])],
                                         into: { writer })
        #expect(writer.objects.count == 1)
        #expect(summary.deduplicatedAcrossInputs == 1)
    }

    @Test("with target 1.0.0 no stage runs and duplicates stay")
    func target1() throws {
        let writer = CollectingWriter()
        var p = Pipeline()
        p.targetVersion = Self.v1
        let summary = try p.run([input("a", version: Self.v1, [trip(TestTrip(name: "X"), Self.v1, 1), trip(TestTrip(name: "X"), Self.v1, 2)])],
                                into: { writer })
        #expect(writer.objects.count == 2)
        #expect(summary.merged == 0 && summary.inputs[0].stages.isEmpty)
    }

    @Test("a bad record fails the run, aborts the writer and names the place, unless rejects are kept")
    func badRecord() throws {
        let bad = ReadItem.rejected(SetAsideRecord(origin: RecordOrigin(source: "a.json", record: 2, line: 9, column: 3),
                                                   reason: "missing required field 'name'"))
        let writer = CollectingWriter()
        #expect {
            try Pipeline().run([input("a", version: Self.v3, [trip(TestTrip(name: "X"), Self.v3, 1), bad])], into: { writer })
        } throws: { ($0 as? TripError)?.message == "a.json:9:3: missing required field 'name'" }
        #expect(writer.aborted && !writer.finished)

        let keeping = CollectingWriter()
        var p = Pipeline()
        p.keepsGoing = true
        var set: [SetAsideRecord] = []
        let s = try p.run([input("a", version: Self.v3, [trip(TestTrip(name: "X"), Self.v3, 1), bad])], into: { keeping }, setAside: { set.append($0) })
        #expect(keeping.objects.count == 1 && s.rejected == 1 && s.read == 2 && set.count == 1)
    }

    @Test("read = written + merged + dropped + rejected, under every policy", arguments: [DeduplicationPolicy.merge, .last, .first])
    func accounting(policy: DeduplicationPolicy) throws {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<25 {
            var items: [ReadItem] = []
            let n = Int(rng.next() % 40)
            for i in 0..<n {
                if rng.next() % 7 == 0 {
                    items.append(.rejected(SetAsideRecord(origin: RecordOrigin(source: "a", record: i + 1), reason: "bad")))
                } else {
                    items.append(trip(TestTrip(name: "N\(rng.next() % 10)"), Self.v1, i + 1))
                }
            }
            var p = Pipeline()
            p.policy = policy
            p.keepsGoing = true
            let s = try p.run([input("a", version: Self.v1, items)], into: { CollectingWriter() })
            #expect(s.read == n)
            #expect(s.read == s.written + s.merged + s.dropped + s.rejected)
        }
    }

    /// A store-like writer that merges the 2nd trip it is given into an earlier one and rejects the 3rd,
    /// naming each by the origin it was given.
    final class LedgerWriter: RecordWriter, LedgerKeeping {
        var given = 0
        var entries: [SetAsideRecord] = []
        func forEachLedgerEntry(_ body: (SetAsideRecord) throws -> Void) throws { try entries.forEach(body) }
        func write(_ object: ModelObject) throws {
            try write(object, origin: RecordOrigin(source: "out.sqlite", record: given + 1))
        }
        func write(_ object: ModelObject, origin: RecordOrigin) throws {
            given += 1
            if given == 2 { entries.append(SetAsideRecord(kind: .merged, origin: origin, reason: "merged into the stored trip")) }
            if given == 3 { entries.append(SetAsideRecord(kind: .rejected, origin: origin, reason: "the store refused it")) }
        }
        func finish() throws {}
    }

    @Test("trips a store merges or rejects count once, not also as written, and carry their input origin")
    func storeLedger() throws {
        let items = (1...4).map { trip(TestTrip(name: "T\($0)"), Self.v3, $0, source: "in.json") }
        var seen: [SetAsideRecord] = []
        var p = Pipeline()
        p.keepsGoing = true
        let s = try p.run([input("in.json", version: Self.v3, items)], into: { LedgerWriter() }) { seen.append($0) }
        #expect(s.read == 4)
        #expect(s.written == 2)
        #expect(s.merged == 1)
        #expect(s.rejected == 1)
        #expect(s.read == s.written + s.merged + s.dropped + s.rejected)
        #expect(seen.map(\.origin.source) == ["in.json", "in.json"])
        #expect(seen.map(\.origin.record) == [2, 3])
    }
}
