import Foundation
import Testing
@testable import TripFormats
import TripKit
import TripTestSupport

@Suite("Objects of any model in the tables layout and XML")
struct ObjectTablesTests {
    static func writeTables(_ dir: ScratchDirectory, _ format: Format, options: WriteOptions = WriteOptions()) throws -> String {
        let out = dir.path("export")
        try ObjectGraph.write(with: CSVObjectTablesWriter(directory: out, format: format, options: options))
        return out
    }

    @Test("CSV and TSV tables read back to the same objects", arguments: [Format.csv, .tsv])
    func tablesRoundTrip(format: Format) throws {
        let dir = ScratchDirectory()
        let out = try Self.writeTables(dir, format)
        let ext = format == .tsv ? "tsv" : "csv"
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted()
                == ["Animal", "Animal.friends", "Cat", "Category", "Category.items", "Component", "Component.parts", "Dog", "Item", "Item.categories"]
                    .map { "\($0).\(ext)" }.sorted())
        let read = try ObjectGraph.readAll(CSVObjectTablesReader(directory: out, format: format, model: ObjectGraph.model, options: ReadOptions()))
        #expect(read.rejected.isEmpty)
        #expect(ObjectGraph.plain(read.objects) == ObjectGraph.objects)
    }

    @Test("formula-guarded tables read back the same when told")
    func formulaGuard() throws {
        let dir = ScratchDirectory()
        var options = WriteOptions()
        options.csvSafeFormulas = true
        let out = try Self.writeTables(dir, .csv, options: options)
        let component = try String(contentsOfFile: out + "/Component.csv", encoding: .utf8)
        #expect(component.contains("\"'=SUM(A1),\"\"quoted\"\"\nnext line\""))
        #expect(component.contains(",-1,"))
        let read = try ObjectGraph.readAll(CSVObjectTablesReader(directory: out, format: .csv, model: ObjectGraph.model,
                                                                 options: ReadOptions(csvSafeFormulas: true)))
        #expect(ObjectGraph.plain(read.objects) == ObjectGraph.objects)
    }

    @Test("the empty text is \"\" in CSV and null an empty cell; in TSV null is \\N where text could be empty")
    func emptyAndNull() throws {
        let dir = ScratchDirectory()
        let csv = try Self.writeTables(dir, .csv)
        let items = try String(contentsOfFile: csv + "/Item.csv", encoding: .utf8)
        #expect(items == "name,weight\n\"Iron, \"\"cast\"\"\",7.5\n\"\",\n")
        let other = ScratchDirectory()
        let tsv = try Self.writeTables(other, .tsv)
        let categories = try String(contentsOfFile: tsv + "/Category.tsv", encoding: .utf8)
        #expect(categories == "uid\tlabel\n1B9FD00D-CB92-46CD-8711-5297025B78A1\tmetal\n1B9FD00D-CB92-46CD-8711-5297025B78A2\t\\N\n")
        // A TSV as PostgreSQL's COPY writes one: \N is null in any column, \\N the text \N.
        let model = ObjectModel(entities: [EntityDescription("Item", attributes: [
            AttributeDescription("name", .string, isOptional: false), AttributeDescription("price", .decimal), AttributeDescription("note", .string),
        ], uniquenessConstraints: [["name"]])])
        let copy = other.path("copy")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        other.file("copy/Item.tsv", #"name|price|note/Nut|\N|\N/Bolt|1.5|\\N/Pin|2|/"#.replacingOccurrences(of: "/", with: "\n")
            .replacingOccurrences(of: "|", with: "\t"))
        let read = try ObjectGraph.readAll(CSVObjectTablesReader(directory: copy, format: .tsv, model: model, options: ReadOptions()))
        #expect(ObjectGraph.plain(read.objects) == [
            ObjectRecord(entity: 0, key: 1, attributes: [.string("Nut"), .null, .null], relationships: [], origin: ObjectGraph.origin),
            ObjectRecord(entity: 0, key: 2, attributes: [.string("Bolt"), .decimal("1.5"), .string("\\N")], relationships: [], origin: ObjectGraph.origin),
            ObjectRecord(entity: 0, key: 3, attributes: [.string("Pin"), .decimal("2"), .string("")], relationships: [], origin: ObjectGraph.origin),
        ])
    }

    @Test("Python's csv module reads every cell as the writer meant it", .needsPython3, arguments: [Format.csv, .tsv])
    func pythonReads(format: Format) throws {
        let dir = ScratchDirectory()
        let out = try Self.writeTables(dir, format)
        let script = """
        import csv, json, os, sys
        d = sys.argv[1]; tsv = sys.argv[2] == 'tsv'
        out = {}
        for f in sorted(os.listdir(d)):
            with open(os.path.join(d, f), newline='', encoding='utf-8') as h:
                if tsv:
                    rows = [[c.replace('\\\\t', '\\t').replace('\\\\n', '\\n').replace('\\\\\\\\', '\\\\') for c in l.rstrip('\\n').split('\\t')] for l in h]
                else:
                    rows = list(csv.reader(h))
            out[f.rsplit('.', 1)[0]] = rows
        print(json.dumps(out))
        """
        let run = try ExternalTool.python(script, [out, format.rawValue])
        #expect(run.status == 0, "\(run.stderr)")
        let tables = try JSONSerialization.jsonObject(with: run.stdout) as! [String: [[String]]]
        let layout = CSVObjectLayout(ObjectGraph.model, extension: "csv")
        let names = layout.names
        for o in ObjectGraph.objects { try names.note(o) }
        for table in layout.tables {
            let name = ObjectGraph.model.entities[table.entity].name
            var expected = [table.columns.map(\.name)]
            for o in ObjectGraph.objects where o.entity == table.entity {
                expected.append(try table.columns.map { c -> String in
                    switch c.role {
                    case .key: return String(o.key)
                    case .attribute(let slot, let a):
                        let text = ObjectValueText.text(o.attributes[slot])
                        return text ?? (format == .tsv && CSVObjectLayout.canBeEmpty(a.kind) ? "\\N" : "")
                    case .toOne(let slot, let d):
                        let null = format == .tsv && CSVObjectLayout.canBeEmpty(layout.referenceKind(d)) ? "\\N" : ""
                        return try o.relationships[slot].first.map { try names.name(of: $0, in: "") } ?? null
                    }
                })
            }
            #expect(tables[name] == expected, "\(name)")
        }
        #expect(tables["Component.parts"] == [["@key", "parts"], ["10", "30"], ["10", "20"], ["30", "10"]])
        #expect(tables["Item.categories"] == [["name", "categories"], ["Iron, \"cast\"", "1B9FD00D-CB92-46CD-8711-5297025B78A2"],
                                              ["Iron, \"cast\"", "1B9FD00D-CB92-46CD-8711-5297025B78A1"], ["", "1B9FD00D-CB92-46CD-8711-5297025B78A1"]])
    }

    @Test("tables Python's csv wrote in the dialects the trip reader takes read as the objects", .needsPython3,
          arguments: ["csv.QUOTE_MINIMAL", "csv.QUOTE_ALL", "csv.QUOTE_NONNUMERIC", "semicolon"])
    func readsPythonTables(dialect: String) throws {
        let model = ObjectModel(entities: [
            EntityDescription("Item", attributes: [AttributeDescription("name", .string, isOptional: false), AttributeDescription("price", .decimal)],
                              uniquenessConstraints: [["name"]]),
            EntityDescription("Part", attributes: [AttributeDescription("count", .int32, isOptional: false), AttributeDescription("seen", .date),
                                                   AttributeDescription("note", .string, isOptional: false)],
                              relationships: [RelationshipDescription("item", to: "Item")]),
        ])
        let dir = ScratchDirectory()
        let out = dir.path("t")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let script = """
        import csv, sys
        d, how = sys.argv[1], sys.argv[2]
        kw = {'delimiter': ';'} if how == 'semicolon' else {'quoting': eval(how)}
        def write(name, rows):
            with open(d + '/' + name, 'w', newline='', encoding='utf-8') as h:
                if how == 'semicolon': h.write('sep=;\\r\\n')
                w = csv.writer(h, **kw)
                for r in rows: w.writerow(r)
        write('Item.csv', [['name', 'price'], ['Bolt; "M6"', '0.25'], ['Nut', '12']])
        write('Part.csv', [['@key', 'count', 'seen', 'note', 'item'], ['3', '2', '2025-02-20T10:00:00.123456Z', 'a\\nb', 'Nut'],
                           ['7', '40', '2001-01-01T00:00:00Z', '', 'Bolt; "M6"']])
        """
        let run = try ExternalTool.python(script, [out, dialect])
        #expect(run.status == 0, "\(run.stderr)")
        let read = try ObjectGraph.readAll(CSVObjectTablesReader(directory: out, format: .csv, model: model, options: ReadOptions()))
        #expect(read.rejected.isEmpty, "\(read.rejected)")
        let o = ObjectGraph.origin
        #expect(ObjectGraph.plain(read.objects) == [
            ObjectRecord(entity: 0, key: 1, attributes: [.string("Bolt; \"M6\""), .decimal("0.25")], relationships: [], origin: o),
            ObjectRecord(entity: 0, key: 2, attributes: [.string("Nut"), .decimal("12")], relationships: [], origin: o),
            ObjectRecord(entity: 1, key: 3, attributes: [.int(2), .date(761_738_400 + 123_456 / 1e6), .string("a\nb")],
                         relationships: [[ObjectReference(entity: 0, key: 2)]], origin: o),
            ObjectRecord(entity: 1, key: 7, attributes: [.int(40), .date(0), .string("")], relationships: [[ObjectReference(entity: 0, key: 1)]], origin: o),
        ])
    }

    /// A record refused names no object: a repeat of its name is the one named, and a reference to it,
    /// as one to no object at all (a to-one cell, a join row), is removed and counted.
    @Test("bad records are set aside with their places, references to no object removed; a bad header ends the read")
    func badRecords() throws {
        let dir = ScratchDirectory()
        let out = try Self.writeTables(dir, .csv)
        let path = out + "/Item.csv"
        try (#"name,weight|"Iron, ""cast""",heavy|Tin,|"Iron, ""cast""",1|"",|"#).replacingOccurrences(of: "|", with: "\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        let parts = out + "/Component.parts.csv"
        try "@key,parts\n10,30\n10,99\n".write(toFile: parts, atomically: true, encoding: .utf8)
        let animals = out + "/Dog.csv"
        try "@key,legs,breed,owner\n2,,Collie,\n3,3,,Zinc\n".write(toFile: animals, atomically: true, encoding: .utf8)
        let removals = ObjectReferenceRemovals()
        let read = try ObjectGraph.readAll(CSVObjectTablesReader(directory: out, format: .csv, model: ObjectGraph.model, options: ReadOptions(),
                                                                 removals: removals))
        let places = read.rejected.map { "\($0.origin.source):\($0.origin.line ?? 0):\($0.problemColumn ?? $0.origin.column ?? 1): \($0.reason)" }
        #expect(places == [
            "\(path):2:18: weight: expected a Double, found 'heavy'",
            "\(animals):2:3: legs: a Dog must have one",
        ])
        #expect(read.objects.contains { $0.entity == 1 && $0.attributes[0] == .string("Tin") })
        // The second "Iron, cast" is the one named, its first refused; Dog 3 kept without its owner.
        let iron = ObjectValue.string("Iron, \"cast\"")
        #expect(read.objects.filter { $0.entity == 1 && $0.attributes[0] == iron }.map(\.attributes) == [[iron, .double(1)]])
        #expect(read.objects.first { $0.entity == 4 && $0.key == 3 }?.relationships.allSatisfy(\.isEmpty) == true, "\(read.objects)")
        // Dog 2 is refused: the rows of Animal.friends naming it, on either side, give no reference.
        let friends = out + "/Animal.friends.csv"
        #expect(removals.firstMessages == [
            "\(parts):3:4: 'parts': '99' names no Component; the reference is removed, the object kept",
            "\(friends):2:3: 'friends': '2' names no Animal; the reference is removed, the object kept",
            "\(friends):4:1: 'friends': its owner '2' names no Animal; the reference is removed, the object kept",
            "\(friends):6:3: 'friends': '2' names no Animal; the reference is removed, the object kept",
            "\(animals):3:6: 'owner': 'Zinc' names no Item; the reference is removed, the object kept",
        ], "\(removals.firstMessages)")

        try "name,weight,colour\nIron,1,red\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: TripError.self) { _ = try CSVObjectTablesReader(directory: out, format: .csv, model: ObjectGraph.model, options: ReadOptions()) }
        do { _ = try CSVObjectTablesReader(directory: out, format: .csv, model: ObjectGraph.model, options: ReadOptions()) } catch {
            #expect("\(error)".contains("\(path):1:13: unknown column 'colour' of a Item"), "\(error)")
        }
    }

    @Test("a writer that is aborted leaves no directory; an existing foreign directory is not replaced")
    func atomic() throws {
        let dir = ScratchDirectory()
        let out = dir.path("export")
        var writer = CSVObjectTablesWriter(directory: out, format: .csv, options: WriteOptions())
        try writer.begin(ObjectGraph.model)
        try writer.write(ObjectGraph.objects[0])
        writer.abort()
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(dir.names().isEmpty)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        dir.file("export/mine.txt", "keep")
        #expect(throws: TripError.self) { try ObjectGraph.write(with: CSVObjectTablesWriter(directory: out, format: .csv, options: WriteOptions())) }
        #expect(dir.contents("export/mine.txt") == "keep")
        // A directory holding only a layout's files is replaced whole.
        let again = dir.path("again")
        try ObjectGraph.write(with: CSVObjectTablesWriter(directory: again, format: .tsv, options: WriteOptions()))
        try ObjectGraph.write(Array(ObjectGraph.objects.prefix(7)), with: CSVObjectTablesWriter(directory: again, format: .csv, options: WriteOptions()))
        #expect(try FileManager.default.contentsOfDirectory(atPath: again).allSatisfy { $0.hasSuffix(".csv") })
        #expect(try String(contentsOfFile: again + "/Animal.csv", encoding: .utf8) == "@key,legs,owner\n")
    }

    @Test("names and objects waiting for them spill past the memory budget and come back in order", arguments: [false, true])
    func spills(itemsFirst: Bool) throws {
        let dir = ScratchDirectory()
        let out = dir.path("export")
        var options = WriteOptions()
        options.budget = SpillBudget(limit: 1 << 20, directory: dir.path)
        let part = EntityDescription("Part", attributes: [AttributeDescription("n", .int64)], relationships: [RelationshipDescription("item", to: "Item")])
        let item = EntityDescription("Item", attributes: [AttributeDescription("name", .string, isOptional: false)], uniquenessConstraints: [["name"]])
        // Items first: only their names are held (and spill); parts first: the parts wait as well.
        let model = ObjectModel(entities: itemsFirst ? [item, part] : [part, item])
        let (p, i) = itemsFirst ? (1, 0) : (0, 1)
        let text = String(repeating: "x", count: 300)
        let items = (1...4000).map {
            ObjectRecord(entity: i, key: Int64($0), attributes: [.string("\(text)\($0)")], relationships: [], origin: ObjectGraph.origin)
        }
        let parts = (1...4000).map { (n: Int) -> ObjectRecord in
            let target = ObjectReference(entity: i, key: Int64((n * 7) % 4000 + 1))
            return ObjectRecord(entity: p, key: Int64(n), attributes: [.int(Int64(n))], relationships: [[target]], origin: ObjectGraph.origin)
        }
        let objects = itemsFirst ? items + parts : parts + items
        try ObjectGraph.write(objects, model: model, with: CSVObjectTablesWriter(directory: out, format: .csv, options: options))
        #expect(options.budget!.spilled.trips > 0)
        let read = try ObjectGraph.readAll(CSVObjectTablesReader(directory: out, format: .csv, model: model, options: ReadOptions()))
        #expect(ObjectGraph.plain(read.objects) == objects)
        let xml = dir.path("objects.xml")
        try ObjectGraph.write(objects, model: model, with: XMLObjectWriter(.file(xml), options: options))
        let back = try ObjectGraph.readAll(XMLObjectReader(path: xml, model: model, options: ReadOptions()))
        #expect(ObjectGraph.plain(back.objects) == objects)
    }
}
