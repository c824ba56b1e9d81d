import Foundation
import Testing
@testable import TripFormats
import TripKit
import TripTestSupport

/// The cells a trip is meant to have, derived here from the values, apart from the writer.
enum CSVIntendedCells {
    static func header(longest: Int) -> [String] {
        var h = ["name", "destination", "startDate", "endDate", "livingAccommodation.address", "livingAccommodation.placeName"]
        if longest > 0 {
            for n in 1...longest { h += ["title", "details", "hasReservation", "isInPlan"].map { "bucketList.\(n).\($0)" } }
        }
        return h
    }

    static func text(_ v: Value) -> String {
        switch v {
        case .string(let s): return s
        case .date(let t): return t.iso8601
        case .bool(let b): return b ? "true" : "false"
        case .int(let n): return String(n)
        case .null: return ""
        }
    }

    static func rows(_ trips: [ModelObject]) -> [[String]] {
        let longest = trips.map { $0.relationships[0].objects.count }.max() ?? 0
        var rows = [header(longest: longest)]
        for t in trips {
            var row = t.attributes[0..<4].map(text)
            let place = t.relationships[1].objects.first
            row += [place.map { text($0.attributes[0]) } ?? "", place.map { text($0.attributes[1]) } ?? ""]
            let items = t.relationships[0].objects
            for n in 0..<longest {
                row += n < items.count ? items[n].attributes.map(text) : ["", "", "", ""]
            }
            rows.append(row)
        }
        return rows
    }
}

@Suite("CSV interoperability")
struct CSVInteropTests {
    static let python = ExternalTool.path("python3")
    static let mlr = ExternalTool.path("mlr")

    /// Runs a python3 script with arguments; its stdout parsed as JSON.
    static func python(_ script: String, _ arguments: [String], stdin: Data? = nil) throws -> Any {
        let result = try ExternalTool.run(Self.python!, ["-c", script] + arguments, stdin: stdin)
        #expect(result.status == 0, "python3 failed: \(result.stderr)")
        return try JSONSerialization.jsonObject(with: result.stdout)
    }

    static func generated(seed: UInt64, count: Int) -> [ModelObject] {
        var generator = ArbitraryTrips.csv(seed: seed)
        return (0..<count).map { _ in generator.trip() }
    }

    @Test("python3's csv module reads our CSV as exactly the intended cells", .needsPython3, arguments: [UInt64(31), 32, 33])
    func pythonReadsOurCSV(seed: UInt64) throws {
        let trips = Self.generated(seed: seed, count: 30)
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("t.csv")
        try Data(try CSVIO.written(trips).utf8).write(to: URL(fileURLWithPath: path))
        let script = "import csv, json, sys\nwith open(sys.argv[1], newline='', encoding='utf-8') as f: json.dump(list(csv.reader(f)), sys.stdout)"
        let rows = try Self.python(script, [path]) as? [[String]]
        #expect(rows == CSVIntendedCells.rows(trips))
    }

    @Test("python3's csv module reads our TSV, its escapes undone, as exactly the intended cells", .needsPython3, arguments: [UInt64(41), 42])
    func pythonReadsOurTSV(seed: UInt64) throws {
        let trips = Self.generated(seed: seed, count: 30)
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("t.tsv")
        try Data(try CSVIO.written(trips, format: .tsv).utf8).write(to: URL(fileURLWithPath: path))
        let script = """
            import csv, json, re, sys
            undo = {'t': '\\t', 'n': '\\n', 'r': '\\r', '\\\\': '\\\\'}
            def unescape(cell): return re.sub(r'\\\\([tnr\\\\])', lambda m: undo[m.group(1)], cell)
            with open(sys.argv[1], newline='', encoding='utf-8') as f:
                rows = [[unescape(c) for c in row] for row in csv.reader(f, delimiter='\\t', quoting=csv.QUOTE_NONE)]
            json.dump(rows, sys.stdout)
            """
        let rows = try Self.python(script, [path]) as? [[String]]
        #expect(rows == CSVIntendedCells.rows(trips))
    }

    @Test("our reader reads CSV written by python3's csv module", .needsPython3, arguments: [UInt64(51), 52, 53])
    func weReadPythonCSV(seed: UInt64) throws {
        var generator = ArbitraryTrips.csv(seed: seed)
        let cells = (0..<60).map { _ in (0..<4).map { _ in generator.string(maxPieces: 8) } }
        let script = "import csv, json, sys\ncsv.writer(sys.stdout).writerows(json.load(sys.stdin))"
        let result = try ExternalTool.run(Self.python!, ["-c", script], stdin: try JSONSerialization.data(withJSONObject: cells))
        #expect(result.status == 0, "python3 failed: \(result.stderr)")
        #expect(try CSVIO.rows(Array(result.stdout)).map { $0 } == cells)
    }

    @Test("our reader reads a trip CSV written by python3's csv module", .needsPython3)
    func weReadPythonTrips() throws {
        let trips = [CSVTrip.trip("Paris, \"FR\"", "Île\r\nde France", items: [CSVTrip.item("Tour\tEiffel", details: "", reservation: true)],
                                  place: CSVTrip.place("1, Rue", "Inn")),
                     CSVTrip.trip("Oslo", "Norway")]
        let rows = CSVIntendedCells.rows(trips)
        let script = "import csv, json, sys\ncsv.writer(sys.stdout).writerows(json.load(sys.stdin))"
        let result = try ExternalTool.run(Self.python!, ["-c", script], stdin: try JSONSerialization.data(withJSONObject: rows))
        #expect(result.status == 0)
        #expect(CSVIO.trips(try CSVIO.read(Array(result.stdout)).items) == trips)
    }

    @Test("Miller reads our CSV as our JSON shape", .needsProgram("mlr", install: "apt-get install miller"))
    func millerReadsOurCSV() throws {
        let mlr = try #require(Self.mlr)
        let trips = [CSVTrip.trip("Paris", "France, \"FR\"", items: [CSVTrip.item("Louvre", details: "art\nmore", reservation: true),
                                                                        CSVTrip.item("Seine", inPlan: true)],
                                  place: CSVTrip.place("1 Rue", "Inn")),
                     CSVTrip.trip("Oslo", "Norway", start: 1_714_555_800_250,
                                  items: [CSVTrip.item("Fjord"), CSVTrip.item("Museum", details: "x")], place: CSVTrip.place("Gate", "Hut"))]
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("t.csv")
        try Data(try CSVIO.written(trips).utf8).write(to: URL(fileURLWithPath: path))
        let result = try ExternalTool.run(mlr, ["--icsv", "--ojson", "cat", path])
        #expect(result.status == 0, "mlr failed: \(result.stderr)")
        let read = try JSONSerialization.jsonObject(with: result.stdout) as? NSArray
        // Our JSON shape; Miller reads every CSV value as text, so the booleans are the strings it reads.
        let expected: [[String: Any]] = trips.map { t in
            let place = t.relationships[1].objects[0]
            return [
                "name": CSVIntendedCells.text(t.attributes[0]), "destination": CSVIntendedCells.text(t.attributes[1]),
                "startDate": CSVIntendedCells.text(t.attributes[2]), "endDate": CSVIntendedCells.text(t.attributes[3]),
                "livingAccommodation": ["address": CSVIntendedCells.text(place.attributes[0]),
                                        "placeName": CSVIntendedCells.text(place.attributes[1])],
                "bucketList": t.relationships[0].objects.map { i in
                    ["title": CSVIntendedCells.text(i.attributes[0]), "details": CSVIntendedCells.text(i.attributes[1]),
                     "hasReservation": CSVIntendedCells.text(i.attributes[2]), "isInPlan": CSVIntendedCells.text(i.attributes[3])]
                },
            ]
        }
        #expect(read == expected as NSArray)
    }

    @Test("Miller's flattened CSV of trip JSON reads back as the trips", .needsProgram("mlr", install: "apt-get install miller"))
    func weReadMillerCSV() throws {
        let mlr = try #require(Self.mlr)
        let json = """
            [{"name": "Paris", "destination": "France", "startDate": "2024-05-01T09:30:00Z", "endDate": "2024-05-04T09:30:00Z",
              "bucketList": [{"title": "Louvre", "details": "a, \\"b\\"", "hasReservation": true, "isInPlan": false},
                             {"title": "Seine", "details": "", "hasReservation": false, "isInPlan": true}],
              "livingAccommodation": {"address": "1 Rue", "placeName": "Inn"}},
             {"name": "Rome", "destination": "Italy", "startDate": "2024-05-01T09:30:00Z", "endDate": "2024-05-04T09:30:00Z",
              "bucketList": [], "livingAccommodation": null},
             {"name": "Oslo", "destination": "Norway", "startDate": "2024-05-01T09:30:00Z", "endDate": "2024-05-04T09:30:00Z",
              "bucketList": [{"title": "Fjord", "details": "x", "hasReservation": false, "isInPlan": false}],
              "livingAccommodation": {}}]
            """
        let result = try ExternalTool.run(mlr, ["--ijson", "--ocsv", "flatten", "then", "unsparsify"], stdin: Data(json.utf8))
        #expect(result.status == 0, "mlr failed: \(result.stderr)")
        let trips = CSVIO.trips(try CSVIO.read(Array(result.stdout)).items)
        #expect(trips == [
            CSVTrip.trip("Paris", "France", items: [CSVTrip.item("Louvre", details: "a, \"b\"", reservation: true),
                                                    CSVTrip.item("Seine", inPlan: true)], place: CSVTrip.place("1 Rue", "Inn")),
            CSVTrip.trip("Rome", "Italy"),
            CSVTrip.trip("Oslo", "Norway", items: [CSVTrip.item("Fjord", details: "x")]),
        ])
    }
}
