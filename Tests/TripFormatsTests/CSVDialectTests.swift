import Foundation
import Testing
@testable import TripFormats
import TripKit
import TripTestSupport

/// CSV as other tools write it (issue 13): every file here is written by Python's csv module (an
/// independent writer) or is a hand-made copy of a shape a tool without a Python binding writes (R,
/// pandas, Excel), and must read to exactly the trips it was written from.
@Suite("CSV dialects other writers use")
struct CSVDialectTests {
    /// One way of writing a CSV file with Python's csv module.
    struct Dialect: CustomStringConvertible, Sendable {
        var quoting = "minimal"       // minimal, all, nonnumeric
        var delimiter = ","
        var terminator = "\r\n"
        var encoding = "utf-8"        // a Python codec
        var bom = false               // write U+FEFF first (utf-8-sig and utf-16 write their own)
        var sepLine = false           // Excel's `sep=X` first line
        var readEncoding = "utf-8"    // what tripconv is told (--input-encoding)
        var description: String {
            "\(quoting) \(delimiter == "\t" ? "tab" : delimiter) \(terminator.debugDescription) \(encoding)\(bom ? "+BOM" : "")\(sepLine ? " sep=" : "")"
        }
    }

    static let python = ExternalTool.path("python3")

    /// The quoting styles × the delimiters, each with a line end of its own, then the encodings.
    static let dialects: [Dialect] = {
        var all: [Dialect] = []
        let terminators = ["\r\n", "\n", "\r"]
        for (q, quoting) in ["minimal", "all", "nonnumeric"].enumerated() {
            for (d, delimiter) in [",", ";", "\t", "|"].enumerated() {
                all.append(Dialect(quoting: quoting, delimiter: delimiter, terminator: terminators[(q + d) % 3]))
            }
        }
        all.append(Dialect(quoting: "minimal", delimiter: ";", encoding: "utf-8-sig"))
        all.append(Dialect(quoting: "minimal", delimiter: ";", terminator: "\r\n", sepLine: true))
        all.append(Dialect(quoting: "all", delimiter: ",", terminator: "\n", sepLine: true))
        // A spreadsheet's "Unicode text": UTF-16 LE with its BOM, tab-separated.
        all.append(Dialect(quoting: "minimal", delimiter: "\t", encoding: "utf-16-le", bom: true))
        all.append(Dialect(quoting: "minimal", delimiter: "\t", encoding: "utf-16-be", bom: true))
        all.append(Dialect(quoting: "all", delimiter: ",", encoding: "utf-16"))
        all.append(Dialect(quoting: "minimal", delimiter: ";", encoding: "latin-1", readEncoding: "latin1"))
        all.append(Dialect(quoting: "all", delimiter: ";", encoding: "cp1252", readEncoding: "windows-1252"))
        all.append(Dialect(quoting: "minimal", delimiter: ",", encoding: "utf-16-le", readEncoding: "utf-16le"))
        return all
    }()

    /// Writes rows with Python's csv module in a dialect. Under QUOTE_NONNUMERIC the Booleans go as
    /// Python's bools (written `True`, unquoted), as a program writing its own values would.
    static let writer = """
        import csv, json, sys
        spec = json.load(open(sys.argv[1], encoding='utf-8'))
        rows = spec['rows']
        quoting = {'minimal': csv.QUOTE_MINIMAL, 'all': csv.QUOTE_ALL, 'nonnumeric': csv.QUOTE_NONNUMERIC}[spec['quoting']]
        if spec['quoting'] == 'nonnumeric':
            bools = [i for i, h in enumerate(rows[0]) if h.endswith(('.hasReservation', '.isInPlan'))]
            rows = [rows[0]] + [[(c == 'true') if i in bools and c in ('true', 'false') else c for i, c in enumerate(r)] for r in rows[1:]]
        with open(sys.argv[2], 'w', newline='', encoding=spec['encoding']) as f:
            if spec['bom']: f.write('\\ufeff')
            if spec['sepLine']: f.write('sep=' + spec['delimiter'] + spec['terminator'])
            csv.writer(f, delimiter=spec['delimiter'], quoting=quoting, lineterminator=spec['terminator']).writerows(rows)
        """

    /// Writes `rows` in `dialect` with Python into a file, returning its path.
    static func pythonWrites(_ rows: [[String]], _ dialect: Dialect, in dir: CSVTemporaryDirectory) throws -> String {
        let spec: [String: Any] = ["rows": rows, "quoting": dialect.quoting, "delimiter": dialect.delimiter,
                                   "terminator": dialect.terminator, "encoding": dialect.encoding, "bom": dialect.bom,
                                   "sepLine": dialect.sepLine]
        let specPath = dir.file("spec.json"), path = dir.file("in.csv")
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: specPath))
        let result = try ExternalTool.run(python!, ["-c", writer, specPath, path])
        #expect(result.status == 0, "python3 failed: \(result.stderr)")
        return path
    }

    /// Trips whose text the dialect can carry: Python's csv quotes a field for its line end's
    /// characters only (3.11 writes a lone CR unquoted under `\n`), so the other line-break character
    /// is left out; a legacy encoding keeps the characters it has.
    static func trips(seed: UInt64, count: Int, for dialect: Dialect) -> [ModelObject] {
        var generator = ArbitraryTrips.csv(seed: seed)
        let encodable: (Unicode.Scalar) -> Bool
        switch dialect.readEncoding {
        case "latin1": encodable = { $0.value <= 0xFF }
        case "windows-1252": encodable = { $0.value < 0x80 || ($0.value >= 0xA0 && $0.value <= 0xFF) || CSVDialectTests.cp1252.contains($0.value) }
        default: encodable = { _ in true }
        }
        let breaks: Set<UInt32> = dialect.terminator == "\n" ? [13] : dialect.terminator == "\r" ? [10] : []
        return (0..<count).map { _ in
            CSVTrip.mapStrings(generator.trip()) { s in
                var out = String.UnicodeScalarView()
                for u in s.unicodeScalars where !breaks.contains(u.value) { out.append(encodable(u) ? u : "?") }
                return String(out)
            }
        }
    }

    /// The code points Windows-1252 puts at 0x80-0x9F.
    static let cp1252: Set<UInt32> = [0x20AC, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152,
                                      0x017D, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161,
                                      0x203A, 0x0153, 0x017E, 0x0178, 0x81, 0x8D, 0x8F, 0x90, 0x9D]

    @Test("Python's csv module in every quoting style, delimiter, line end and encoding: read to the trips written", .needsPython3,
          arguments: Self.dialects.indices)
    func pythonDialects(index: Int) throws {
        let dialect = Self.dialects[index]
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        for seed in [UInt64(100 + index), UInt64(200 + index)] {
            let trips = Self.trips(seed: seed, count: 30, for: dialect)
            let path = try Self.pythonWrites(CSVIntendedCells.rows(trips), dialect, in: dir)
            let (items, _) = try CSVIO.read(path: path, options: ReadOptions(inputEncoding: dialect.readEncoding))
            CSVTrip.expectRead(items, wrote: trips)
        }
    }

    // MARK: - The three defects

    @Test("QUOTE_ALL's empty item groups and accommodation (\"\" cells) are no item and none (issue 13, defect 2)", .needsPython3)
    func quoteAllEmptyGroups() throws {
        let trips = [
            CSVTrip.trip("Paris", "France", items: [CSVTrip.item("Louvre", details: "", reservation: true), CSVTrip.item("Seine")],
                         place: CSVTrip.place("1 Rue", "Inn")),
            CSVTrip.trip("Rome", "Italy", items: [CSVTrip.item("Forum")]),
            CSVTrip.trip("Oslo", "Norway"),
        ]
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        let path = try Self.pythonWrites(CSVIntendedCells.rows(trips), Dialect(quoting: "all"), in: dir)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("\"Rome\",\"Italy\",\"2024-05-01T09:30:00Z\",\"2024-05-04T09:30:00Z\",\"\",\"\",\"Forum\",\"\",\"false\",\"false\",\"\",\"\",\"\",\"\""))
        let (items, _) = try CSVIO.read(path: path)
        #expect(CSVIO.trips(items) == trips)
    }

    @Test("an item with an empty title and other cells set reads as the title \"\" (issue 13, defect 3)", .needsPython3)
    func emptyTitle() throws {
        let trips = [CSVTrip.trip("Paris", "France", items: [CSVTrip.item("", details: "no title", reservation: true, inPlan: true),
                                                             CSVTrip.item("", details: "")])]
        let dir = CSVTemporaryDirectory()
        defer { dir.remove() }
        for quoting in ["minimal", "nonnumeric", "all"] {
            let path = try Self.pythonWrites(CSVIntendedCells.rows(trips), Dialect(quoting: quoting), in: dir)
            #expect(CSVIO.trips(try CSVIO.read(path: path).items) == trips, "\(quoting)")
        }
    }

    // MARK: - Shapes other tools write

    @Test("R's write.csv: quoted header, row names under an unnamed first column, NA for missing values")
    func rWriteCSV() throws {
        // What write.csv(df) writes for a data frame of two trips, the second with one item fewer.
        let text = """
            "","name","destination","startDate","endDate","livingAccommodation.address","livingAccommodation.placeName","bucketList.1.title","bucketList.1.details","bucketList.1.hasReservation","bucketList.1.isInPlan","bucketList.2.title","bucketList.2.details","bucketList.2.hasReservation","bucketList.2.isInPlan"
            "1","Paris","France","2024-05-01T09:30:00Z","2024-05-04T09:30:00Z","1 Rue","Inn","Louvre","","TRUE","FALSE","NA","x",FALSE,TRUE
            "2","Rome","Italy","2024-05-01T09:30:00Z","2024-05-04T09:30:00Z",NA,NA,"Forum",NA,FALSE,FALSE,NA,NA,NA,NA

            """
        let trips = CSVIO.trips(try CSVIO.read(text.replacingOccurrences(of: "\n", with: "\r\n")).items)
        #expect(trips == [
            CSVTrip.trip("Paris", "France", items: [CSVTrip.item("Louvre", reservation: true), CSVTrip.item("NA", details: "x", inPlan: true)],
                         place: CSVTrip.place("1 Rue", "Inn")),
            CSVTrip.trip("Rome", "Italy", items: [CSVTrip.item("Forum")]),
        ])
    }

    @Test("an unquoted NA is the text NA where the header is not quoted throughout")
    func naIsText() throws {
        let trips = CSVIO.trips(try CSVIO.read("name,destination,startDate,endDate\nNA,NA,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z\n").items)
        #expect(trips.first?.attributes[0...1] == [.string("NA"), .string("NA")])
    }

    @Test("pandas' to_csv: row labels under an unnamed first column are not read")
    func pandasIndex() throws {
        let trips = CSVIO.trips(try CSVIO.read(",name,destination,startDate,endDate\n0,Paris,France,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z\n1,Rome,Italy,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z\n").items)
        #expect(trips.map { $0.attributes[0] } == [.string("Paris"), .string("Rome")])
    }

    // MARK: - Line ends

    static let header = "name,destination,startDate,endDate,bucketList.1.title"
    static let rowA = "A,X,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z,\"t\r\nu\""
    static let rowB = "B,Y,2024-05-01T09:30:00Z,2024-05-04T09:30:00Z,\"v\rw\""

    @Test("line ends LF, CRLF, CR and mixed, a missing last line end, trailing empty lines: the rows Python's csv reads", .needsPython3,
          arguments: [
            header + "\n" + rowA + "\n" + rowB + "\n",
            header + "\r\n" + rowA + "\r\n" + rowB + "\r\n",
            header + "\r" + rowA + "\r" + rowB + "\r",
            header + "\r\n" + rowA + "\n" + rowB + "\r",
            header + "\n" + rowA + "\r\n" + rowB,
            header + "\n" + rowA + "\n" + rowB + "\n\n\r\n\n",
            header + "\r\n" + rowA + "\r\n\r\n" + rowB + "\r\n,,,,\r\n",
          ])
    func lineEnds(text: String) throws {
        let items = try CSVIO.read(text).items
        let read = CSVIO.trips(items).map { t in
            t.attributes[0...1].map(CSVIntendedCells.text) + t.relationships[0].objects.map { CSVIntendedCells.text($0.attributes[0]) }
        }
        #expect(read == [["A", "X", "t\r\nu"], ["B", "Y", "v\rw"]])
        // Python's csv reads the same rows (blank lines and a row of empty cells hold no trip).
        let script = "import csv, io, json, sys\nrows = [r for r in csv.reader(io.StringIO(sys.stdin.read(), newline='')) if any(r)]\njson.dump([[r[0], r[1], r[4]] for r in rows[1:]], sys.stdout)"
        let result = try ExternalTool.run(Self.python!, ["-c", script], stdin: Data(text.utf8))
        #expect(try JSONSerialization.jsonObject(with: result.stdout) as? [[String]] == read)
    }

    // MARK: - Delimiters

    @Test("the delimiter is detected from the header: the one that splits it into trip columns")
    func detection() throws {
        // A comma inside the semicolon-separated header's cells does not fool it, nor a quoted name.
        let text = "\"name\";destination;startDate;endDate;bucketList.1.title\nA,1;X|Y;2024-05-01T09:30:00Z;2024-05-04T09:30:00Z;\"a;b\"\n"
        let trips = CSVIO.trips(try CSVIO.read(text).items)
        #expect(trips.first?.attributes[0...1] == [.string("A,1"), .string("X|Y")])
        #expect(trips.first?.relationships[0].objects.first?.attributes[0] == .string("a;b"))
        // Given, it is not detected: this header then cannot be read with it.
        let error = CSVIO.error { _ = try CSVIO.read(text, options: ReadOptions(csvDelimiter: UInt8(ascii: "|"))) }
        #expect(error?.message == "in.csv:1:7: expected '|' or a line end after a closing quote, found ';'")
        let unquoted = CSVIO.error { _ = try CSVIO.read("name;destination;startDate;endDate\n", options: ReadOptions(csvDelimiter: UInt8(ascii: ","))) }
        #expect(unquoted?.message.hasPrefix("in.csv:1:1: missing trip columns") == true)
    }

    @Test("--csv-delimiter: the writer writes it, Python's csv reads the file with it to the intended cells", .needsPython3,
          arguments: [";", "\t", "|", ":", "-", "0"])
    func writerDelimiter(delimiter: String) throws {
        let trips = Self.trips(seed: 7, count: 25, for: Dialect()).filter(CSVTrip.isReadable)
        let byte = UInt8(ascii: Unicode.Scalar(delimiter)!)
        let text = try CSVIO.written(trips, options: WriteOptions(csvDelimiter: byte))
        if CSVDialect.detectedSeparators.contains(byte) {
            #expect(CSVIO.trips(try CSVIO.read(text).items) == trips.map(CSVTrip.normalized), "detected")
        }
        #expect(CSVIO.trips(try CSVIO.read(text, options: ReadOptions(csvDelimiter: byte)).items) == trips.map(CSVTrip.normalized), "given")
        let script = "import csv, io, json, sys\njson.dump(list(csv.reader(io.StringIO(sys.stdin.read(), newline=''), delimiter=sys.argv[1])), sys.stdout)"
        let result = try ExternalTool.run(Self.python!, ["-c", script, delimiter], stdin: Data(text.utf8))
        #expect(try JSONSerialization.jsonObject(with: result.stdout) as? [[String]] == CSVIntendedCells.rows(trips.map(CSVTrip.normalized)))
    }

    @Test("the one parser of --csv-delimiter")
    func delimiterNames() {
        #expect(CSVDelimiter.parse(";") == UInt8(ascii: ";"))
        #expect(CSVDelimiter.parse("tab") == 9)
        #expect(CSVDelimiter.parse("\\t") == 9)
        #expect(CSVDelimiter.parse("\t") == 9)
        #expect(CSVDelimiter.parse("Semicolon") == UInt8(ascii: ";"))
        #expect(CSVDelimiter.parse("\"") == nil)
        #expect(CSVDelimiter.parse("\n") == nil)
        #expect(CSVDelimiter.parse(";;") == nil)
        #expect(CSVDelimiter.parse("é") == nil)
        #expect(CSVDialect(.tsv, delimiter: UInt8(ascii: ";")) == .tsv)
        #expect(CSVDialect(.csv, delimiter: UInt8(ascii: ";")).separator == UInt8(ascii: ";"))
    }

    // MARK: - Formula-safe cells

    @Test("cells written formula-safe read back without their ' when told, and Python sees the guard",
          arguments: [Format.csv, .tsv])
    func safeFormulas(format: Format) throws {
        var generator = ArbitraryTrips(seed: 5, text: TripText(pieces: ["=", "+", "-", "@", "'", "''", "'=", "=SUM(A1)", "a", " "],
                                                               wholePiecePercent: 30, allows: { $0 != "\u{0}" }),
                                       keepsDefaultToOne: true)
        let trips = (0..<40).map { _ in generator.trip() }.filter(CSVTrip.isReadable)
        let text = try CSVIO.written(trips, format: format, options: WriteOptions(csvSafeFormulas: true))
        let back = CSVIO.trips(try CSVIO.read(text, format: format, options: ReadOptions(csvSafeFormulas: true)).items)
        #expect(back == trips.map(CSVTrip.normalized))
        // Without the option the guards are text: every guarded cell keeps its '.
        let raw = CSVIO.trips(try CSVIO.read(text, format: format).items)
        let guarded = raw.flatMap { $0.attributes[0...1] }.filter {
            if case .string(let s) = $0 { return s.hasPrefix("'") } else { return false }
        }
        let expectedGuarded = trips.flatMap { $0.attributes[0...1] }.filter {
            if case .string(let s) = $0, let c = s.utf8.first { return CSVDialect.isGuardedByQuote(c) } else { return false }
        }
        #expect(guarded.count == expectedGuarded.count)
        #expect(!expectedGuarded.isEmpty)
    }

    // MARK: - Encodings

    @Test("UTF-16 that breaks off is a data error with the byte offset")
    func brokenUTF16() throws {
        let good = Array("name\tdestination\tstartDate\tendDate\nA\tX\t2024-05-01\t2024-05-02\n".utf16)
        var bytes: [UInt8] = [0xFF, 0xFE]
        for u in good { bytes += [UInt8(u & 0xFF), UInt8(u >> 8)] }
        var lone = bytes
        lone.insert(contentsOf: [0x3D, 0xD8], at: 2 + 2 * 50)   // a high surrogate before an ordinary character
        #expect(CSVIO.error { _ = try CSVIO.read(lone) }?.message == "in.csv: byte offset 102: invalid UTF-16: unpaired surrogate 0xD83D")
        let odd = bytes + [0x41]
        #expect(CSVIO.error { _ = try CSVIO.read(odd) }?.message == "in.csv: byte offset \(bytes.count): UTF-16 input ends in the middle of a character (an odd number of bytes)")
        #expect(CSVIO.trips(try CSVIO.read(bytes).items).count == 1)
    }

    @Test("UTF-16 through the transcoding layer whatever the read sizes: every split of a surrogate pair")
    func utf16Splits() throws {
        let text = "name,destination,startDate,endDate\n😀é𝄞,日本,2024-05-01,2024-05-02\n"
        for bigEndian in [false, true] {
            var bytes: [UInt8] = bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]
            for u in text.utf16 { bytes += bigEndian ? [UInt8(u >> 8), UInt8(u & 0xFF)] : [UInt8(u & 0xFF), UInt8(u >> 8)] }
            for step in 1...9 {
                var offset = 0
                let source = TranscodingSource(name: "t", encoding: .utf8, detectsBOM: true) { buffer in
                    let n = min(buffer.count, bytes.count - offset, step)
                    if n <= 0 { return 0 }
                    for i in 0..<n { buffer[i] = bytes[offset + i] }
                    offset += n
                    return n
                }
                var out: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 5)
                while true {
                    let n = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
                    if n == 0 { break }
                    out += chunk[0..<n]
                }
                #expect(String(decoding: out, as: UTF8.self) == text, "step \(step), \(bigEndian ? "BE" : "LE")")
            }
        }
    }
}
