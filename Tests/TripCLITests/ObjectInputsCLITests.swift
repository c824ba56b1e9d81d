import Foundation
import Testing
import TripKit
import TripTestSupport

/// The inputs of runs over another app's objects (issue 26): standard input (an export read with
/// `--model`, a piped store) from a temporary copy; several inputs, each to its own output under
/// `--output-dir`; `detect` of a store on standard input or in an archive; a Decimal default in a
/// model cache; tripgen's exit statuses.
@Suite("another app's objects: standard input, several inputs, archives", .needsPython3)
struct ObjectInputsCLITests {
    /// A model whose objects `ModelStoreWriter`'s rows (no values) satisfy: every attribute optional.
    static let model = ObjectModel(entities: [
        EntityDescription("Shelf", attributes: [AttributeDescription("label", .string), AttributeDescription("width", .double)],
                          relationships: [RelationshipDescription("books", to: "Volume", inverse: "shelf", toMany: true)]),
        EntityDescription("Volume", attributes: [AttributeDescription("id", .uuid), AttributeDescription("price", .decimal)],
                          relationships: [RelationshipDescription("shelf", to: "Shelf", inverse: "books")]),
    ], versionIdentifiers: ["2.1.0"])

    /// A store of `model` (written in Python, as Core Data lays one out) in a fresh directory.
    static func store(rows: Int = 2) throws -> (dir: String, store: String) {
        let dir = try CLI.temporaryDirectory().path
        try #require(try ModelStoreWriter.write(model, to: dir + "/shelf.store", rows: rows).status == 0)
        return (dir, dir + "/shelf.store")
    }

    static func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    static func files(_ dir: String) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: dir).sorted() }

    /// A store, an empty `--temp-dir` beside it, and the JSON Lines the store converts to directly.
    static func storeWithTemp() throws -> (dir: String, store: String, temp: String, expected: String) {
        let (dir, store) = try Self.store()
        try FileManager.default.createDirectory(atPath: dir + "/temp", withIntermediateDirectories: true)
        #expect(try CLI.tripconv(store, "-q", "-o", dir + "/direct.jsonl").status == 0)
        return (dir, store, dir + "/temp", try Self.read(dir + "/direct.jsonl"))
    }

    @Test("--model M - reads an export from standard input, and a piped store reads as the store does; the copy is removed")
    func standardInput() throws {
        let (dir, store, temp, expected) = try Self.storeWithTemp()
        for format in ["json", "jsonl", "yaml", "xml"] {
            #expect(try CLI.tripconv(store, "-q", "-o", dir + "/export." + format).status == 0)
            let export = try Data(contentsOf: URL(fileURLWithPath: dir + "/export." + format))
            let back = try CLI.run(CLI.binary, ["--model", store, "--from", format, "--temp-dir", temp, "-q", "-o", dir + "/back.jsonl", "-"], stdin: export)
            #expect(back.status == 0, "\(format): \(back.stderr)")
            #expect(try Self.read(dir + "/back.jsonl") == expected, "\(format)")
            #expect(try Self.files(temp).isEmpty, "\(format)")
        }
        // Told by its bytes, without --from.
        let json = try Data(contentsOf: URL(fileURLWithPath: dir + "/export.json"))
        let sniffed = try CLI.run(CLI.binary, ["--model", store, "--temp-dir", temp, "-q", "-"], stdin: json)
        #expect(sniffed.status == 0 && sniffed.out == expected, "\(sniffed.stderr)")
        let storeBytes = try Data(contentsOf: URL(fileURLWithPath: store))
        let piped = try CLI.run(CLI.binary, ["--temp-dir", temp, "--to", "json", "-o", dir + "/piped.json"], stdin: storeBytes)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stderr.hasPrefix("tripconv: read 4 objects; wrote 4 (Shelf 2, Volume 2); rejected 0"), "\(piped.stderr)")
        // Python's json reads what the piped store gave: both shelves and both volumes, by their keys.
        let check = try CLI.python("""
            import json, sys
            d = json.load(open(sys.argv[1]))
            assert len({s["@key"] for s in d["Shelf"]}) == 2 and len({v["@key"] for v in d["Volume"]}) == 2, d
            print("ok")
            """, [dir + "/piped.json"])
        #expect(check.out == "ok\n", "\(check.stderr)")
        #expect(try Self.files(temp).isEmpty)
    }

    @Test("standard input that is no export of the model: exit 65 naming <stdin>, nothing written, the copy removed")
    func standardInputBad() throws {
        let (dir, store) = try Self.store()
        let temp = dir + "/temp"
        try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: true)
        let r = try CLI.run(CLI.binary, ["--model", store, "--from", "json", "--temp-dir", temp, "-o", dir + "/out.jsonl", "-"],
                            stdin: Data("{\"Shelf\": [{\"label\": \"a\",}]}".utf8))
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("tripconv: <stdin>:1:"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.jsonl"))
        #expect(try Self.files(temp).isEmpty)
        // A SampleTrips store piped in is still to be named, as before.
        let sample = try CLI.run(CLI.binary, ["--temp-dir", temp, "-"], stdin: Data(contentsOf: CLI.root.appendingPathComponent("samples/coredata-v3.store")))
        #expect(sample.status == 64 && sample.stderr.contains("a SampleTrips store is read in place"), "\(sample.stderr)")
        #expect(try Self.files(temp).isEmpty)
    }

    @Test("several stores with --output-dir: each to its own output, paths under a directory kept, accounted for per input")
    func outputDir() throws {
        let (dir, store) = try Self.store()
        try FileManager.default.createDirectory(atPath: dir + "/in/sub", withIntermediateDirectories: true)
        try #require(try ModelStoreWriter.write(Self.model, to: dir + "/in/sub/b.store", rows: 3).status == 0)
        try FileManager.default.copyItem(atPath: store, toPath: dir + "/in/a.store")
        let r = try CLI.tripconv(dir + "/in", "--output-dir", dir + "/out", "--to", "json", "--report", dir + "/report.json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: \(dir)/in/a.store: read 4 objects; wrote 4 (Shelf 2, Volume 2)"), "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: \(dir)/in/sub/b.store: read 6 objects; wrote 6 (Shelf 3, Volume 3)"), "\(r.stderr)")
        let check = try CLI.python("""
            import json, sys
            out, report = sys.argv[1], json.load(open(sys.argv[2]))
            a, b = json.load(open(out + "/a.json")), json.load(open(out + "/sub/b.json"))
            assert (len(a["Shelf"]), len(b["Shelf"]), len(a["Volume"]), len(b["Volume"])) == (2, 3, 2, 3), (a, b)
            assert report["status"] == "ok" and (report["read"], report["written"]) == (10, 10), report
            print([(i["input"][len(out) - 3:], i["output"][len(out):], i["written"], i["status"]) for i in report["inputs"]])
            """, [dir + "/out", dir + "/report.json"])
        #expect(check.out == "[('in/a.store', '/a.json', 4, 'ok'), ('in/sub/b.store', '/sub/b.json', 6, 'ok')]\n", "\(check.stderr)")
        // CSV: a directory of tables per input.
        #expect(try CLI.tripconv(dir + "/in/a.store", dir + "/in/sub/b.store", "--output-dir", dir + "/csv", "--to", "csv", "-q").status == 0)
        #expect(try Self.files(dir + "/csv") == ["a", "b"] && Self.files(dir + "/csv/b") == ["Shelf.csv", "Volume.csv"])
    }

    @Test("a directory of CSV tables needs no --from: one input, as detect takes it; a single table file is refused (64) naming it")
    func tablesWithoutFrom() throws {
        let (dir, store, _, expected) = try Self.storeWithTemp()
        #expect(try CLI.tripconv(store, "--to", "csv", "-q", "-o", dir + "/tables").status == 0)
        let r = try CLI.tripconv(dir + "/tables", "--model", store, "-o", dir + "/back.jsonl")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.read(dir + "/back.jsonl") == expected)
        let one = try CLI.tripconv(dir + "/tables/Shelf.csv", "--model", store, "-o", dir + "/one.jsonl")
        #expect(one.status == 64 && !FileManager.default.fileExists(atPath: dir + "/one.jsonl"))
        #expect(one.stderr == "tripconv: \(dir)/tables/Shelf.csv: the objects of a model in csv are a directory of tables, one file per entity; "
                + "name the directory\n", "\(one.stderr)")
        // Under a directory of inputs, a directory of tables is one input, its output named as it.
        try FileManager.default.createDirectory(atPath: dir + "/in/sub", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: dir + "/tables", toPath: dir + "/in/sub/tables")
        try FileManager.default.copyItem(atPath: dir + "/direct.jsonl", toPath: dir + "/in/a.jsonl")
        let bulk = try CLI.tripconv(dir + "/in", "--model", store, "--output-dir", dir + "/out", "--to", "jsonl", "-q")
        #expect(bulk.status == 0, "\(bulk.stderr)")
        #expect(try Self.files(dir + "/out") == ["a.jsonl", "sub"] && Self.files(dir + "/out/sub") == ["tables.jsonl"])
        #expect(try Self.read(dir + "/out/sub/tables.jsonl") == expected && Self.read(dir + "/out/a.jsonl") == expected)
    }

    @Test("an export read with --model naming a store without a model cache says (-v) its model came from the store's tables")
    func modelFromTables() throws {
        let dir = try CLI.temporaryDirectory().path
        try #require(try ModelStoreWriter.write(Self.model, to: dir + "/old.store", rows: 2, damage: "nocache").status == 0)
        #expect(try CLI.tripconv(dir + "/old.store", "-q", "-o", dir + "/out.jsonl").status == 0)
        let r = try CLI.tripconv(dir + "/out.jsonl", "--model", dir + "/old.store", "-v", "-o", dir + "/back.jsonl")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("the model from the store's tables\n"), "\(r.stderr)")
        #expect(try Self.read(dir + "/back.jsonl") == Self.read(dir + "/out.jsonl"))
    }

    @Test("--output-dir: an input that fails is said and its output absent; the others are written; the first failure's status")
    func outputDirFailure() throws {
        let (dir, store) = try Self.store()
        try #require(try ModelStoreWriter.write(Self.model, to: dir + "/bad.store", damage: "truncate").status == 0)
        let r = try CLI.tripconv(dir + "/bad.store", store, "--output-dir", dir + "/out", "--report", dir + "/report.json")
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("tripconv: \(dir)/bad.store: Z_MODELCACHE.Z_CONTENT: a damaged model cache"), "\(r.stderr)")
        #expect(try Self.files(dir + "/out") == ["shelf.jsonl"])
        let check = try CLI.python("""
            import json, sys
            r = json.load(open(sys.argv[1]))
            print(r["status"], r["exitStatus"], [(i["status"], i.get("exitStatus"), i.get("written")) for i in r["inputs"]])
            """, [dir + "/report.json"])
        #expect(check.out == "failed 65 [('failed', 65, None), ('ok', None, 4)]\n", "\(check.stderr)")
    }

    @Test("-o with several inputs of another app's model is refused (64), naming --output-dir; nothing written")
    func severalToOne() throws {
        let (dir, store) = try Self.store()
        try FileManager.default.copyItem(atPath: store, toPath: dir + "/copy.store")
        let r = try CLI.tripconv(store, dir + "/copy.store", "-o", dir + "/all.json")
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("tripconv: the objects of several inputs of another app's model go to --output-dir DIR, one output each"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/all.json"))
    }

    @Test("detect describes another app's store on standard input and in an archive as it does the file")
    func detect() throws {
        let (dir, store) = try Self.store()
        let file = try CLI.tripconv("detect", store)
        #expect(file.status == 0, "\(file.stderr)")
        let described = String(file.out.dropFirst(store.count))
        #expect(described.hasPrefix(": coredata store of another app than SampleTrips, model version 2.1.0"), "\(file.out)")
        let tar = try CLI.python("""
            import sys, tarfile
            with tarfile.open(sys.argv[1] + "/stores.tar", "w") as t: t.add(sys.argv[1] + "/shelf.store", arcname="kept/shelf.store")
            """, [dir])
        #expect(tar.status == 0, "\(tar.stderr)")
        let member = try CLI.tripconv("detect", dir + "/stores.tar")
        #expect(member.status == 0 && member.out == "\(dir)/stores.tar!kept/shelf.store" + described, "\(member.stderr)")
        let piped = try CLI.run(CLI.binary, ["detect", "-"], stdin: Data(contentsOf: URL(fileURLWithPath: store)))
        #expect(piped.status == 0 && piped.out == "<stdin>" + described.replacing(", model from", with: ", format told by its bytes (SQLite's file header), model from"),
                "\(piped.stderr)")
        let json = try CLI.run(CLI.binary, ["detect", "--json", "-"], stdin: Data(contentsOf: URL(fileURLWithPath: store)))
        let nodes = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]])
        let entities = (nodes.first?["store"] as? [String: Any])?["entities"] as? [[String: Any]]
        #expect(entities?.compactMap { $0["objects"] as? Int } == [2, 2])
    }

    @Test("an archive's store and export, in a run over objects, are read from copies as the files are")
    func archiveMembers() throws {
        let (dir, store, temp, expected) = try Self.storeWithTemp()
        #expect(try CLI.tripconv(store, "-q", "-o", dir + "/export.yaml").status == 0)
        let tar = try CLI.python("""
            import sys, tarfile
            with tarfile.open(sys.argv[1] + "/both.tar.gz", "w:gz") as t:
                t.add(sys.argv[1] + "/shelf.store", arcname="2024/shelf.store")
                t.add(sys.argv[1] + "/export.yaml", arcname="export.yaml")
            """, [dir])
        #expect(tar.status == 0, "\(tar.stderr)")
        let r = try CLI.tripconv("--model", store, dir + "/both.tar.gz", "--temp-dir", temp, "--output-dir", dir + "/out", "-q")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.read(dir + "/out/2024/shelf.jsonl") == expected && Self.read(dir + "/out/export.jsonl") == expected)
        #expect(try Self.files(temp).isEmpty)
    }

    @Test("a Decimal attribute's default, archived as NSDecimalNumber, is read from the model cache", arguments: ["-12.50", "0", "123456789012345678901234.5678", "7E+3"])
    func decimalDefault(_ value: String) throws {
        let dir = try CLI.temporaryDirectory().path
        let model = ObjectModel(entities: [EntityDescription("Price", attributes: [AttributeDescription("amount", .decimal, defaultValue: .decimal(value))])])
        try #require(try ModelStoreWriter.write(model, to: dir + "/p.store").status == 0)
        let r = try CLI.tripconv("schema", "--model", dir + "/p.store", "--json")
        #expect(r.status == 0, "\(r.stderr)")
        try r.stdout.write(to: URL(fileURLWithPath: dir + "/model.json"))
        let check = try CLI.python("""
            import decimal, json, sys
            d = json.load(open(sys.argv[1]))["entities"][0]["attributes"][0]["default"]
            print(d is not None and decimal.Decimal(d) == decimal.Decimal(sys.argv[2]))
            """, [dir + "/model.json", value])
        #expect(check.out == "True\n", "\(r.out) \(check.stderr)")
    }

    @Test("tripgen --drain-coredata exits as the man page says: 66 a missing store, 65 a file that is no store of its model")
    func drainStatuses() throws {
        let tripgen = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().appendingPathComponent("tripgen").path
        let missing = try CLI.run(tripgen, ["--drain-coredata", "/nonexistent/bench.store"])
        #expect(missing.status == 66 && missing.stderr.hasPrefix("tripgen: /nonexistent/bench.store: "), "\(missing.stderr)")
        let csv = try CLI.run(tripgen, ["--drain-coredata", "samples/trips-v1.csv"])
        #expect(csv.status == 65, "\(csv.stderr)")
        let other = try CLI.run(tripgen, ["--drain-coredata", "samples/coredata-v3.store"])
        #expect(other.status == 65 && other.stderr.contains("Author"), "\(other.stderr)")
    }
}
