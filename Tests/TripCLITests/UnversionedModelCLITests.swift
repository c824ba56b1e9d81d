import Foundation
import Testing
import TripTestSupport

/// An app whose source declares `@Model` classes and no `VersionedSchema` (the shape of most SwiftData
/// apps): its exports and stores are read and written in that one model. Before the fix every
/// `convert --model` of such source was exit 65, "the plan has no version".
@Suite("--model of Swift source without a VersionedSchema")
struct UnversionedModelCLITests {
    static let source = """
        import SwiftData
        import SwiftUI

        @Model final class Folder {
            @Attribute(.unique) var title: String
            @Relationship(deleteRule: .cascade, inverse: \\Note.folder) var notes: [Note] = []
            init(title: String) { self.title = title }
        }

        @Model final class Note {
            var text: String
            var pinned: Bool = false
            var folder: Folder?
            init(text: String) { self.text = text }
        }

        struct NotesView: View {
            var body: some View { Text("notes") }
        }

        """

    /// A folder holding Model.swift and notes.jsonl, the export written by Python's json module.
    static func app() throws -> URL {
        let dir = try CLI.temporaryDirectory()
        try source.write(to: dir.appendingPathComponent("Model.swift"), atomically: true, encoding: .utf8)
        let written = try CLI.python("""
            import json, sys
            with open(sys.argv[1], 'w') as f:
                for o in [{'@entity': 'Folder', 'title': 'Work', 'notes': [1, 2]},
                          {'@entity': 'Folder', 'title': 'Home', 'notes': [3]},
                          {'@entity': 'Note', '@key': 1, 'text': 'call Ann', 'pinned': True, 'folder': 'Work'},
                          {'@entity': 'Note', '@key': 2, 'text': 'mail Bo', 'folder': 'Work'},
                          {'@entity': 'Note', '@key': 3, 'text': 'milk', 'pinned': False, 'folder': 'Home'}]:
                    f.write(json.dumps(o) + '\\n')
            """, [dir.path + "/notes.jsonl"])
        #expect(written.status == 0, "\(written.stderr)")
        return dir
    }

    @Test("An export converts to JSON and to a SQLite store in the one model; both read back with python3 and sqlite3",
          .needsPython3, .needsSQLite3)
    func converts() throws {
        let dir = try Self.app()
        let model = dir.path + "/Model.swift", input = dir.path + "/notes.jsonl"
        let json = try CLI.tripconv(input, "--model", model, "-o", dir.path + "/notes.json")
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stderr.contains("read 5 objects; wrote 5 (Folder 2, Note 3)"), "\(json.stderr)")
        let checked = try CLI.python("""
            import json, sys
            d = json.load(open(sys.argv[1]))
            print([(f['title'], f['notes']) for f in d['Folder']])
            print([(n['text'], n['pinned'], n['folder']) for n in d['Note']])
            """, [dir.path + "/notes.json"])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == """
            [('Work', [1, 2]), ('Home', [3])]
            [('call Ann', True, 'Work'), ('mail Bo', False, 'Work'), ('milk', False, 'Home')]

            """, "\(checked.stderr)")

        let store = dir.path + "/notes.sqlite"
        let stored = try CLI.tripconv(input, "--model", model, "-o", store)
        #expect(stored.status == 0, "\(stored.stderr)")
        let sqlite3 = try #require(CLI.tool("sqlite3"))
        let rows = try CLI.run(sqlite3, [store, "SELECT n.text, f.title FROM Note n JOIN Folder f ON n.folder = f._pk ORDER BY n.text"])
        #expect(rows.out == "call Ann|Work\nmail Bo|Work\nmilk|Home\n", "\(rows.stderr)")
        // The store reads back, with and without the source, to the same objects.
        let back = try CLI.tripconv(store, "--model", model, "--to", "jsonl")
        let again = try CLI.tripconv(store, "--to", "jsonl")
        #expect(back.status == 0 && again.status == 0, "\(back.stderr)\(again.stderr)")
        #expect(back.stdout == again.stdout && back.out.split(separator: "\n").count == 5, "\(back.out)")
    }

    @Test("Versions, a store migration and detect are refused with exit 64, saying the source declares no VersionedSchema", .needsPython3)
    func noVersions() throws {
        let dir = try Self.app()
        let model = dir.path + "/Model.swift", input = dir.path + "/notes.jsonl"
        let versioned = try CLI.tripconv(input, "--model", model, "--target-version", "2.0.0", "--to", "jsonl")
        #expect(versioned.status == 64)
        #expect(versioned.stderr.hasPrefix("tripconv: \(model) declares no VersionedSchema"), "\(versioned.stderr)")
        #expect(versioned.stdout.isEmpty)
        let detect = try CLI.tripconv("detect", input, "--model", model)
        #expect(detect.status == 64)
        #expect(detect.stderr.contains("source without a VersionedSchema is one version"), "\(detect.stderr)")
        let store = dir.path + "/notes.sqlite"
        #expect(try CLI.tripconv(input, "--model", model, "-o", store).status == 0)
        let migrate = try CLI.tripconv("migrate", store, "--model", model)
        #expect(migrate.status == 64)
        #expect(migrate.stderr.contains("declares no VersionedSchema: one model with no versions"), "\(migrate.stderr)")
    }

    @Test("An attribute with a default, absent from an XML element (ElementTree) or a table's columns (Python's csv), takes its default as in JSON (was: refused)",
          .needsPython3)
    func defaultsInXMLAndTables() throws {
        let dir = try Self.app()
        let made = try CLI.python("""
            import csv, os, sys
            import xml.etree.ElementTree as ET
            root = ET.Element('objects')
            f = ET.SubElement(root, 'Folder')
            ET.SubElement(f, 'title').text = 'Work'
            e = ET.SubElement(root, 'Note', key='1')
            ET.SubElement(e, 'text').text = 'call Ann'
            ET.SubElement(ET.SubElement(e, 'folder'), 'ref').text = 'Work'
            ET.ElementTree(root).write(sys.argv[1], encoding='UTF-8', xml_declaration=True)
            os.mkdir(sys.argv[2])
            with open(sys.argv[2] + '/Folder.csv', 'w', newline='') as f:
                csv.writer(f).writerows([['title'], ['Work']])
            with open(sys.argv[2] + '/Note.csv', 'w', newline='') as f:
                csv.writer(f).writerows([['@key', 'text', 'folder'], ['1', 'call Ann', 'Work']])
            """, [dir.path + "/notes.xml", dir.path + "/tables"])
        #expect(made.status == 0, "\(made.stderr)")
        for input in ["notes.xml", "tables"] {
            let r = try CLI.tripconv(dir.path + "/" + input, "--model", dir.path + "/Model.swift", "--to", "jsonl")
            #expect(r.status == 0, "\(input): \(r.stderr)")
            let notes = try ExternalTool.python("""
                import json, sys
                print([(o['text'], o['pinned'], o['folder']) for o in map(json.loads, sys.stdin) if o['@entity'] == 'Note'])
                """, stdin: r.stdout)
            #expect(String(decoding: notes.stdout, as: UTF8.self) == "[('call Ann', False, 'Work')]\n", "\(input): \(notes.stderr)")
        }
    }

    @Test("samples/swift-model-notes runs as the README shows it: the same lines on stderr (but the time), the folders merged", .needsPython3)
    func readmeSample() throws {
        let readme = try String(contentsOf: CLI.root.appendingPathComponent("README.md"), encoding: .utf8)
        let command = "$ tripconv samples/swift-model-notes/notes.jsonl --model samples/swift-model-notes -v -o notes.json\n"
        let block = try #require(readme.range(of: command).map { readme[$0.upperBound...].prefix { $0 != "`" } })
        let dir = try CLI.temporaryDirectory()
        let out = dir.path + "/notes.json"
        let r = try CLI.tripconv("samples/swift-model-notes/notes.jsonl", "--model", "samples/swift-model-notes", "-v", "-o", out)
        #expect(r.status == 0, "\(r.stderr)")
        let untimed = { (text: Substring) in text.split(separator: "\n").map { $0.replacing(/; [0-9.]+ s$/, with: "") } }
        #expect(untimed(Substring(r.stderr)) == untimed(block), "\(r.stderr)")
        let checked = try CLI.python("""
            import json, sys
            d = json.load(open(sys.argv[1]))
            print([(f['title'], f['colour'], f['notes']) for f in d['Folder']], sorted({n['folder'] for n in d['Note']}))
            """, [out])
        #expect(checked.out == "[('Work', 'red', [1, 2, 4]), ('Home', None, [3])] ['Home', 'Work']\n", "\(checked.stderr)")
    }
}
