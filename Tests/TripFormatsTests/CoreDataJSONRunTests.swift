import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// A store's rows written straight as JSON and JSON Lines (`CoreDataJSONRun`) against the general way
/// (`ObjectPipeline` over the reader's `ObjectRecord`s into the same writer), on stores Python's sqlite3
/// wrote with every attribute kind, damaged in the ways a store can be: the same bytes, the same
/// records set aside with the same reasons, the same counts, the same error and no output.
@Suite("A store's rows straight to JSON", .needsPython3)
struct CoreDataJSONRunTests {
    let scratch = ScratchDirectory()
    typealias L = LibraryStore

    /// What a run gave: the output's bytes (nil when absent), the records set aside, the summary, the error.
    struct Outcome: Equatable {
        var bytes: [UInt8]?
        var setAside: [String]
        var counts: String
        var error: String?
    }

    /// The library model as the fixture has it (`Author` names itself by value: its objects wait, the rest
    /// go straight after them), with no unique attribute (every entity straight), or with `Tag` named by
    /// its label too (`Book` and `Media` wait for `Tag`, `Video` goes straight after them).
    static let models: [(String, ObjectModel)] = {
        var plain = L.model
        plain.entities[L.author].uniquenessConstraints = []
        var tags = L.model
        tags.entities[L.tag].uniquenessConstraints = [["label"]]
        return [("as written", L.model), ("no unique attribute", plain), ("tags by label", tags)]
    }()

    func run(_ store: String, _ model: ObjectModel, _ format: Format, straight: Bool) throws -> Outcome {
        // One name for both ways: a message may name the output.
        let path = scratch.path("out.\(format.rawValue)")
        try? FileManager.default.removeItem(atPath: path)
        var writer = try JSONObjectWriter(.file(path), format: format)
        var summary = ObjectConversionSummary()
        var setAside: [String] = []
        var error: String?
        do {
            let reader = try CoreDataObjectReader(path: store, model: model)
            let note: (SetAsideRecord) throws -> Void = { setAside.append("\($0.place): \($0.reason)") }
            if straight {
                try CoreDataJSONRun.run(reader, into: &writer, summary: &summary, setAside: note)
            } else {
                var source = reader
                try ObjectPipeline.run(&source, into: &writer, summary: &summary, setAside: note)
            }
        } catch let e as TripError {
            error = "\(e.kind) \(e.message)"
        }
        let bytes = FileManager.default.contents(atPath: path).map { [UInt8]($0) }
        return Outcome(bytes: bytes, setAside: setAside, counts: summary.line(elapsedSeconds: 0), error: error)
    }

    /// Both ways, every model and format, on the store `damage` (SQL run on the fixture) leaves.
    func compare(_ damage: String) throws -> [Outcome] {
        let store = scratch.path("library.store")
        try? FileManager.default.removeItem(atPath: store)
        try L.write(store, damage.isEmpty ? [] : ["damage=" + damage])
        var outcomes: [Outcome] = []
        for (name, model) in Self.models {
            for format in [Format.json, .jsonl] {
                let general = try run(store, model, format, straight: false)
                let straight = try run(store, model, format, straight: true)
                #expect(straight == general, "\(name), \(format.rawValue), damage \(damage)")
                outcomes.append(straight)
            }
        }
        return outcomes
    }

    @Test("every attribute kind and relationship: the bytes of the general way, checked by python3's json")
    func sameBytes() throws {
        let outcomes = try compare("")
        for outcome in outcomes {
            #expect(outcome.error == nil && outcome.setAside.isEmpty)
            #expect(outcome.bytes != nil)
        }
        // An independent reader: every line of JSON Lines and the JSON document parse, with every object.
        let path = scratch.path("check.jsonl")
        try Data(outcomes[1].bytes ?? []).write(to: URL(fileURLWithPath: path))
        let r = try ExternalTool.python("import json, sys\nrows = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]\n"
                                        + "print(len(rows), sorted({r['@entity'] for r in rows}))", [path])
        #expect(r.out.trimmingCharacters(in: .whitespacesAndNewlines) == "13 ['Audio', 'Author', 'Book', 'Media', 'Tag', 'Video']")
    }

    @Test("values a column holds in another storage class than its kind's, or out of range: set aside alike",
          arguments: [
            "UPDATE ZAUTHOR SET ZCOUNT16 = 'many' WHERE Z_PK = 2; UPDATE ZTAG SET ZLABEL = X'00' WHERE Z_PK = 3; "
                + "UPDATE ZAUTHOR SET ZACTIVE = 2 WHERE Z_PK = 3; UPDATE ZMEDIA SET ZSECONDS = 3000000000 WHERE Z_PK = 1;",
            "UPDATE ZBOOK SET ZTITLE = CAST(X'C328' AS TEXT) WHERE Z_PK = 4; UPDATE ZAUTHOR SET ZID = X'0011' WHERE Z_PK = 1;",
            "UPDATE ZAUTHOR SET ZCOUNT16 = 40000, ZCOUNT32 = 5.5, ZCOUNT64 = 'x', ZBORN = 'today' WHERE Z_PK = 1;",
            "UPDATE ZAUTHOR SET ZRATING = 9e999, ZSCORE = 3, ZBORN = 12, ZPRICE = 'abc', ZHOMEPAGE = 7 WHERE Z_PK = 2;",
            "UPDATE ZBOOK SET ZTITLE = 'a\"b\\c' || char(10) || char(8232) || char(133) || char(1) || 'é☕' WHERE Z_PK = 2;",
            "UPDATE ZAUTHOR SET ZACTIVE = 1.0, ZPHOTO = 'text', ZSETTINGS = 5, ZID = 'id' WHERE Z_PK = 3;",
          ])
    func wrongValues(damage: String) throws {
        // Where an object named by value is set aside, a reference to it is an error (no output) both ways.
        let outcomes = try compare(damage)
        #expect(outcomes.contains { $0.bytes != nil })
    }

    @Test("an object without a value its model requires: set aside alike, and a reference by value to it the same error",
          arguments: ["UPDATE ZAUTHOR SET ZNAME = NULL WHERE Z_PK = 3;", "UPDATE ZAUTHOR SET ZNAME = NULL WHERE Z_PK = 2;"])
    func requiredValue(damage: String) throws {
        let outcomes = try compare(damage)
        #expect(outcomes.allSatisfy { $0.setAside.contains { $0.contains("Author.name: no value, and the model requires one") } })
    }

    @Test("dangling references and rows of no entity: the same error, no output",
          arguments: ["UPDATE ZBOOK SET ZAUTHOR = 99 WHERE Z_PK = 3;", "INSERT INTO Z_2TAGS VALUES (2, 42, 2);",
                      "UPDATE ZTAG SET ZFEATURED = 4 WHERE Z_PK = 2;", "INSERT INTO Z_2TAGS VALUES (NULL, 1, 3);",
                      "INSERT INTO Z_2TAGS VALUES (9, 1, 3);", "UPDATE ZAUTHOR SET ZMENTOR = 7 WHERE Z_PK = 3;",
                      "UPDATE ZTAG SET ZFEATURED = 1 WHERE Z_PK = 2; UPDATE ZMEDIA SET Z_ENT = 2 WHERE Z_PK = 1;",
                      "UPDATE ZMEDIA SET ZBOOK = 2 WHERE Z_PK = 1; UPDATE ZBOOK SET Z_ENT = 6 WHERE Z_PK = 2;",
                      "UPDATE ZBOOK SET ZAUTHOR = 99 WHERE Z_PK = 3; UPDATE ZAUTHOR SET ZCOUNT16 = 'many' WHERE Z_PK = 2;"])
    func dangling(damage: String) throws {
        let outcomes = try compare(damage)
        #expect(outcomes.allSatisfy { $0.error?.hasPrefix("data ") == true && $0.bytes == nil })
    }

    @Test("a run (ObjectConversion) of a store to JSON Lines and JSON, its model told from its tables: the general way's bytes",
          arguments: [Format.jsonl, .json])
    func conversion(format: Format) throws {
        let store = scratch.path("library.store")
        try L.write(store)
        var outputs: [Data?] = []
        for straight in [true, false] {
            var run = try ObjectConversion(input: store, modelPath: nil, options: RunOptions())
            run.writesRowsStraight = straight
            let path = scratch.path("run-\(straight).\(format.rawValue)")
            let summary = try run.run(to: .file(path), format: format) { Issue.record("set aside: \($0.reason)") }
            #expect(summary.written == 13)
            outputs.append(FileManager.default.contents(atPath: path))
        }
        #expect(outputs[0] != nil && outputs[0] == outputs[1])
    }
}
